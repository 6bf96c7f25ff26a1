/* A clock for MuJoCo's own profiler (mjcb_time), so a test can read how long
   MuJoCo itself says mj_step took (mjData.timer[mjTIMER_STEP]): a measure
   of simulator time independent of rlscope's trampolines. */
#include <time.h>

double rlscope_test_monotonic_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}
