// rlscope-calibrate-cuda: one CUDA call per iteration in a timed loop, one
// of the micro-workloads `rlscope calibrate` runs with and without
// profiling to price each kind of event (README.md next to this file).
//
//   rlscope-calibrate-cuda --case NAME --iterations N [--burst B [--pause-ms P]]
//                                                       time N calls, print one JSON line
//   rlscope-calibrate-cuda --list                       the cases this machine can run
//   rlscope-calibrate-cuda --info                       the runtime, driver and device, as JSON
//
// The program is linked against libcudart.so.13 (the fake one's soname at
// build time) and carries no RPATH: the loader finds NVIDIA's runtime on a
// GPU machine, or the fake when LD_LIBRARY_PATH names its directory. Its
// calls go through its PLT exactly like torch's, so rlscope's preload
// interposes them the same way. The fake is told from NVIDIA's by the
// symbol rlscope_fake_cuda_runtime.
//
// The driver API (cuLaunchKernel) is not interposed by rlscope, only CUPTI
// sees it: its functions come from libcuda.so.1 (the fake provides them
// itself). The kernel is an empty one written in PTX below, loaded with
// cudaLibraryLoadData (CUDA >= 12, taken with dlsym so the fake need not
// have it) for cudaLaunchKernel and with cuModuleLoadData for
// cuLaunchKernel; on the fake any non-null function does.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>

#include "calibration/workloads/uncontended_timer.h"
#include "calibration/workloads/workload_args.h"
#include "preload/cuda_runtime_api_list.h"  // preload/: what rlscope interposes.

