// BlockingCalls: the C functions of CPython and its standard library that
// block the calling thread until something else happens (another thread
// releases a lock, a child exits, data arrives, a timer runs out). A
// Python thread inside one does no work: the Python hook records such a
// call as wire::EventKind::kPythonWait instead of counting it as Python
// (or native) time, and the report shows it as the Wait category.
//
// The set is fixed (kBlockingCallables) and resolved once per process at
// attach, with the GIL held: each entry's C function address (the
// PyMethodDef's ml_meth, the same for a builtin, a bound builtin and a
// method descriptor, so 3.11's and 3.12's C_CALL arguments both match).
// The hot path asks IsBlockingCall, one hash probe with no lock, of every
// C call the hook sees.
//
// Not covered: waits that make no C call the profile hook sees (a `with
// lock:` block's __enter__, a wait inside a native library's own code),
// which stay the time of the level they happen in.
#ifndef RLSCOPE_PRELOAD_BLOCKING_CALLS_H_
#define RLSCOPE_PRELOAD_BLOCKING_CALLS_H_

#include <cstddef>
#include <cstdint>

namespace rlscope::preload {

// A blocking callable as Python reaches it: `module` imported, then
// `path`'s dotted attributes read from it ("LockType.acquire"); a part
// ending in "()" is called without arguments first ("poll().poll").
struct BlockingCallable {
  const char* module;
  const char* path;
};

// kBlockingCallables: locks and conditions (threading.Lock/RLock/Condition/
// Event/Semaphore and queue.Queue all end in _thread's lock acquire),
// _queue.SimpleQueue.get, multiprocessing's semaphores, time.sleep,
// select/poll/epoll, socket receive/accept/connect, os.read (pipes,
// multiprocessing Connection.recv), os.wait*/waitpid (subprocess.wait),
// and signal waits. os.read of a regular file counts too: its time is the
// kernel's I/O, not the program's CPU work.
extern const BlockingCallable kBlockingCallables[];
extern const size_t kBlockingCallableCount;

// BlockingCalls: an open-addressed set of C function addresses, filled at
// attach (Add, before any thread uses it) and only read afterwards.
class BlockingCalls {
 public:
  static constexpr size_t kSlots = 128;  // Power of two, well above kBlockingCallableCount.

  // Add: false when the set is full (then the function is not recognised).
  bool Add(uintptr_t function);
  bool Contains(uintptr_t function) const {
    if (function == 0) return false;
    for (size_t slot = SlotOf(function);; slot = (slot + 1) & (kSlots - 1)) {
      const uintptr_t held = slots_[slot];
      if (held == function) return true;
      if (held == 0) return false;
    }
  }
  size_t size() const { return size_; }

 private:
  static size_t SlotOf(uintptr_t function) {
    return static_cast<size_t>(((function >> 4) * 0x9E3779B97F4A7C15ull) >> 57) & (kSlots - 1);
  }
  uintptr_t slots_[kSlots] = {};
  size_t size_ = 0;
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_BLOCKING_CALLS_H_
