#include "preload/raw_log.h"

#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rlscope::preload {

namespace {

constinit bool g_quiet = false;  // RLSCOPE_QUIET=1 at start-up.

void WriteLine(const char* format, va_list args) {
  const int saved_errno = errno;  // Never disturb the program's errno.
  char line[512];
  int used = snprintf(line, sizeof(line), "rlscope[%d]: ", static_cast<int>(getpid()));
  int more = vsnprintf(line + used, sizeof(line) - used - 1, format, args);
  used = (more < 0) ? used : used + more;
  if (used > static_cast<int>(sizeof(line)) - 2) used = sizeof(line) - 2;
  line[used++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, line, used);
  (void)ignored;
  errno = saved_errno;
}

}  // namespace

void InitRawLog() {
  const char* quiet = getenv("RLSCOPE_QUIET");
  g_quiet = quiet != nullptr && strcmp(quiet, "1") == 0;
}

void RawLog(const char* format, ...) {
  va_list args;
  va_start(args, format);
  WriteLine(format, args);
  va_end(args);
}

void RawNotice(const char* format, ...) {
  if (g_quiet) return;
  va_list args;
  va_start(args, format);
  WriteLine(format, args);
  va_end(args);
}

}  // namespace rlscope::preload
