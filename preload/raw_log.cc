#include "raw_log.h"

#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>

namespace rlscope::preload {

void RawLog(const char* format, ...) {
  const int saved_errno = errno;  // Never disturb the program's errno.
  char line[512];
  int used = snprintf(line, sizeof(line), "rlscope[%d]: ", static_cast<int>(getpid()));
  va_list args;
  va_start(args, format);
  int more = vsnprintf(line + used, sizeof(line) - used - 1, format, args);
  va_end(args);
  used = (more < 0) ? used : used + more;
  if (used > static_cast<int>(sizeof(line)) - 2) used = sizeof(line) - 2;
  line[used++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, line, used);
  (void)ignored;
  errno = saved_errno;
}

}  // namespace rlscope::preload