namespace {

using rlscope::calibration::UncontendedTimer;

constexpr const char* kUsage =
    "usage: rlscope-calibrate-cuda --case NAME --iterations N [--burst B [--pause-ms P]] | --list | --info\n"
    "Times N calls of one CUDA API (after a short untimed warm-up) and prints\n"
    "{\"case\", \"iterations\", \"elapsed_ns\", \"events_per_iteration\", ...} as one JSON line.\n"
    "--burst B: in bursts of B iterations, P ms apart (default 25), only the bursts timed.\n";

// An empty kernel, by hand: sm_80 PTX, which the driver JITs for any newer GPU.
constexpr const char kEmptyKernelPtx[] =
    ".version 8.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry rlscope_calibrate_empty()\n"
    "{\n"
    "\tret;\n"
    "}\n";
constexpr const char* kEmptyKernelName = "rlscope_calibrate_empty";

// Launches, copies, memsets and event records queue work on the GPU; left
// alone, a tight loop fills the launch queue and then waits inside the
// calls for the GPU. Every kSyncEvery iterations the loop drains the
// default stream (cudaStreamSynchronize, inside the timed loop, in the
// profiled and the unprofiled run alike; the JSON says how many). If the
// GPU's work per call outlasts the call itself, the loop still measures
// the GPU, not the call: the time spent in these drains is reported
// ("sync_ns", part of "elapsed_ns") so that it can be told apart. (On an
// H200 the drains took under 0.3 % of each loop: the calls are the
// bottleneck, an empty kernel's launch costing ~4 us of CPU.)
constexpr int64_t kSyncEvery = 1000;

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

std::string JsonString(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Whether rlscope's preload interposes `api` (its X-macro list).
bool Interposed(std::string_view api) {
#define RLSCOPE_CALIBRATE_IS(name, params, args) \
  if (api == #name) return true;
  RLSCOPE_CUDA_RUNTIME_APIS(RLSCOPE_CALIBRATE_IS)
#undef RLSCOPE_CALIBRATE_IS
  return false;
}

[[noreturn]] void Fail(const char* api, int code, const char* what) {
  fprintf(stderr, "rlscope-calibrate-cuda: %s failed: error %d (%s)\n", api, code, what);
  exit(1);
}

void Check(const char* api, cudaError_t error) {
  if (error != cudaSuccess) Fail(api, error, cudaGetErrorString(error));
}

void CheckDriver(const char* api, CUresult result) {
  if (result != CUDA_SUCCESS) Fail(api, result, "CUresult");
}

// ---- The runtime, the device, the kernels ----

struct Driver {
  decltype(&cuModuleLoadData) module_load_data = nullptr;
  decltype(&cuModuleGetFunction) module_get_function = nullptr;
  decltype(&cuLaunchKernel) launch_kernel = nullptr;
};

struct Environment {
  bool fake = false;
  int runtime_version = 0;
  int driver_version = 0;
  int device_count = 0;
  std::string device;
  std::string unusable;  // Why no case can run; empty when they can.
  // Set up by Prepare, for the cases that need them.
  const void* runtime_kernel = nullptr;  // For cudaLaunchKernel; null: case unavailable.
  std::string runtime_kernel_from;
  CUfunction driver_kernel = nullptr;  // For cuLaunchKernel; null: case unavailable.
  Driver driver;
  void* buffer = nullptr;  // 64 bytes of device memory.
  cudaEvent_t event = nullptr;
};

// On the fake, the address of anything non-null stands for a kernel.
void FakeKernelStandIn() {}

void Describe(Environment& env) {
  env.fake = dlsym(RTLD_DEFAULT, "rlscope_fake_cuda_runtime") != nullptr;
  if (env.fake) {
    // The fake busy-waits a nominal time in each call unless told not to;
    // calibration wants its calls as bare as possible (the fake's own cost
    // is the same with and without profiling, but it adds noise).
    setenv("RLSCOPE_FAKE_CUDART_SCALE", "0", /*overwrite=*/0);
  }
  cudaRuntimeGetVersion(&env.runtime_version);
  cudaDriverGetVersion(&env.driver_version);
  const cudaError_t count = cudaGetDeviceCount(&env.device_count);
  if (count != cudaSuccess) {
    env.device_count = 0;
    env.unusable = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(count);
    return;
  }
  if (env.device_count == 0) {
    env.unusable = "no CUDA device";
    return;
  }
  if (const cudaError_t set = cudaSetDevice(0); set != cudaSuccess) {
    env.unusable = std::string("cudaSetDevice(0): ") + cudaGetErrorString(set);
    return;
  }
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, 0) == cudaSuccess) {
    env.device = properties.name;
  }
}

template <typename Function>
Function Symbol(void* handle, const char* name) {
  return reinterpret_cast<Function>(dlsym(handle, name));
}

// The kernels and the buffers. A case whose kernel cannot be had is left
// out of --list; anything else that fails here is a failure.
void Prepare(Environment& env) {
  Check("cudaMalloc", cudaMalloc(&env.buffer, 64));
  Check("cudaEventCreateWithFlags", cudaEventCreateWithFlags(&env.event, cudaEventDisableTiming));

  // (RTLD_DEFAULT is a null pointer: no handle is no test here.)
  void* driver_library = env.fake ? RTLD_DEFAULT : dlopen("libcuda.so.1", RTLD_NOW);
  if (env.fake || driver_library != nullptr) {
    env.driver.module_load_data = Symbol<decltype(&cuModuleLoadData)>(driver_library, "cuModuleLoadData");
    env.driver.module_get_function = Symbol<decltype(&cuModuleGetFunction)>(driver_library, "cuModuleGetFunction");
    env.driver.launch_kernel = Symbol<decltype(&cuLaunchKernel)>(driver_library, "cuLaunchKernel");
  }
  // The runtime has made the device's primary context current on this
  // thread (cudaSetDevice), which the driver calls use.
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  if (env.driver.module_load_data != nullptr && env.driver.module_get_function != nullptr &&
      env.driver.launch_kernel != nullptr && env.driver.module_load_data(&module, kEmptyKernelPtx) == CUDA_SUCCESS &&
      env.driver.module_get_function(&function, module, kEmptyKernelName) == CUDA_SUCCESS) {
    env.driver_kernel = function;
  }

  if (env.fake) {
    env.runtime_kernel = reinterpret_cast<const void*>(&FakeKernelStandIn);
    env.runtime_kernel_from = "fake";
    return;
  }
  // cudaLaunchKernel takes a cudaKernel_t cast to const void*.
  auto library_load_data = Symbol<decltype(&cudaLibraryLoadData)>(RTLD_DEFAULT, "cudaLibraryLoadData");
  auto library_get_kernel = Symbol<decltype(&cudaLibraryGetKernel)>(RTLD_DEFAULT, "cudaLibraryGetKernel");
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
  if (library_load_data != nullptr && library_get_kernel != nullptr &&
      library_load_data(&library, kEmptyKernelPtx, nullptr, nullptr, 0, nullptr, nullptr, 0) == cudaSuccess &&
      library_get_kernel(&kernel, library, kEmptyKernelName) == cudaSuccess) {
    env.runtime_kernel = reinterpret_cast<const void*>(kernel);
    env.runtime_kernel_from = "cudaLibraryGetKernel";
  }
}

// ---- The cases ----

enum class CaseId {
  kGetDevice,
  kLaunchKernel,
  kMemsetAsync,
  kMemcpyAsync,
  kStreamSynchronize,
  kEventRecord,
  kCuLaunchKernel,
};

struct Case {
  CaseId id;
  const char* name;      // Also the API each iteration calls once.
  bool queues_gpu_work;  // Synchronised every kSyncEvery iterations.
};

constexpr Case kCases[] = {
    {CaseId::kGetDevice, "cudaGetDevice", false},
    {CaseId::kLaunchKernel, "cudaLaunchKernel", true},
    {CaseId::kMemsetAsync, "cudaMemsetAsync", true},
    {CaseId::kMemcpyAsync, "cudaMemcpyAsync", true},
    {CaseId::kStreamSynchronize, "cudaStreamSynchronize", false},
    {CaseId::kEventRecord, "cudaEventRecord", true},
    {CaseId::kCuLaunchKernel, "cuLaunchKernel", true},
};

bool Available(const Environment& env, const Case& c) {
  if (!env.unusable.empty()) return false;
  if (c.id == CaseId::kLaunchKernel) return env.runtime_kernel != nullptr;
  if (c.id == CaseId::kCuLaunchKernel) return env.driver_kernel != nullptr;
  return true;
}

// What a run of the loop adds up.
struct Totals {
  UncontendedTimer timer;  // Inside the timed bursts.
  int64_t bursts = 0;
  int64_t syncs = 0;    // Periodic drains made inside them...
  int64_t sync_ns = 0;  // ...and the time they took.
};

// `iterations` calls of `call`, the `first`-th (counting from 1) to the
// last of the run, with the periodic drain when `sync`.
template <typename Call>
void Repeat(int64_t first, int64_t iterations, bool sync, Totals& totals, Call call) {
  for (int64_t i = first; i < first + iterations; ++i) {
    call();
    if (sync && i % kSyncEvery == 0) {
      const int64_t begin = NowNs();
      Check("cudaStreamSynchronize", cudaStreamSynchronize(nullptr));
      totals.sync_ns += NowNs() - begin;
      ++totals.syncs;
    }
  }
}

// Iterations [first, first + iterations) of case `c`: one call of its API
// each, on the legacy default stream.
void Loop(const Environment& env, const Case& c, int64_t first, int64_t iterations, Totals& totals) {
  const bool sync = c.queues_gpu_work;
  cudaStream_t stream = nullptr;
  char* bytes = static_cast<char*>(env.buffer);
  switch (c.id) {
    case CaseId::kGetDevice:
      return Repeat(first, iterations, sync, totals, [&] {
        int device = -1;
        Check("cudaGetDevice", cudaGetDevice(&device));
      });
    case CaseId::kLaunchKernel:
      return Repeat(first, iterations, sync, totals, [&] {
        Check("cudaLaunchKernel", cudaLaunchKernel(env.runtime_kernel, dim3(1), dim3(1), nullptr, 0, stream));
      });
    case CaseId::kMemsetAsync:
      return Repeat(first, iterations, sync, totals,
                    [&] { Check("cudaMemsetAsync", cudaMemsetAsync(bytes, 0, 4, stream)); });
    case CaseId::kMemcpyAsync:
      return Repeat(first, iterations, sync, totals, [&] {
        Check("cudaMemcpyAsync", cudaMemcpyAsync(bytes + 32, bytes, 4, cudaMemcpyDeviceToDevice, stream));
      });
    case CaseId::kStreamSynchronize:
      return Repeat(first, iterations, sync, totals,
                    [&] { Check("cudaStreamSynchronize", cudaStreamSynchronize(stream)); });
    case CaseId::kEventRecord:
      return Repeat(first, iterations, sync, totals,
                    [&] { Check("cudaEventRecord", cudaEventRecord(env.event, stream)); });
    case CaseId::kCuLaunchKernel:
      return Repeat(first, iterations, sync, totals, [&] {
        CheckDriver("cuLaunchKernel",
                    env.driver.launch_kernel(env.driver_kernel, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
      });
  }
}

// All `iterations` of case `c`, timed: at once, or (burst > 0) in bursts
// of `burst` with an untimed pause of `pause_ms` before each. The pauses
// let rlscope's flusher empty the thread's event ring, so that every event
// takes the recording path: a ring that fills drops events, which is
// cheaper and would price the wrong thing.
void TimedLoop(const Environment& env, const Case& c, int64_t iterations, int64_t burst, int pause_ms, Totals& totals) {
  for (int64_t done = 0; done < iterations;) {
    const int64_t n = burst > 0 ? std::min(burst, iterations - done) : iterations - done;
    if (burst > 0) {
      const timespec pause{pause_ms / 1000, (pause_ms % 1000) * 1000000L};
      nanosleep(&pause, nullptr);
    }
    totals.timer.Time(n, [&](int64_t first, int64_t count) { Loop(env, c, done + first + 1, count, totals); });
    done += n;
    ++totals.bursts;
  }
}

std::string InfoFields(const Environment& env) {
  std::string out = "\"runtime\": " + JsonString(env.fake ? "fake" : "real");
  out += ", \"runtime_version\": " + std::to_string(env.runtime_version);
  out += ", \"driver_version\": " + std::to_string(env.driver_version);
  out += ", \"device_count\": " + std::to_string(env.device_count);
  out += ", \"device\": " + JsonString(env.device);
  out += ", \"usable\": " + std::string(env.unusable.empty() ? "true" : "false");
  if (!env.unusable.empty()) out += ", \"error\": " + JsonString(env.unusable);
  return out;
}

int Usage(const std::string& problem) {
  return rlscope::calibration::UsageError("rlscope-calibrate-cuda", kUsage, problem);
}

}  // namespace

int main(int argc, char** argv) {
  rlscope::calibration::WorkloadArgs args;
  if (auto exit_code =
          rlscope::calibration::ParseOrExit(argc, argv, /*accept_info=*/true, "rlscope-calibrate-cuda", kUsage, args)) {
    return *exit_code;
  }
  if (args.list + args.info + !args.case_name.empty() != 1) return Usage("give one of --case, --list, --info");
  const Case* selected = nullptr;
  if (!args.case_name.empty()) {
    for (const Case& c : kCases) {
      if (args.case_name == c.name) selected = &c;
    }
    if (selected == nullptr) return Usage("unknown case '" + args.case_name + "'");
    if (args.iterations < 0) return Usage("--case needs --iterations N");
  }

  Environment env;
  Describe(env);
  if (args.info) {
    printf("{%s}\n", InfoFields(env).c_str());
    return 0;
  }
  if (!env.unusable.empty()) {
    // No case runs here: --list is empty, a case fails.
    fprintf(stderr, "rlscope-calibrate-cuda: %s runtime, no usable device: %s\n", env.fake ? "fake" : "real",
            env.unusable.c_str());
    return args.list ? 0 : 1;
  }
  Prepare(env);
  if (args.list) {
    for (const Case& c : kCases) {
      if (Available(env, c)) printf("%s\n", c.name);
    }
    return 0;
  }
  if (!Available(env, *selected)) {
    fprintf(stderr, "rlscope-calibrate-cuda: case %s is not available here (no kernel could be loaded)\n",
            selected->name);
    return 1;
  }

  const int64_t warmup = std::min<int64_t>(args.iterations / 10, 10000);
  Totals warmup_totals;
  TimedLoop(env, *selected, warmup, args.burst, static_cast<int>(args.pause_ms), warmup_totals);
  // Drains outside the timed loop use cudaDeviceSynchronize, so that the
  // case's own API is called exactly warm-up + N times.
  Check("cudaDeviceSynchronize", cudaDeviceSynchronize());
  Totals totals;
  TimedLoop(env, *selected, args.iterations, args.burst, static_cast<int>(args.pause_ms), totals);
  Check("cudaDeviceSynchronize", cudaDeviceSynchronize());

  std::string line = "{\"case\": " + JsonString(selected->name);
  line += ", \"iterations\": " + std::to_string(args.iterations);
  line += ", " + totals.timer.JsonFields();
  line += ", \"events_per_iteration\": 1";
  line += ", \"warmup_iterations\": " + std::to_string(warmup);
  line += ", \"interposed\": " + std::string(Interposed(selected->name) ? "true" : "false");
  if (args.burst > 0) {
    line += ", \"burst\": " + std::to_string(args.burst) + ", \"bursts\": " + std::to_string(totals.bursts) +
            ", \"pause_ms\": " + std::to_string(args.pause_ms);
  }
  if (selected->queues_gpu_work) {
    line += ", \"sync_every\": " + std::to_string(kSyncEvery) + ", \"syncs\": " + std::to_string(totals.syncs) +
            ", \"sync_ns\": " + std::to_string(totals.sync_ns);
  }
  if (selected->id == CaseId::kLaunchKernel) line += ", \"kernel\": " + JsonString(env.runtime_kernel_from);
  line += ", " + InfoFields(env) + "}";
  printf("%s\n", line.c_str());
  return 0;
}
