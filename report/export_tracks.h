// What the exporters (export_chrome, export_perfetto, export_folded) name
// alike: a process, a thread's track id and label, a GPU activity's
// category.
#ifndef RLSCOPE_REPORT_EXPORT_TRACKS_H_
#define RLSCOPE_REPORT_EXPORT_TRACKS_H_

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "report/process_timeline.h"

namespace rlscope::report {

// ProgramName: the base name of the process's argv[0] (else of its
// executable); "pid N" when it has neither.
std::string ProgramName(const std::vector<std::string>& argv, const std::string& executable, int pid);
// ProcessLabel: "NAME (pid N)", or "pid N" when it has no name.
std::string ProcessLabel(const std::vector<std::string>& argv, const std::string& executable, int pid);

// LaunchingCalls: per correlation id, the CUDA call that launched its GPU
// work: the thread (index into process.threads) and the call. Where a
// runtime call and its nested driver call share an id, the timed runtime
// call wins (as in gpu_analysis).
struct LaunchingCall {
  size_t thread = 0;
  const GpuLaunchPoint* call = nullptr;
};
absl::flat_hash_map<uint32_t, LaunchingCall> LaunchingCalls(const ProcessTimeline& process);

// NativeCallIndex: a thread's Python -> native calls, which are among its
// cpu_events too, found by their span (and category). A sorted array (8
// bytes a call), not a tree: a Python thread has millions of them.
class NativeCallIndex {
 public:
  explicit NativeCallIndex(const ThreadTimeline& thread);
  // Of: the call that `event` (one of the thread's cpu_events) is, or null;
  // of calls with one span, the first recorded.
  const NativeCall* Of(const Interval& event) const;

 private:
  std::vector<const NativeCall*> by_span_;
};

// ThreadTrackIds: one track id per thread timeline of a process. The OS
// reuses thread ids, and two timelines of one id would merge into one track
// in a trace viewer, so a repeated tid gets a synthetic id from 1000000000
// and a name that says which tid it was.
class ThreadTrackIds {
 public:
  struct Track {
    int64_t tid = 0;
    std::string name;
  };
  Track Next(const ThreadTimeline& thread);

 private:
  std::set<uint32_t> seen_tids_;
  int64_t next_reused_ = 1000000000;
};

// GpuActivityCategoryName: "Kernel", "Memcpy" or "Memset" (CategoryName).
std::string_view GpuActivityCategoryName(GpuActivityKind kind);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_EXPORT_TRACKS_H_
