#include "output_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace rlscope {

bool CheckReplaceable(const std::string& path, std::string* error) {
  struct stat info{};
  if (lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return true;
    if (error != nullptr) *error = strerror(errno);
    return false;
  }
  if (S_ISREG(info.st_mode)) return true;
  if (error != nullptr) {
    *error = S_ISLNK(info.st_mode)    ? "is a symbolic link: not replaced (remove it, or name the file it points to)"
             : S_ISDIR(info.st_mode)  ? "is a directory: not replaced"
             : S_ISFIFO(info.st_mode) ? "is a FIFO (named pipe): not replaced"
             : (S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode)) ? "is a device: not replaced"
                                                                : "is not a regular file: not replaced";
  }
  return false;
}

bool ReplaceFile(const std::string& path, std::string_view content, std::string* error) {
  auto fail = [&](const std::string& what) {
    if (error != nullptr) *error = path + ": " + what;
    return false;
  };
  std::string why;
  struct stat info{};
  if (!CheckReplaceable(path, &why) && !(lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode))) return fail(why);
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  // mkostemp: O_CREAT|O_EXCL, mode 0600, an unpredictable name.
  std::string temporary = dir + "." + name + ".XXXXXX";
  const int fd = mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0) return fail(std::string("cannot be written: ") + strerror(errno));
  const char* bytes = content.data();
  size_t left = content.size();
  while (left > 0) {
    const ssize_t n = write(fd, bytes, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = n == 0 ? EIO : errno;
      close(fd);
      unlink(temporary.c_str());
      return fail(std::string("write failed: ") + strerror(saved) + (saved == ENOSPC ? " (disk full?)" : ""));
    }
    bytes += n;
    left -= static_cast<size_t>(n);
  }
  if (close(fd) != 0) {
    unlink(temporary.c_str());
    return fail(std::string("write failed: ") + strerror(errno));
  }
  // rename replaces the name itself: whatever was planted there since the
  // check is replaced, never written through.
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    unlink(temporary.c_str());
    return fail(std::string("cannot be replaced: ") + strerror(saved));
  }
  return true;
}

}  // namespace rlscope
