#include "file_output.h"

#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "absl/strings/str_format.h"

namespace rlscope::collector {

bool WriteAll(int fd, const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  while (size > 0) {
    const ssize_t n = write(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    bytes += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

absl::Status WriteFile(const std::filesystem::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) return absl::InternalError(absl::StrFormat("cannot write %s", path.string()));
  return absl::OkStatus();
}

}  // namespace rlscope::collector
