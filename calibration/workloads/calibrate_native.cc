// rlscope-calibrate-native: the native micro-workloads `rlscope calibrate`
// runs with and without profiling to price simulator trampolines and NVTX
// ranges (README.md next to this file).
//
//   rlscope-calibrate-native --case NAME --iterations N [--burst B [--pause-ms P]]
//                                                         time N iterations, print one JSON line
//   rlscope-calibrate-native --list                       the cases this build can run
//
// Cases:
//   trampoline         rlscope_calibrate_step() of librlscope_calibrate_sim.so,
//                      through this program's PLT: 1 hooked call per iteration
//   trampoline_nested  rlscope_calibrate_outer(), which calls back into this
//                      program, which calls rlscope_calibrate_inner() through
//                      its PLT: 2 hooked calls per iteration, the second one
//                      nested in the first (rlscope records only the outer)
//   nvtx_range         nvtxRangePushA + nvtxRangePop (2 events per iteration)
//   process            nothing (--iterations 0): process start and exit are
//                      measured from outside
// The trampoline cases are hooked only when rlscope runs with
// --sim '*librlscope_calibrate_sim*:rlscope_calibrate_*'.
//
// --burst B runs the iterations in bursts of B, each after an untimed pause
// of P ms (default 25, longer than the flusher's 20 ms period), and times
// only the bursts: at millions of events a second rlscope's per-thread ring
// fills and drops events, a cheaper path than recording them; bursts that
// fit in half the ring (16384 records) keep every event on the recording
// path.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#if RLSCOPE_CALIBRATE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

#include "calibration/workloads/uncontended_timer.h"
#include "calibration/workloads/workload_args.h"

// librlscope_calibrate_sim.so (calibrate_sim.cc).
extern "C" int rlscope_calibrate_step(int x);
extern "C" int rlscope_calibrate_outer(int (*callback)(int), int x);
extern "C" int rlscope_calibrate_inner(int x);

namespace {

using rlscope::calibration::UncontendedTimer;

constexpr const char* kUsage =
    "usage: rlscope-calibrate-native --case NAME --iterations N [--burst B [--pause-ms P]] | --list\n"
    "Times N iterations of one hooked call (after a short untimed warm-up) and prints\n"
    "{\"case\", \"iterations\", \"elapsed_ns\", \"events_per_iteration\", ...} as one JSON line.\n"
    "--burst B: in bursts of B iterations, P ms apart (default 25), only the bursts timed.\n";

// Results feed this, so no call can be dropped as unused.
volatile int g_sink;

// The program's side of trampoline_nested: its call goes through this
// program's PLT/GOT, which rlscope patches (the simulator library's is not).
int CallInner(int x) { return rlscope_calibrate_inner(x); }

enum class CaseId { kTrampoline, kTrampolineNested, kNvtxRange, kProcess };

struct Case {
  CaseId id;
  const char* name;
  int events_per_iteration;
  const char* extra;  // More JSON fields, or "".
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
    {CaseId::kTrampoline, "trampoline", 1, ", \"function\": \"rlscope_calibrate_step\""},
    // "nested": hooked calls per iteration made inside another (not recorded).
    {CaseId::kTrampolineNested, "trampoline_nested", 2,
     ", \"nested\": 1, \"function\": \"rlscope_calibrate_outer\", \"nested_function\": \"rlscope_calibrate_inner\""},
#if RLSCOPE_CALIBRATE_NVTX
    {CaseId::kNvtxRange, "nvtx_range", 2, ", \"range\": \"rlscope-calibrate\""},
#endif
    {CaseId::kProcess, "process", 0, ""},
  };
  return cases;
}

void Loop(CaseId id, int64_t iterations) {
  int sink = 0;
  switch (id) {
    case CaseId::kTrampoline:
      for (int64_t i = 0; i < iterations; ++i) sink += rlscope_calibrate_step(static_cast<int>(i));
      break;
    case CaseId::kTrampolineNested:
      for (int64_t i = 0; i < iterations; ++i) sink += rlscope_calibrate_outer(&CallInner, static_cast<int>(i));
      break;
    case CaseId::kNvtxRange:
#if RLSCOPE_CALIBRATE_NVTX
      for (int64_t i = 0; i < iterations; ++i) {
        sink += nvtxRangePushA("rlscope-calibrate");
        sink += nvtxRangePop();
      }
#endif
      break;
    case CaseId::kProcess: break;
  }
  g_sink = sink;
}

// All `iterations` of `id`: at once, or in bursts of `burst` after untimed
// pauses, timed by `timer` inside the bursts; counts them in *bursts.
void TimedLoop(CaseId id, int64_t iterations, int64_t burst, int64_t pause_ms, UncontendedTimer& timer,
               int64_t* bursts) {
  for (int64_t done = 0; done < iterations;) {
    const int64_t n = burst > 0 ? std::min(burst, iterations - done) : iterations - done;
    if (burst > 0) {
      const timespec pause{pause_ms / 1000, (pause_ms % 1000) * 1000000L};
      nanosleep(&pause, nullptr);
    }
    timer.Time(n, [&](int64_t, int64_t count) { Loop(id, count); });
    done += n;
    ++*bursts;
  }
}

int Usage(const std::string& problem) {
  return rlscope::calibration::UsageError("rlscope-calibrate-native", kUsage, problem);
}

}  // namespace

int main(int argc, char** argv) {
  rlscope::calibration::WorkloadArgs args;
  if (auto exit_code = rlscope::calibration::ParseOrExit(argc, argv, /*accept_info=*/false, "rlscope-calibrate-native",
                                                         kUsage, args)) {
    return *exit_code;
  }
  if (args.list == !args.case_name.empty()) return Usage("give one of --case, --list");
  if (args.list) {
    for (const Case& c : Cases()) printf("%s\n", c.name);
    return 0;
  }
  const Case* selected = nullptr;
  for (const Case& c : Cases()) {
    if (args.case_name == c.name) selected = &c;
  }
  if (selected == nullptr) return Usage("unknown case '" + args.case_name + "'");
  if (args.iterations < 0) return Usage("--case needs --iterations N");
  if (selected->id == CaseId::kProcess && args.iterations != 0) return Usage("case process takes --iterations 0");

  const int64_t warmup = std::min<int64_t>(args.iterations / 10, 10000);
  int64_t bursts = 0;
  UncontendedTimer warmup_timer, timer;
  TimedLoop(selected->id, warmup, args.burst, args.pause_ms, warmup_timer, &bursts);
  bursts = 0;
  TimedLoop(selected->id, args.iterations, args.burst, args.pause_ms, timer, &bursts);
  std::string burst_fields;
  if (args.burst > 0) {
    burst_fields = ", \"burst\": " + std::to_string(args.burst) + ", \"bursts\": " + std::to_string(bursts) +
                   ", \"pause_ms\": " + std::to_string(args.pause_ms);
  }
  printf(
      "{\"case\": \"%s\", \"iterations\": %lld, %s, \"events_per_iteration\": %d, "
      "\"warmup_iterations\": %lld%s%s}\n",
      selected->name, static_cast<long long>(args.iterations), timer.JsonFields().c_str(),
      selected->events_per_iteration, static_cast<long long>(warmup), burst_fields.c_str(), selected->extra);
  return 0;
}
