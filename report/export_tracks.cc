#include "report/export_tracks.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"
#include "report/category.h"

namespace rlscope::report {

ThreadTrackIds::Track ThreadTrackIds::Next(const ThreadTimeline& thread) {
  Track track;
  track.tid = seen_tids_.insert(thread.tid).second ? int64_t{thread.tid} : next_reused_++;
  track.name = thread.name.empty() ? absl::StrFormat("thread %d", thread.tid) : thread.name;
  if (track.tid != thread.tid) track.name += absl::StrFormat(" (tid %d, again)", thread.tid);
  return track;
}

namespace {

std::string BaseNameOf(const std::vector<std::string>& argv, const std::string& executable) {
  std::string path = !argv.empty() ? argv[0] : executable;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string ProgramName(const std::vector<std::string>& argv, const std::string& executable, int pid) {
  const std::string name = BaseNameOf(argv, executable);
  return name.empty() ? absl::StrFormat("pid %d", pid) : name;
}

std::string ProcessLabel(const std::vector<std::string>& argv, const std::string& executable, int pid) {
  const std::string name = BaseNameOf(argv, executable);
  return name.empty() ? absl::StrFormat("pid %d", pid) : absl::StrFormat("%s (pid %d)", name, pid);
}

absl::flat_hash_map<uint32_t, LaunchingCall> LaunchingCalls(const ProcessTimeline& process) {
  absl::flat_hash_map<uint32_t, LaunchingCall> calls;
  for (size_t t = 0; t < process.threads.size(); ++t) {
    for (const GpuLaunchPoint& launch : process.threads[t].gpu_launches) {
      auto [it, inserted] = calls.try_emplace(launch.correlation_id, LaunchingCall{t, &launch});
      if (!inserted && it->second.call->nested && !launch.nested) it->second = LaunchingCall{t, &launch};
    }
  }
  return calls;
}

namespace {

std::pair<int64_t, int64_t> SpanOf(const NativeCall* call) { return {call->begin_ns, call->end_ns}; }

}  // namespace

NativeCallIndex::NativeCallIndex(const ThreadTimeline& thread) {
  by_span_.reserve(thread.native_calls.size());
  for (const NativeCall& call : thread.native_calls) by_span_.push_back(&call);
  // Stable: of equal spans the first recorded comes first, and Of finds it.
  std::stable_sort(by_span_.begin(), by_span_.end(),
                   [](const NativeCall* a, const NativeCall* b) { return SpanOf(a) < SpanOf(b); });
}

const NativeCall* NativeCallIndex::Of(const Interval& event) const {
  const std::pair<int64_t, int64_t> span{event.begin_ns, event.end_ns};
  const auto found = std::lower_bound(by_span_.begin(), by_span_.end(), span,
                                      [](const NativeCall* call, const auto& key) { return SpanOf(call) < key; });
  if (found == by_span_.end() || SpanOf(*found) != span) return nullptr;
  if (static_cast<int32_t>((*found)->category) != event.label) return nullptr;
  return *found;
}

std::string_view GpuActivityCategoryName(GpuActivityKind kind) {
  switch (kind) {
    case GpuActivityKind::kKernel: return CategoryName(Category::kGpuKernel);
    case GpuActivityKind::kMemcpy: return CategoryName(Category::kGpuMemcpy);
    case GpuActivityKind::kMemset: return CategoryName(Category::kGpuMemset);
  }
  return "GPU";
}

}  // namespace rlscope::report
