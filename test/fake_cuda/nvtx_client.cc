// A stand-in for a GPU training program, for tests and the demo without a
// GPU: NVTX ranges mark its operations, CUDA runtime calls go to whatever
// libcudart.so.13 it is run with (the fake one in tests).
//
//   nvtx_client [--steps N] [--threads K] [--fork] [--exit-code N]
//               [--raise SIGNAL_NUMBER] [--domain-steps N]
//               [--library-launches N] [--helper-launches N] [--wait-for FILE]
//               [--window KIND FIRST COUNT]
//
// --window KIND FIRST COUNT: marks two capture windows of COUNT steps each,
// from step FIRST and from step FIRST + 2 COUNT, by KIND: "nvtx" (a push
// range "captured" around each, with a second one nested around the first
// window's first step), "nvtx-startend" (a start/end range "captured"),
// "profiler" (cudaProfilerStart/Stop) or "driver-profiler"
// (cuProfilerStart/Stop, no runtime call around them).
// --helper-launches N: inside each step's "backprop", the main thread hands
// work to a helper thread of no operation of its own (as torch's autograd
// engine does) and waits: the helper makes N kernel launches, a graph
// launch and a library (driver) launch.
// --wait-for FILE: before exiting, wait until FILE exists (at most 60 s;
// then it exits 4): lets a test wait for something that runs alongside.
// Each step: "inference" (3 launches + 1 copy, then N kernels a library
// launches through the driver directly, like cuBLAS: the fake's
// rlscope_fake_library_gemm), "backprop" (2 launches, a
// nested "optimizer" range with a memset and 2 launches, then a sync),
// "simulation" (100 us of CPU work, no CUDA), and a start/end "replay" range
// with one copy. Every 10th step allocates and frees outside any range.
#include <cuda.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// Provided by the fake libcudart.so.13 so it can account per operation; a
// weak reference so the client also runs against NVIDIA's real library.
extern "C" void rlscope_fake_set_operation(const char* operation) __attribute__((weak));
extern "C" void rlscope_fake_library_gemm(int kernels) __attribute__((weak));
// The driver's profiler API (libcuda.so.1; the fake libcudart.so.13 has it).
extern "C" CUresult cuProfilerStart() __attribute__((weak));
extern "C" CUresult cuProfilerStop() __attribute__((weak));

namespace {

void SetOperation(const char* operation) {
  if (rlscope_fake_set_operation != nullptr) rlscope_fake_set_operation(operation);
}

// An operation: an NVTX push/pop range, mirrored to the fake's accounting.
class Operation {
 public:
  Operation(const char* name, const char* outer) : outer_(outer) {
    nvtxRangePushA(name);
    SetOperation(name);
  }
  ~Operation() {
    nvtxRangePop();
    SetOperation(outer_);
  }

 private:
  const char* outer_;
};

void SpinCpu(int64_t ns) {
  timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000000LL + (now.tv_nsec - start.tv_nsec) < ns);
}

void Launch() {
  static int kernel_stub;
  cudaLaunchKernel(&kernel_stub, dim3(1), dim3(32), nullptr, 0, nullptr);
}

// BackwardHelper: a thread with no operation of its own that runs the
// main thread's backward work while the main thread waits for it.
class BackwardHelper {
 public:
  explicit BackwardHelper(int launches) : launches_(launches), thread_([this] { Loop(); }) {}
  ~BackwardHelper() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  // Run: one round of work on the helper; returns when it is done.
  void Run() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++requested_;
    wake_.notify_all();
    done_.wait(lock, [this] { return finished_ == requested_; });
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stop_ || finished_ < requested_; });
      if (stop_) return;
      lock.unlock();
      SetOperation("backprop");  // The fake's ledger only: no NVTX range here.
      for (int i = 0; i < launches_; ++i) Launch();
      static int graph_stub;
      cudaGraphLaunch(reinterpret_cast<cudaGraphExec_t>(&graph_stub), nullptr);
      if (rlscope_fake_library_gemm != nullptr) rlscope_fake_library_gemm(1);
      SetOperation("(none)");
      lock.lock();
      ++finished_;
      done_.notify_all();
    }
  }

  const int launches_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  long requested_ = 0, finished_ = 0;
  bool stop_ = false;
  std::thread thread_;  // Last: starts once the rest is set up.
};

void TrainingStep(int step, void* device, void* host, int library_launches, BackwardHelper* helper) {
  {
    Operation op("inference", "(none)");
    for (int i = 0; i < 3; ++i) Launch();
    cudaMemcpy(host, device, 64, cudaMemcpyDeviceToHost);
    if (library_launches > 0 && rlscope_fake_library_gemm != nullptr) rlscope_fake_library_gemm(library_launches);
  }
  {
    Operation op("backprop", "(none)");
    Launch();
    Launch();
    {
      Operation inner("optimizer", "backprop");
      cudaMemsetAsync(device, 0, 64, nullptr);
      Launch();
      Launch();
    }
    if (helper != nullptr) helper->Run();
    cudaStreamSynchronize(nullptr);
  }
  {
    Operation op("simulation", "(none)");
    SpinCpu(100000);
  }
  nvtxRangeId_t replay = nvtxRangeStartA("replay");
  SetOperation("replay");
  cudaMemcpy(device, host, 64, cudaMemcpyHostToDevice);
  nvtxRangeEnd(replay);
  SetOperation("(none)");
  if (step % 10 == 0) {
    void* scratch = nullptr;
    cudaMalloc(&scratch, 1 << 20);
    cudaFree(scratch);
  }
}

