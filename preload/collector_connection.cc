#include "collector_connection.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tick_clock.h"

namespace rlscope::preload {

CollectorConnection::CollectorConnection(const char* socket_path) {
  path_[0] = '\0';
  if (socket_path != nullptr) {
    strncpy(path_, socket_path, sizeof(path_) - 1);
    path_[sizeof(path_) - 1] = '\0';
  }
}

CollectorConnection::~CollectorConnection() { Close(); }

bool CollectorConnection::Connect() {
  Close();
  if (path_[0] == '\0') {
    errno = EINVAL;
    return false;
  }
  // CLOEXEC: an exec'd image must not inherit (and write to) this stream.
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  memcpy(address.sun_path, path_, sizeof(path_) < sizeof(address.sun_path) ? sizeof(path_) : sizeof(address.sun_path));
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return false;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  fd_ = fd;
  return true;
}

bool CollectorConnection::SendAll(const uint8_t* data, size_t size, int64_t deadline_ns) {
  while (size > 0) {
    if (fd_ < 0) {
      errno = ENOTCONN;
      return false;
    }
    // MSG_NOSIGNAL: a vanished collector must not SIGPIPE the program.
    ssize_t sent = send(fd_, data, size, MSG_NOSIGNAL);
    if (sent > 0) {
      data += sent;
      size -= static_cast<size_t>(sent);
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const int64_t left_ns = deadline_ns - MonotonicNs();
      if (left_ns <= 0) {
        Close();
        errno = ETIMEDOUT;
        return false;
      }
      pollfd waiter{fd_, POLLOUT, 0};
      poll(&waiter, 1, static_cast<int>(left_ns / 1000000 + 1));
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
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
}

}  // namespace rlscope::preload
