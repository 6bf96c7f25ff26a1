"""Our driver for Stable-Baselines3's DQN on Gymnasium's CartPole-v1 (both
fetched at run time, see inference_accuracy.py prepare-sources)."""
import sys

from stable_baselines3 import DQN

model = DQN("MlpPolicy", "CartPole-v1", learning_starts=200, train_freq=1, batch_size=64, seed=0, device="cpu")
model.learn(total_timesteps=int(sys.argv[1]) if len(sys.argv) > 1 else 1500)
