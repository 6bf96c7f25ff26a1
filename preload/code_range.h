// CodeRange: the executable segment of a loaded object that holds an
// address (the interpreter's code, the preload's own code).
#ifndef RLSCOPE_PRELOAD_CODE_RANGE_H_
#define RLSCOPE_PRELOAD_CODE_RANGE_H_

#include <cstdint>

namespace rlscope::preload {

struct CodeRange {
  uintptr_t begin = 0;
  uintptr_t end = 0;  // 0: not found.
  bool Contains(uintptr_t address) const { return address >= begin && address < end; }
};

// CodeRangeContaining: walks the loaded objects (dl_iterate_phdr; reads
// only, so safe wherever dl_iterate_phdr is).
CodeRange CodeRangeContaining(const void* address);

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_CODE_RANGE_H_
