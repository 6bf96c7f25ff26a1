#include "export_tracks.h"

#include "absl/strings/str_format.h"
#include "category.h"

namespace rlscope::report {

ThreadTrackIds::Track ThreadTrackIds::Next(const ThreadTimeline& thread) {
  Track track;
  track.tid = seen_tids_.insert(thread.tid).second ? int64_t{thread.tid} : next_reused_++;
  track.name = thread.name.empty() ? absl::StrFormat("thread %d", thread.tid) : thread.name;
  if (track.tid != thread.tid) track.name += absl::StrFormat(" (tid %d, again)", thread.tid);
  return track;
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
