#include "preload/python_hook_breakdown.h"

#include <atomic>
#include <cstdlib>

#include "preload/raw_log.h"

namespace rlscope::preload {
namespace {

struct Tally {
  std::atomic<uint64_t> samples{0};
  std::atomic<uint64_t> ticks{0};
  void Add(uint64_t elapsed) {
    samples.fetch_add(1, std::memory_order_relaxed);
    ticks.fetch_add(elapsed, std::memory_order_relaxed);
  }
};

Tally g_parts[static_cast<int>(HookPart::kCount)];
Tally g_steps[static_cast<int>(HookStep::kCount)];

constexpr const char* kPartNames[] = {"other",          "python start",       "python return",
                                      "call of python", "call of a builtin",  "call recorded",
                                      "native return",  "first sight of code"};
constexpr const char* kStepNames[] = {"callable", "recorded check", "caller's code and line", "wrapped and operation",
                                      "store"};
static_assert(sizeof(kPartNames) / sizeof(kPartNames[0]) == static_cast<int>(HookPart::kCount));
static_assert(sizeof(kStepNames) / sizeof(kStepNames[0]) == static_cast<int>(HookStep::kCount));

void LogTallies(const char* what, const Tally* tallies, const char* const* names, int count, double ns_per_tick) {
  uint64_t total = 0;
  for (int i = 0; i < count; ++i) total += tallies[i].ticks.load(std::memory_order_relaxed);
  for (int i = 0; i < count; ++i) {
    const uint64_t samples = tallies[i].samples.load(std::memory_order_relaxed);
    if (samples == 0) continue;
    const double ticks = static_cast<double>(tallies[i].ticks.load(std::memory_order_relaxed));
    RawLog("python hook %s %-24s %8llu samples, %7.1f ns each, %5.1f %% of the sampled time", what, names[i],
           static_cast<unsigned long long>(samples), ticks * ns_per_tick / static_cast<double>(samples),
           total > 0 ? 100.0 * ticks / static_cast<double>(total) : 0.0);
  }
}

}  // namespace

#if RLSCOPE_HOOK_STEPS
__thread uint64_t t_hook_mark_ticks __attribute__((tls_model("initial-exec"))) = 0;
void NoteHookStep(HookStep step, uint64_t ticks) { g_steps[static_cast<int>(step)].Add(ticks); }
#endif

bool g_hook_breakdown = false;

void InitPythonHookBreakdown() {
  const char* wanted = getenv("RLSCOPE_HOOK_BREAKDOWN");
  g_hook_breakdown = wanted != nullptr && wanted[0] == '1';
}

void ResetPythonHookBreakdown() {
  for (Tally& tally : g_parts) tally.samples = tally.ticks = 0;
  for (Tally& tally : g_steps) tally.samples = tally.ticks = 0;
}

void NoteHookPart(HookPart part, uint64_t ticks) {
  if (g_hook_breakdown) g_parts[static_cast<int>(part)].Add(ticks);
}

void LogPythonHookBreakdown(double ns_per_tick) {
  if (!g_hook_breakdown) return;
  LogTallies("part", g_parts, kPartNames, static_cast<int>(HookPart::kCount), ns_per_tick);
#if RLSCOPE_HOOK_STEPS
  LogTallies("step", g_steps, kStepNames, static_cast<int>(HookStep::kCount), ns_per_tick);
#endif
}

}  // namespace rlscope::preload
