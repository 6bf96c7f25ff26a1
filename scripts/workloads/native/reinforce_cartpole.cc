// reinforce_cartpole: a native RL training program - no Python - for
// rlscope to profile: REINFORCE (policy gradient with a baseline) in
// libtorch's C++ API, on the same MuJoCo cart-pole as the Python workloads
// (../cartpole.xml) driven through MuJoCo's C API.
//
//   reinforce_cartpole [--steps N] [--seed S] [--model PATH] [--quiet]
//
// The last line is always
//   reinforce_cartpole: steps=N wall_s=T final_return=R
// where final_return is the mean return of 5 greedy evaluation episodes
// after training (deterministic for a given seed on one machine).
//
// Names follow what rlscope's default rules look for in native stacks:
// CartPoleEnv::Step/Reset (simulation), Agent::SelectAction (inference),
// Agent::Update (backprop).
#include <mujoco/mujoco.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int kSubsteps = 2;  // 2 x 10 ms per environment step.
constexpr int kMaxEpisodeSteps = 500;
constexpr double kAngleLimit = 12 * M_PI / 180;
constexpr double kXLimit = 2.4;
constexpr int kEpisodesPerUpdate = 4;
constexpr int kEvaluationEpisodes = 5;

struct Options {
  int steps = 20000;
  int seed = 0;
  std::string model = RLSCOPE_CARTPOLE_XML;
  bool quiet = false;
};

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        fprintf(stderr, "reinforce_cartpole: %s needs a value\n", arg.c_str());
        exit(2);
      }
      return argv[++i];
    };
    if (arg == "--steps") {
      options.steps = atoi(value().c_str());
    } else if (arg == "--seed") {
      options.seed = atoi(value().c_str());
    } else if (arg == "--model") {
      options.model = value();
    } else if (arg == "--quiet") {
      options.quiet = true;
    } else {
      fprintf(stderr, "reinforce_cartpole: unknown argument %s\n", arg.c_str());
      exit(2);
    }
  }
  if (options.steps < 1) {
    fprintf(stderr, "reinforce_cartpole: --steps must be positive\n");
    exit(2);
  }
  return options;
}

}  // namespace

class CartPoleEnv {
 public:
  CartPoleEnv(const std::string& path, unsigned seed) : rng_(seed) {
    char error[1000] = "";
    model_ = mj_loadXML(path.c_str(), nullptr, error, sizeof(error));
    if (model_ == nullptr) {
      fprintf(stderr, "reinforce_cartpole: cannot load %s: %s\n", path.c_str(), error);
      exit(1);
    }
    data_ = mj_makeData(model_);
  }
  ~CartPoleEnv() {
    mj_deleteData(data_);
    mj_deleteModel(model_);
  }

  __attribute__((noinline)) std::vector<float> Reset() {
    mj_resetData(model_, data_);
    std::uniform_real_distribution<double> noise(-0.05, 0.05);
    for (int i = 0; i < 2; ++i) data_->qpos[i] = noise(rng_);
    for (int i = 0; i < 2; ++i) data_->qvel[i] = noise(rng_);
    mj_forward(model_, data_);
    steps_ = 0;
    return Observation();
  }

  // Step: returns whether the episode ended.
  __attribute__((noinline)) bool Step(int action, std::vector<float>* observation) {
    data_->ctrl[0] = action == 1 ? 1.0 : -1.0;
    for (int i = 0; i < kSubsteps; ++i) mj_step(model_, data_);
    ++steps_;
    *observation = Observation();
    return std::abs(data_->qpos[0]) > kXLimit || std::abs(data_->qpos[1]) > kAngleLimit || steps_ >= kMaxEpisodeSteps;
  }

 private:
  std::vector<float> Observation() const {
    return {static_cast<float>(data_->qpos[0]), static_cast<float>(data_->qvel[0]), static_cast<float>(data_->qpos[1]),
            static_cast<float>(data_->qvel[1])};
  }

