#include "preload/got_patcher.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace rlscope::preload {

namespace {

void Store(void** slot, void* value) {
  // Atomic so the compiler emits one 8-byte store that concurrent callers
  // read whole.
  reinterpret_cast<std::atomic<void*>*>(slot)->store(value, std::memory_order_release);
}

}  // namespace

bool GotPatcher::WriteSlot(const ElfImage& image, void** slot, void* value) {
  const auto address = reinterpret_cast<uintptr_t>(slot);
  if (!image.InRelro(address)) {
    Store(slot, value);
    return true;
  }
  // The loader made this page read-only after relocating (RELRO). Another
  // slot of ours on the same page may be written by a concurrent patch from
  // another thread only under the same lock (simulator_hooks.cc), so the
  // window where the page is writable is ours.
  const uintptr_t page_size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  void* page = reinterpret_cast<void*>(address & ~(page_size - 1));
  const int saved_errno = errno;
  bool written = false;
  if (mprotect(page, page_size, PROT_READ | PROT_WRITE) == 0) {
    Store(slot, value);
    mprotect(page, page_size, PROT_READ);
    written = true;
  }
  errno = saved_errno;  // Never leave the program a changed errno.
  return written;
}

GotPatcher::Result GotPatcher::Patch(const ElfImage& image, Policy& policy) {
  Result result;
  image.ForEachImport([&](const ElfImage::Import& import) {
    if (!policy.Wants(import.name)) return true;
    ++result.candidates;
    void* current = reinterpret_cast<std::atomic<void*>*>(import.slot)->load(std::memory_order_acquire);
    void* replacement = policy.Replacement(image, import, current);
    if (replacement == nullptr || replacement == current) return true;
    if (WriteSlot(image, import.slot, replacement)) {
      ++result.patched;
    } else {
      ++result.failed;
    }
    return true;
  });
  return result;
}

}  // namespace rlscope::preload
