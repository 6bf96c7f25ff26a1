#include "preload/problem_notice.h"

#include <cstdarg>
#include <cstdio>

#include "preload/gpu_activity_queue.h"
#include "preload/raw_log.h"

namespace rlscope::preload {

void ReportProblem(const char* topic, const char* format, ...) {
  char message[sizeof(CaptureNotice::message)];
  va_list arguments;
  va_start(arguments, format);
  vsnprintf(message, sizeof(message), format, arguments);
  va_end(arguments);
  RawLog("%s", message);
  CaptureNotices::Post(topic, "problem", message);
}

}  // namespace rlscope::preload
