#include "preload/blocking_calls.h"

namespace rlscope::preload {

// Module names are the C modules themselves (posix, not os), so an entry
// names where the C function lives. A module or attribute this Python
// lacks (another platform, another version) is skipped.
const BlockingCallable kBlockingCallables[] = {
    // Locks: Lock, RLock, Condition.wait, Event.wait, Semaphore,
    // queue.Queue.get, Thread.join.
    {"_thread", "LockType.acquire"},
    {"_thread", "lock.acquire"},  // 3.13 names the type.
    {"_thread", "RLock.acquire"},
    {"_thread", "_ThreadHandle.join"},  // 3.13's Thread.join.
    {"_queue", "SimpleQueue.get"},
    {"_multiprocessing", "SemLock.acquire"},  // multiprocessing Lock, Queue.get.
    {"time", "sleep"},
    {"select", "select"},
    {"select", "epoll.poll"},   // selectors, asyncio.
    {"select", "poll().poll"},  // The poll type is not a module attribute: read from an instance.
    {"_socket", "socket.recv"},
    {"_socket", "socket.recv_into"},
    {"_socket", "socket.recvfrom"},
    {"_socket", "socket.recvfrom_into"},
    {"_socket", "socket.recvmsg"},
    {"_socket", "socket.recvmsg_into"},
    {"_socket", "socket._accept"},
    {"_socket", "socket.connect"},
    {"posix", "read"},  // multiprocessing Connection.recv, subprocess pipes.
    {"posix", "readv"},
    {"posix", "waitpid"},  // subprocess.Popen.wait.
    {"posix", "wait"},
    {"posix", "wait3"},
    {"posix", "wait4"},
    {"posix", "waitid"},
    {"_signal", "pause"},
    {"_signal", "sigwait"},
    {"_signal", "sigwaitinfo"},
    {"_signal", "sigtimedwait"},
};
const size_t kBlockingCallableCount = sizeof(kBlockingCallables) / sizeof(kBlockingCallables[0]);

bool BlockingCalls::Add(uintptr_t function) {
  if (function == 0) return true;
  if (Contains(function)) return true;
  if (size_ + 1 >= kSlots / 2) return false;  // Keep probes short.
  size_t slot = SlotOf(function);
  while (slots_[slot] != 0) slot = (slot + 1) & (kSlots - 1);
  slots_[slot] = function;
  ++size_;
  return true;
}

}  // namespace rlscope::preload