// Ranges in two named NVTX domains: a library's internal one (ignored by
// rlscope unless selected) and a user's (selected with --nvtx-domain).
void DomainRanges(int steps) {
  nvtxDomainHandle_t library = nvtxDomainCreateA("LibraryInternals");
  nvtxDomainHandle_t mine = nvtxDomainCreateA("MyTraining");
  nvtxEventAttributes_t attributes = {};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  for (int step = 0; step < steps; ++step) {
    attributes.message.ascii = "library_op";
    nvtxDomainRangePushEx(library, &attributes);
    Launch();
    nvtxDomainRangePop(library);
    attributes.message.ascii = "domain_op";
    nvtxDomainRangePushEx(mine, &attributes);
    Launch();
    nvtxDomainRangePop(mine);
  }
}

// CaptureMarks: the --window marks around the steps.
class CaptureMarks {
 public:
  CaptureMarks(std::string kind, int first, int count) : kind_(std::move(kind)), first_(first), count_(count) {}
  bool Valid() const {
    return kind_.empty() ||
           ((kind_ == "nvtx" || kind_ == "nvtx-startend" || kind_ == "profiler" || kind_ == "driver-profiler") &&
            first_ >= 0 && count_ > 0);
  }
  void BeforeStep(int step) {
    if (kind_.empty()) return;
    if (step == first_ || step == first_ + 2 * count_) Begin();
    if (kind_ == "nvtx" && step == first_) nvtxRangePushA("captured");  // Nested: must not close the window.
  }
  void AfterStep(int step) {
    if (kind_.empty()) return;
    if (kind_ == "nvtx" && step == first_) nvtxRangePop();
    if (step == first_ + count_ - 1 || step == first_ + 3 * count_ - 1) End();
  }

 private:
  void Begin() {
    if (kind_ == "nvtx") nvtxRangePushA("captured");
    if (kind_ == "nvtx-startend") range_ = nvtxRangeStartA("captured");
    if (kind_ == "profiler") cudaProfilerStart();
    if (kind_ == "driver-profiler" && cuProfilerStart != nullptr) cuProfilerStart();
  }
  void End() {
    if (kind_ == "nvtx") nvtxRangePop();
    if (kind_ == "nvtx-startend") nvtxRangeEnd(range_);
    if (kind_ == "profiler") cudaProfilerStop();
    if (kind_ == "driver-profiler" && cuProfilerStop != nullptr) cuProfilerStop();
  }

  const std::string kind_;
  const int first_, count_;
  nvtxRangeId_t range_ = 0;
};

void Worker(int launches) {
  Operation op("worker", "(none)");
  for (int i = 0; i < launches; ++i) Launch();
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 100, threads = 0, exit_code = 0, raise_signal = 0, domain_steps = 0, library_launches = 0,
      helper_launches = 0;
  bool fork_child = false;
  std::string wait_for, window_kind;
  int window_first = 0, window_count = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&] { return i + 1 < argc ? atoi(argv[++i]) : 0; };
    if (arg == "--steps")
      steps = value();
    else if (arg == "--threads")
      threads = value();
    else if (arg == "--exit-code")
      exit_code = value();
    else if (arg == "--raise")
      raise_signal = value();
    else if (arg == "--domain-steps")
      domain_steps = value();
    else if (arg == "--library-launches")
      library_launches = value();
    else if (arg == "--helper-launches")
      helper_launches = value();
    else if (arg == "--fork")
      fork_child = true;
    else if (arg == "--wait-for" && i + 1 < argc)
      wait_for = argv[++i];
    else if (arg == "--window" && i + 3 < argc) {
      window_kind = argv[++i];
      window_first = atoi(argv[++i]);
      window_count = atoi(argv[++i]);
    } else {
      fprintf(stderr, "nvtx_client: unknown argument %s\n", arg.c_str());
      return 2;
    }
  }
  CaptureMarks marks(window_kind, window_first, window_count);
  if (!marks.Valid()) {
    fprintf(stderr,
            "nvtx_client: --window wants nvtx, nvtx-startend, profiler or driver-profiler, FIRST >= 0 and "
            "COUNT > 0\n");
    return 2;
  }
  void* device = nullptr;
  cudaMalloc(&device, 1 << 20);
  char host[64] = {};

  pid_t child = -1;
  if (fork_child) {
    child = fork();
    if (child == 0) {
      for (int step = 0; step < steps / 2; ++step) {
        Operation op("child_step", "(none)");
        Launch();
        cudaMemcpy(host, device, 64, cudaMemcpyDeviceToHost);
      }
      exit(0);  // exit(), not _exit(): the child's profile must be flushed.
    }
  }
  {
    std::unique_ptr<BackwardHelper> helper;
    if (helper_launches > 0) helper = std::make_unique<BackwardHelper>(helper_launches);
    for (int step = 0; step < steps; ++step) {
      marks.BeforeStep(step);
      TrainingStep(step, device, host, library_launches, helper.get());
      marks.AfterStep(step);
    }
  }
  DomainRanges(domain_steps);
  // Workers run after the loop, while the main thread waits: the fake
  // busy-waits, and busy threads outnumbering cores would let preemption
  // land between rlscope's timestamps and the fake's own (skewing the
  // tests' ground truth, not rlscope).
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back(Worker, 50);
  for (std::thread& worker : workers) worker.join();
  if (child > 0) waitpid(child, nullptr, 0);
  if (!wait_for.empty()) {
    int waited_ms = 0;
    for (; access(wait_for.c_str(), F_OK) != 0 && waited_ms < 60000; waited_ms += 10) usleep(10000);
    if (waited_ms >= 60000) {
      fprintf(stderr, "nvtx_client: %s did not appear within 60 s\n", wait_for.c_str());
      return 4;
    }
  }
  cudaFree(device);
  printf("nvtx_client: %d steps done\n", steps);
  fflush(stdout);
  if (raise_signal != 0) raise(raise_signal);
  return exit_code;
}
