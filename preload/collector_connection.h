// CollectorConnection: the preload's end of the Unix stream socket to the
// collector. Used by the flusher thread only. Sends whole frames with a
// deadline so a stuck collector can delay the flusher, never the program,
// and the program's exit only by the flusher's exit bound.
//
// The program owns the fd table: it may close our socket (daemons and
// subprocess children close every fd) and the number may then name one of
// its own files. So the socket sits at a high fd number, and its identity
// (device, inode) is checked before every use: a socket that is no longer
// ours is never written to or closed.
#ifndef RLSCOPE_PRELOAD_COLLECTOR_CONNECTION_H_
#define RLSCOPE_PRELOAD_COLLECTOR_CONNECTION_H_

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace rlscope::preload {

class CollectorConnection {
 public:
  // `socket_path`: a file system path, or "@name" for a Linux abstract
  // socket (no file; see Receiver::Listen).
  explicit CollectorConnection(const char* socket_path);
  ~CollectorConnection();
  CollectorConnection(const CollectorConnection&) = delete;
  CollectorConnection& operator=(const CollectorConnection&) = delete;

  // Connect: returns false (with errno) when the collector is unreachable.
  // A collector whose backlog is full (busy, or stalled) is retried until
  // `*deadline_cap_ns` (CLOCK_MONOTONIC, re-read; null: forever), then
  // errno is ETIMEDOUT; `while_waiting(arg)` runs between attempts.
  bool Connect(const std::atomic<int64_t>* deadline_cap_ns, void (*while_waiting)(void*) = nullptr,
               void* while_waiting_arg = nullptr);
  // PrepareHighFd: grows the process's fd table past the floor Connect
  // moves the socket to. Call while the process is single-threaded (the
  // preload's start): growing it later, with a second thread alive, makes
  // the kernel wait out an RCU grace period (9-16 ms measured), which a
  // short program then waits for at exit.
  static void PrepareHighFd();
  bool connected() const { return fd_ >= 0; }
  // placed_low: the socket could not be moved to the high floor (a low
  // RLIMIT_NOFILE); it sits as high as the limit allows, at fd().
  bool placed_low() const { return placed_low_; }
  int fd() const { return fd_; }
  // SendAll: writes all `size` bytes before `deadline_ns` or before
  // `*deadline_cap_ns` (CLOCK_MONOTONIC; re-read while waiting, so another
  // thread can cut the wait short). On failure the connection is dropped (a
  // half-written frame would corrupt the stream) and errno says why:
  // ETIMEDOUT for a deadline, EBADF when the program closed our socket.
  // `while_blocked(arg)`, if given, runs each time the send waits for room
  // (every 5 ms while it waits), on the sending thread.
  bool SendAll(const uint8_t* data, size_t size, int64_t deadline_ns, const std::atomic<int64_t>* deadline_cap_ns,
               void (*while_blocked)(void*) = nullptr, void* while_blocked_arg = nullptr);
  // Close: also used in a fork() child, where the inherited socket carries
  // the parent's stream and must be let go without writing to it.
  void Close();

 private:
  // StillOurs: the fd still refers to the socket we connected.
  bool StillOurs() const;
  // MoveHigh: a duplicate of `fd` at kHighFdFloor, or as high below the
  // soft RLIMIT_NOFILE as is free; `fd` itself when nothing higher is.
  static int MoveHigh(int fd);
  // ListenerIsOurs: the process listening on the connected socket runs as
  // this user (or root). An abstract socket name is visible to every user
  // (/proc/net/unix) and nothing reserves it once the collector is gone: a
  // process that connects later (a daemonised child, a reconnection) must
  // not hand its argv and names to whoever took the name over. Connect
  // fails with EPERM otherwise.
  static bool ListenerIsOurs(int fd);

  char path_[108];
  int fd_ = -1;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  bool placed_low_ = false;
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_COLLECTOR_CONNECTION_H_
