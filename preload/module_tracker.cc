#include "preload/module_tracker.h"

#include <link.h>
#include <unistd.h>

#include <cstddef>

#include "preload/loader_gate.h"

namespace rlscope::preload {

namespace {

struct Counters {
  uint64_t adds = 0;
  uint64_t subs = 0;
};

int ReadCounters(dl_phdr_info* info, size_t size, void* data) {
  auto* counters = static_cast<Counters*>(data);
  // dlpi_adds/dlpi_subs exist when the struct is large enough (glibc >= 2.4).
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
    counters->adds = info->dlpi_adds;
    counters->subs = info->dlpi_subs;
  }
  return 1;  // The first object carries the counters: stop.
}

struct Collected {
  std::vector<ModuleRange> ranges;
  Counters counters;
};

int CollectRanges(dl_phdr_info* info, size_t size, void* data) {
  auto* collected = static_cast<Collected*>(data);
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
    collected->counters = {info->dlpi_adds, info->dlpi_subs};
  }
  const char* name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    if (header.p_type != PT_LOAD || (header.p_flags & PF_X) == 0) continue;
    const uint64_t begin = info->dlpi_addr + header.p_vaddr;
    collected->ranges.push_back({name, begin, begin + header.p_memsz, info->dlpi_addr});
  }
  return 0;
}

}  // namespace

bool ModuleTracker::ChangedSinceLastSnapshot() const {
  Counters counters;
  IterateLoadedObjects(&ReadCounters, &counters);
  return counters.adds != adds_ || counters.subs != subs_;
}

std::vector<ModuleRange> ModuleTracker::Snapshot() {
  Collected collected;
  IterateLoadedObjects(&CollectRanges, &collected);
  adds_ = collected.counters.adds;
  subs_ = collected.counters.subs;
  // The main program is listed with an empty name: name it (outside the
  // loader callback).
  char executable[4096];
  const ssize_t length = readlink("/proc/self/exe", executable, sizeof(executable) - 1);
  for (ModuleRange& range : collected.ranges) {
    if (range.path.empty() && length > 0) range.path.assign(executable, static_cast<size_t>(length));
  }
  return std::move(collected.ranges);
}

}  // namespace rlscope::preload
