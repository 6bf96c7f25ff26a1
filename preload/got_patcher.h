// GotPatcher: redirects a loaded object's calls to imported functions by
// rewriting their GOT slots (R_X86_64_JUMP_SLOT for PLT calls,
// R_X86_64_GLOB_DAT for -fno-plt calls and address-taking). Which imports
// and with what is up to a Policy; GotPatcher walks the relocations and
// writes, through RELRO when the loader made the GOT read-only.
//
// Every write is one aligned 8-byte store, so a thread calling through the
// slot at the same moment sees the old or the new function, both valid.
#ifndef RLSCOPE_PRELOAD_GOT_PATCHER_H_
#define RLSCOPE_PRELOAD_GOT_PATCHER_H_

#include "preload/elf_image.h"

namespace rlscope::preload {

class GotPatcher {
 public:
  class Policy {
   public:
    virtual ~Policy() = default;
    // Wants: a cheap filter on the name alone (no library known yet).
    virtual bool Wants(const char* symbol_name) = 0;
    // Replacement: what to write into the slot of `import`, which holds
    // `current` (the bound function, or the object's own PLT entry while a
    // lazy binding is unresolved); nullptr leaves the slot alone.
    virtual void* Replacement(const ElfImage& image, const ElfImage::Import& import, void* current) = 0;
  };

  struct Result {
    int candidates = 0;  // Imports the policy Wants: 0 means never look again.
    int patched = 0;     // Slots written.
    int failed = 0;      // Slots whose page could not be made writable.
  };

  static Result Patch(const ElfImage& image, Policy& policy);

  // WriteSlot: stores `value` into `slot` of `image`, lifting RELRO's
  // read-only protection around the store (mprotect RW, store, back to R).
  static bool WriteSlot(const ElfImage& image, void** slot, void* value);
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_GOT_PATCHER_H_
