// ModuleTracker: notices when the set of loaded shared objects changes and
// lists their executable segments, so the collector can tell which library
// a native address belongs to. Flusher thread only; never calls into the
// loader from inside dl_iterate_phdr's callback (only copies).
#ifndef RLSCOPE_PRELOAD_MODULE_TRACKER_H_
#define RLSCOPE_PRELOAD_MODULE_TRACKER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace rlscope::preload {

struct ModuleRange {
  std::string path;
  uint64_t begin = 0;
  uint64_t end = 0;
  uint64_t load_bias = 0;
};

class ModuleTracker {
 public:
  // ChangedSinceLastSnapshot: cheap (the loader's add/remove counters).
  bool ChangedSinceLastSnapshot() const;
  std::vector<ModuleRange> Snapshot();
  // Forget: the next check reports a change (new stream after fork/exec).
  void Forget() { adds_ = subs_ = UINT64_MAX; }

 private:
  uint64_t adds_ = UINT64_MAX;
  uint64_t subs_ = UINT64_MAX;
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_MODULE_TRACKER_H_
