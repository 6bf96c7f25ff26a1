#include "format/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace rlscope {

namespace {

const char* NotRegular(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory, not a file";
  if (S_ISFIFO(mode)) return "is a FIFO (named pipe), not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  return "is not a regular file";
}

std::string MiB(size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

int OpenInputFile(const std::string& path, Symlinks symlinks, off_t* size, std::string* error) {
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  if (symlinks == Symlinks::kRefuse) flags |= O_NOFOLLOW;
  const int fd = open(path.c_str(), flags);
  if (fd < 0) {
    if (error != nullptr) {
      *error = (errno == ELOOP && symlinks == Symlinks::kRefuse) ? "is a symbolic link, not a regular file"
                                                                 : strerror(errno);
    }
    return -1;
  }
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    if (error != nullptr) *error = S_ISREG(info.st_mode) ? strerror(errno) : NotRegular(info.st_mode);
    close(fd);
    return -1;
  }
  if (size != nullptr) *size = info.st_size;
  return fd;
}

bool ReadInputFile(const std::string& path, size_t max_bytes, Symlinks symlinks, std::string* content,
                   std::string* error) {
  off_t size = 0;
  const int fd = OpenInputFile(path, symlinks, &size, error);
  if (fd < 0) return false;
  auto too_large = [&] {
    if (error != nullptr) *error = "is larger than " + MiB(max_bytes) + ", more than such a file ever holds";
    close(fd);
    return false;
  };
  if (static_cast<uint64_t>(size) > max_bytes) return too_large();
  content->clear();
  // One byte more than allowed is asked for, so a file that grew since
  // fstat is caught; a /proc-style file of size 0 is read to its end.
  content->resize(max_bytes + 1 < static_cast<size_t>(size) + 4096 ? max_bytes + 1 : static_cast<size_t>(size) + 4096);
  size_t filled = 0;
  while (true) {
    if (filled == content->size()) {
      if (filled > max_bytes) return too_large();
      content->resize(std::min(max_bytes + 1, content->size() * 2));
    }
    const ssize_t n = read(fd, content->data() + filled, content->size() - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (error != nullptr) *error = std::string("read failed: ") + strerror(errno);
      close(fd);
      return false;
    }
    if (n == 0) break;
    filled += static_cast<size_t>(n);
  }
  if (filled > max_bytes) return too_large();
  content->resize(filled);
  close(fd);
  return true;
}

}  // namespace rlscope
