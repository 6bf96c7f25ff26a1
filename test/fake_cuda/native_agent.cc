// A native (C++, no Python, no NVTX) RL-shaped program against the fake CUDA
// runtime: operations can only come from its native call stacks. Functions
// are named as the default rules expect (CartPoleEnv::Step, Agent::
// SelectAction, Agent::Update) and kept out of line so they appear in
// stacks. It measures how long it spends in each operation (the ground
// truth) and prints "simulation_ns=N inference_ns=N backprop_ns=N
// preempted_ns=N", the last its run delay over the loop
// (test/support/run_delay.h): a preemption stretches a stretch between two
// stack samples, which the report then cannot attribute.
//
//   native_agent [--steps N]
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "test/support/run_delay.h"

namespace {

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

void SpinCpu(int64_t ns) {
  const int64_t until = NowNs() + ns;
  while (NowNs() < until) {
  }
}

int g_kernel;
char g_host[64];
void* g_device = nullptr;

}  // namespace

class CartPoleEnv {
 public:
  __attribute__((noinline)) void Step() {
    cudaMemcpy(g_device, g_host, 64, cudaMemcpyHostToDevice);  // Observation to the GPU.
    SpinCpu(300000);
    cudaMemcpy(g_device, g_host, 64, cudaMemcpyHostToDevice);
  }
};

class Agent {
 public:
  __attribute__((noinline)) int SelectAction() {
    cudaLaunchKernel(&g_kernel, dim3(1), dim3(32), nullptr, 0, nullptr);
    SpinCpu(200000);
    cudaMemcpy(g_host, g_device, 64, cudaMemcpyDeviceToHost);
    return 0;
  }
  __attribute__((noinline)) void Update() {
    for (int i = 0; i < 4; ++i) {
      cudaLaunchKernel(&g_kernel, dim3(1), dim3(32), nullptr, 0, nullptr);
      SpinCpu(100000);
    }
    cudaStreamSynchronize(nullptr);
  }
};

int main(int argc, char** argv) {
  int steps = 300;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--steps") steps = atoi(argv[i + 1]);
  }
  cudaMalloc(&g_device, 1 << 20);
  CartPoleEnv env;
  Agent agent;
  int64_t simulation_ns = 0, inference_ns = 0, backprop_ns = 0;
  const long long run_delay_before = RlscopeTestRunDelayNs();
  for (int step = 0; step < steps; ++step) {
    int64_t start = NowNs();
    agent.SelectAction();
    inference_ns += NowNs() - start;
    start = NowNs();
    env.Step();
    simulation_ns += NowNs() - start;
    if (step % 2 == 1) {
      start = NowNs();
      agent.Update();
      backprop_ns += NowNs() - start;
    }
  }
  const long long run_delay_after = RlscopeTestRunDelayNs();
  const long long preempted_ns = run_delay_before >= 0 ? run_delay_after - run_delay_before : 0;
  cudaFree(g_device);
  printf("simulation_ns=%lld inference_ns=%lld backprop_ns=%lld preempted_ns=%lld\n",
         static_cast<long long>(simulation_ns), static_cast<long long>(inference_ns),
         static_cast<long long>(backprop_ns), preempted_ns);
  return 0;
}
