#include "preload/code_range.h"

#include <link.h>

#include "preload/loader_gate.h"

namespace rlscope::preload {

namespace {

struct Search {
  uintptr_t address;
  CodeRange range;
};

int VisitObject(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    if (header.p_type != PT_LOAD || (header.p_flags & PF_X) == 0) continue;
    const uintptr_t begin = info->dlpi_addr + header.p_vaddr;
    if (search->address >= begin && search->address < begin + header.p_memsz) {
      search->range = {begin, begin + header.p_memsz};
      return 1;
    }
  }
  return 0;
}

}  // namespace

CodeRange CodeRangeContaining(const void* address) {
  Search search{reinterpret_cast<uintptr_t>(address), {}};
  if (address != nullptr) IterateLoadedObjects(&VisitObject, &search);
  return search.range;
}

}  // namespace rlscope::preload
