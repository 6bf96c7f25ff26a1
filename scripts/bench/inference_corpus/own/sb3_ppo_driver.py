"""Our driver for Stable-Baselines3's PPO on Gymnasium's CartPole-v1 (both
fetched at run time, see inference_accuracy.py prepare-sources)."""
import sys

from stable_baselines3 import PPO

model = PPO("MlpPolicy", "CartPole-v1", n_steps=256, batch_size=64, n_epochs=4, seed=0, device="cpu", verbose=1)
model.learn(total_timesteps=int(sys.argv[1]) if len(sys.argv) > 1 else 1024)
