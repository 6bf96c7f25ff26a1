#include "format/output_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>

namespace rlscope {

namespace {

// NotReplaceable: why a file of this type is never replaced.
const char* NotReplaceable(mode_t mode) {
  if (S_ISLNK(mode)) return "is a symbolic link: not replaced (remove it, or name the file it points to)";
  if (S_ISDIR(mode)) return "is a directory: not replaced";
  if (S_ISFIFO(mode)) return "is a FIFO (named pipe): not replaced";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device: not replaced";
  return "is not a regular file: not replaced";
}

}  // namespace

bool CheckReplaceable(const std::string& path, std::string* error) {
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return true;
    if (error != nullptr) *error = strerror(errno);
    return false;
  }
  if (S_ISREG(info.st_mode)) return true;
  if (error != nullptr) *error = NotReplaceable(info.st_mode);
  return false;
}

namespace {

// TemporaryName: ".NAME.XXXXXX" with six unpredictable letters.
std::string TemporaryName(const std::string& name) { return "." + name + "." + UnpredictableLetters(6); }

}  // namespace

std::string UnpredictableLetters(int count) {
  constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string letters;
  while (static_cast<int>(letters.size()) < count) {
    unsigned char bytes[8] = {};
    if (getrandom(bytes, sizeof(bytes), 0) != static_cast<ssize_t>(sizeof(bytes))) {
      const uint64_t mixed =
          (static_cast<uint64_t>(clock()) + static_cast<uint64_t>(time(nullptr))) * 0x9E3779B97F4A7C15ull ^
          static_cast<uint64_t>(getpid()) ^ letters.size();
      memcpy(bytes, &mixed, sizeof(bytes));
    }
    for (unsigned char byte : bytes) {
      if (static_cast<int>(letters.size()) < count) letters += kAlphabet[byte % (sizeof(kAlphabet) - 1)];
    }
  }
  return letters;
}

bool ReplaceFile(const std::string& path, std::string_view content, std::string* error) {
  auto fail = [&](const std::string& what) {
    if (error != nullptr) *error = path + ": " + what;
    return false;
  };
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty()) return fail("is a directory: not replaced");
  // Everything below is relative to the directory opened here, so a name
  // on the path swapped meanwhile cannot send the file elsewhere.
  const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return fail(std::string("cannot be written: ") + strerror(errno));
  auto fail_closing = [&](const std::string& what) {
    close(dir_fd);
    return fail(what);
  };
  struct stat info {};
  if (fstatat(dir_fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(info.st_mode) &&
      !S_ISLNK(info.st_mode)) {
    return fail_closing(NotReplaceable(info.st_mode));
  }
  std::string temporary;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temporary = TemporaryName(name);
    fd = openat(dir_fd, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return fail_closing(std::string("cannot be written: ") + strerror(errno));
  const char* bytes = content.data();
  size_t left = content.size();
  int saved = 0;
  while (left > 0 && saved == 0) {
    const ssize_t n = write(fd, bytes, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      saved = n == 0 ? EIO : errno;
    } else {
      bytes += n;
      left -= static_cast<size_t>(n);
    }
  }
  if (close(fd) != 0 && saved == 0) saved = errno;
  if (saved != 0) {
    unlinkat(dir_fd, temporary.c_str(), 0);
    return fail_closing(std::string("write failed: ") + strerror(saved) + (saved == ENOSPC ? " (disk full?)" : ""));
  }
  // renameat replaces the name itself: a link planted there is replaced,
  // never written through.
  if (renameat(dir_fd, temporary.c_str(), dir_fd, name.c_str()) != 0) {
    saved = errno;
    unlinkat(dir_fd, temporary.c_str(), 0);
    return fail_closing(std::string("cannot be replaced: ") + strerror(saved));
  }
  close(dir_fd);
  return true;
}

}  // namespace rlscope
