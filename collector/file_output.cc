#include "collector/file_output.h"

#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "format/output_file.h"

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

absl::Status ReplaceRunFile(const std::filesystem::path& path, const std::string& content) {
  std::string error;
  if (!ReplaceFile(path.string(), content, &error)) return absl::InternalError(absl::StrCat("cannot write ", error));
  return absl::OkStatus();
}

}  // namespace rlscope::collector
