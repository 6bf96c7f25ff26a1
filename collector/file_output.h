// FileOutput: writing bytes out whole, for the collector's files (traces,
// reports, diffs) and the terminal's status line.
#ifndef RLSCOPE_COLLECTOR_FILE_OUTPUT_H_
#define RLSCOPE_COLLECTOR_FILE_OUTPUT_H_

#include <cstddef>
#include <filesystem>
#include <string>

#include "absl/status/status.h"

namespace rlscope::collector {

// WriteAll: writes all `size` bytes to `fd` (retrying after EINTR and
// short writes); false with errno set when it could not (EIO for a write
// of 0 bytes).
bool WriteAll(int fd, const void* data, size_t size);

// WriteFile: `path` created or truncated, holding `content`. Errors:
// Internal "cannot write PATH".
absl::Status WriteFile(const std::filesystem::path& path, const std::string& content);

// ReplaceRunFile: a file of a run directory (report.json, report.txt, ...)
// replaced through a temporary file created exclusively beside it (mode
// 0600), so a link or FIFO planted at the name is never followed
// (output_file.h). For paths the user names (`diff -o /dev/stdout`),
// WriteFile. Errors: Internal "cannot write PATH: why".
absl::Status ReplaceRunFile(const std::filesystem::path& path, const std::string& content);

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_FILE_OUTPUT_H_
