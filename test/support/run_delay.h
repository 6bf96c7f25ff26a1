/* run_delay.h: how long the calling thread has waited, runnable, for a CPU
   (the kernel's schedstat run_delay, /proc/thread-self/schedstat field 2).

   Test programs that print a ground truth measured on the wall clock also
   print the run delay over the same span: a preemption that lands between
   rlscope's timestamps and the program's own counts on one side only, so
   the tests allow exactly that much more than their fixed margin (on a
   quiet machine it is about 0, and the margin stays as strict). C and C++.
   Returns -1 where the kernel does not report it (no CONFIG_SCHED_INFO);
   callers then add nothing. */
#ifndef RLSCOPE_TEST_SUPPORT_RUN_DELAY_H_
#define RLSCOPE_TEST_SUPPORT_RUN_DELAY_H_

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

/* RlscopeTestRunDelayNsFrom: the same, read again from an fd the thread
   opened on /proc/thread-self/schedstat (cheaper in a loop). */
static inline long long RlscopeTestRunDelayNsFrom(int fd) {
  char text[128];
  if (fd < 0) return -1;
  const ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
  if (n <= 0) return -1;
  text[n] = '\0';
  char* rest = NULL;
  strtoll(text, &rest, 10); /* Time on a CPU: not wanted. */
  if (rest == NULL || rest == text) return -1;
  return strtoll(rest, NULL, 10);
}

static inline long long RlscopeTestRunDelayNs(void) {
  const int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  const long long ns = RlscopeTestRunDelayNsFrom(fd);
  if (fd >= 0) close(fd);
  return ns;
}

#endif /* RLSCOPE_TEST_SUPPORT_RUN_DELAY_H_ */
