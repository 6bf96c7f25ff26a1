#include "collector/report_room.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

namespace rlscope {

ReportRoom::ReportRoom(const std::string& run_dir, bool hold)
    : path_((std::filesystem::path(run_dir) / kFileName).string()) {
  if (!hold) return;
  struct statvfs filesystem {};
  if (statvfs(run_dir.c_str(), &filesystem) != 0) return;
  const uint64_t free = static_cast<uint64_t>(filesystem.f_bavail) * filesystem.f_frsize;
  const uint64_t want = std::min<uint64_t>(kMaxBytes, free / 4);
  if (want == 0) return;
  const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const bool held = posix_fallocate(fd, 0, static_cast<off_t>(want)) == 0;
  close(fd);
  if (held) {
    bytes_ = want;
  } else {
    unlink(path_.c_str());
  }
}

void ReportRoom::Release() {
  if (bytes_ == 0) return;
  unlink(path_.c_str());
  bytes_ = 0;
}

bool StaleReportRoomRemoved(const std::string& run_dir) {
  return unlink((std::filesystem::path(run_dir) / ReportRoom::kFileName).c_str()) == 0;
}

}  // namespace rlscope
