// CollectorConnection: the preload's end of the Unix stream socket to the
// collector. Used by the flusher thread only. Sends whole frames with a
// deadline so a stuck collector can delay the flusher, never the program,
// and never the program's exit by more than the deadline.
#ifndef RLSCOPE_PRELOAD_COLLECTOR_CONNECTION_H_
#define RLSCOPE_PRELOAD_COLLECTOR_CONNECTION_H_

#include <cstddef>
#include <cstdint>

namespace rlscope::preload {

class CollectorConnection {
 public:
  explicit CollectorConnection(const char* socket_path);
  ~CollectorConnection();
  CollectorConnection(const CollectorConnection&) = delete;
  CollectorConnection& operator=(const CollectorConnection&) = delete;

  // Connect: returns false (with errno) when the collector is unreachable.
  bool Connect();
  bool connected() const { return fd_ >= 0; }
  // SendAll: writes all `size` bytes before `deadline_ns` (CLOCK_MONOTONIC).
  // On failure the connection is closed (a half-written frame would corrupt
  // the stream) and errno says why (ETIMEDOUT for the deadline).
  bool SendAll(const uint8_t* data, size_t size, int64_t deadline_ns);
  // Close: also used in a fork() child, where the inherited socket carries
  // the parent's stream and must be let go without writing to it.
  void Close();

 private:
  char path_[108];
  int fd_ = -1;
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_COLLECTOR_CONNECTION_H_