  mjModel* model_ = nullptr;
  mjData* data_ = nullptr;
  std::mt19937 rng_;
  int steps_ = 0;
};

class Agent {
 public:
  explicit Agent(unsigned seed)
      : policy_(torch::nn::Linear(4, 32), torch::nn::Tanh(), torch::nn::Linear(32, 2)),
        optimizer_(policy_->parameters(), torch::optim::AdamOptions(1e-2)),
        rng_(seed) {}

  // SelectAction: samples (or, greedy, picks) an action; keeps its
  // log-probability for the update.
  __attribute__((noinline)) int SelectAction(const std::vector<float>& observation, bool greedy) {
    torch::Tensor input = torch::tensor(observation).unsqueeze(0);
    torch::Tensor log_probs = torch::log_softmax(policy_->forward(input), 1).squeeze(0);
    int action;
    if (greedy) {
      action = log_probs.argmax().item<int>();
    } else {
      const double p1 = std::exp(log_probs[1].item<double>());
      action = std::uniform_real_distribution<double>(0, 1)(rng_) < p1 ? 1 : 0;
      episode_log_probs_.push_back(log_probs[action]);
    }
    return action;
  }

  void EndEpisode(int length) {
    // Reward 1 per step, no discount: the return-to-go of step t is length - t.
    for (int t = 0; t < length; ++t) returns_.push_back(static_cast<float>(length - t));
    log_probs_.insert(log_probs_.end(), episode_log_probs_.begin(), episode_log_probs_.end());
    episode_log_probs_.clear();
  }

  // Update: one policy-gradient step on the collected episodes.
  __attribute__((noinline)) void Update() {
    torch::Tensor returns = torch::tensor(returns_);
    returns = (returns - returns.mean()) / (returns.std() + 1e-6);  // Baseline and scale.
    torch::Tensor loss = -(torch::stack(log_probs_) * returns).sum() / static_cast<double>(kEpisodesPerUpdate);
    optimizer_.zero_grad();
    loss.backward();
    optimizer_.step();
    returns_.clear();
    log_probs_.clear();
  }

 private:
  torch::nn::Sequential policy_;
  torch::optim::Adam optimizer_;
  std::mt19937 rng_;
  std::vector<torch::Tensor> episode_log_probs_, log_probs_;
  std::vector<float> returns_;
};

int main(int argc, char** argv) {
  const Options options = ParseOptions(argc, argv);
  torch::manual_seed(options.seed);
  torch::set_num_threads(1);  // Reproducible, and no pool fighting the simulator.
  CartPoleEnv env(options.model, static_cast<unsigned>(options.seed));
  Agent agent(static_cast<unsigned>(options.seed) + 1);
  const auto start = std::chrono::steady_clock::now();
  int steps = 0, episodes = 0;
  std::vector<float> observation;
  while (steps < options.steps) {
    observation = env.Reset();
    int length = 0;
    bool done = false;
    while (!done && steps < options.steps) {
      done = env.Step(agent.SelectAction(observation, false), &observation);
      ++length;
      ++steps;
    }
    agent.EndEpisode(length);
    if (++episodes % kEpisodesPerUpdate == 0) {
      agent.Update();
      if (!options.quiet && episodes % (kEpisodesPerUpdate * 25) == 0) {
        printf("reinforce_cartpole: step %d episodes %d last length %d\n", steps, episodes, length);
      }
    }
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double total = 0;
  for (int e = 0; e < kEvaluationEpisodes; ++e) {
    observation = env.Reset();
    int length = 0;
    bool done = false;
    while (!done) {
      done = env.Step(agent.SelectAction(observation, true), &observation);
      ++length;
    }
    total += length;
  }
  printf("reinforce_cartpole: steps=%d wall_s=%.3f final_return=%.1f\n", options.steps, wall_s,
         total / kEvaluationEpisodes);
  return 0;
}
