#include "preload/collector_connection.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <ctime>

#include "preload/tick_clock.h"

namespace rlscope::preload {

namespace {

// Programs hand out low fd numbers first; ours lives far above them.
constexpr int kHighFdFloor = 900;
// Longest single wait inside SendAll, so a lowered deadline cap is noticed.
constexpr int kPollSliceMs = 50;
// The same with a while_blocked callback, which then runs this often: the
// flusher frees ended threads' rings there, and a program that starts a
// thread per millisecond must not get ahead of it.
constexpr int kBlockedPollSliceMs = 5;
// Between connection attempts to a collector whose backlog is full.
constexpr long kConnectRetryNs = 10'000'000;

}  // namespace

CollectorConnection::CollectorConnection(const char* socket_path) {
  path_[0] = '\0';
  if (socket_path != nullptr) {
    strncpy(path_, socket_path, sizeof(path_) - 1);
    path_[sizeof(path_) - 1] = '\0';
  }
}

CollectorConnection::~CollectorConnection() { Close(); }

bool CollectorConnection::Connect(const std::atomic<int64_t>* deadline_cap_ns, void (*while_waiting)(void*),
                                  void* while_waiting_arg) {
  Close();
  if (path_[0] == '\0') {
    errno = EINVAL;
    return false;
  }
  // CLOEXEC: an exec'd image must not inherit (and write to) this stream.
  // NONBLOCK before connect: a collector with a full backlog must not block.
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  socklen_t address_size = sizeof(address);
  if (path_[0] == '@') {
    // Abstract name (Linux): sun_path starts with a NUL, and the name is
    // exactly the bytes that follow, so the length must not include padding.
    const size_t name_size = strnlen(path_ + 1, sizeof(address.sun_path) - 1);
    memcpy(address.sun_path + 1, path_ + 1, name_size);
    address_size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name_size);
  } else {
    memcpy(address.sun_path, path_, std::min(sizeof(path_), sizeof(address.sun_path)));
  }
  // EAGAIN: the collector's backlog is full: many processes starting at
  // once (it drains within milliseconds), or a stalled collector (stopped,
  // swapped out), which is waited for like a send is: until the cap.
  int result;
  while ((result = connect(fd, reinterpret_cast<sockaddr*>(&address), address_size)) != 0 && errno == EAGAIN) {
    const int64_t cap = deadline_cap_ns != nullptr ? deadline_cap_ns->load(std::memory_order_acquire) : INT64_MAX;
    if (MonotonicNs() >= cap) {
      errno = ETIMEDOUT;
      break;
    }
    if (while_waiting != nullptr) while_waiting(while_waiting_arg);
    timespec pause{0, kConnectRetryNs};
    nanosleep(&pause, nullptr);
  }
  if (result != 0) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return false;
  }
  if (!ListenerIsOurs(fd)) {
    close(fd);
    errno = EPERM;
    return false;
  }
  const int high = MoveHigh(fd);
  placed_low_ = high < kHighFdFloor;
  if (high != fd) {
    close(fd);
    fd = high;
  }
  struct stat info {};
  fstat(fd, &info);
  device_ = info.st_dev;
  inode_ = info.st_ino;
  fd_ = fd;
  return true;
}

bool CollectorConnection::ListenerIsOurs(int fd) {
  ucred peer{};
  socklen_t size = sizeof(peer);
  return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 && (peer.uid == geteuid() || peer.uid == 0);
}

int CollectorConnection::MoveHigh(int fd) {
  int high = fcntl(fd, F_DUPFD_CLOEXEC, kHighFdFloor);
  if (high >= 0) return high;
  // RLIMIT_NOFILE at or below the floor: as high as it allows, so the
  // program keeps its low numbers. F_DUPFD takes the lowest free number at
  // or above its argument and never replaces an open fd (dup2 would close
  // one the program opened meanwhile); it fails with EINVAL at or above the
  // limit and EMFILE when nothing above is free.
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return fd;
  const rlim_t top = std::min<rlim_t>(limit.rlim_cur, kHighFdFloor);
  for (rlim_t candidate = top; candidate-- > static_cast<rlim_t>(fd) + 1;) {
    high = fcntl(fd, F_DUPFD_CLOEXEC, static_cast<int>(candidate));
    if (high >= 0) return high;
  }
  return fd;
}

void CollectorConnection::PrepareHighFd() {
  const int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  const int high = fcntl(fd, F_DUPFD_CLOEXEC, kHighFdFloor);
  if (high >= 0) close(high);
  close(fd);
}

bool CollectorConnection::StillOurs() const {
  struct stat info {};
  return fd_ >= 0 && fstat(fd_, &info) == 0 && S_ISSOCK(info.st_mode) && info.st_dev == device_ &&
         info.st_ino == inode_;
}

bool CollectorConnection::SendAll(const uint8_t* data, size_t size, int64_t deadline_ns,
                                  const std::atomic<int64_t>* deadline_cap_ns, void (*while_blocked)(void*),
                                  void* while_blocked_arg) {
  if (!StillOurs()) {
    fd_ = -1;  // Not ours any more: forget it, never close it.
    errno = EBADF;
    return false;
  }
  while (size > 0) {
    // MSG_NOSIGNAL: a vanished collector must not SIGPIPE the program.
    ssize_t sent = send(fd_, data, size, MSG_NOSIGNAL);
    if (sent > 0) {
      data += sent;
      size -= static_cast<size_t>(sent);
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const int64_t cap = deadline_cap_ns != nullptr ? deadline_cap_ns->load(std::memory_order_acquire) : INT64_MAX;
      const int64_t left_ns = std::min(deadline_ns, cap) - MonotonicNs();
      if (left_ns <= 0) {
        Close();
        errno = ETIMEDOUT;
        return false;
      }
      if (while_blocked != nullptr) while_blocked(while_blocked_arg);
      pollfd waiter{fd_, POLLOUT, 0};
      const int slice_ms = while_blocked != nullptr ? kBlockedPollSliceMs : kPollSliceMs;
      poll(&waiter, 1, static_cast<int>(std::min<int64_t>(left_ns / 1000000 + 1, slice_ms)));
      continue;
    }
    const int saved = errno;
    Close();
    errno = saved;
    return false;
  }
  return true;
}

void CollectorConnection::Close() {
  if (StillOurs()) close(fd_);
  fd_ = -1;
}

}  // namespace rlscope::preload
