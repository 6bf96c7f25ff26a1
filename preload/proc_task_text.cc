#include "preload/proc_task_text.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

namespace rlscope::preload {

bool ReadTaskText(uint32_t tid, const char* file, char* text, size_t size) {
  if (size == 0) return false;
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/task/%u/%s", tid, file);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = pread(fd, text, size - 1, 0);
  close(fd);
  if (n <= 0) return false;
  text[n] = '\0';
  return true;
}

}  // namespace rlscope::preload
