/* See simtest.h. Built with unwind tables so C++ exceptions can pass. */
#include "test/native/simtest.h"

#include <errno.h>
#include <stdarg.h>
#include <time.h>

static unsigned long Mix(unsigned long hash, unsigned long value) { return (hash ^ value) * 1099511628211ul; }
static double MixD(double accumulated, double value, int position) {
  return accumulated * 1.0000001 + value * (double)(position + 1);
}

int simtest_add(int a, int b) { return a + b; }

long simtest_int_args(long a0, long a1, long a2, long a3, long a4, long a5, long a6, long a7, long a8, long a9) {
  unsigned long h = 14695981039346656037ul;
  const long values[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
  for (int i = 0; i < 10; ++i) h = Mix(h, (unsigned long)values[i]);
  return (long)h;
}

double simtest_double_args(double d0, double d1, double d2, double d3, double d4, double d5, double d6, double d7,
                           double d8, double d9, double d10, double d11) {
  const double values[] = {d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11};
  double r = 0.5;
  for (int i = 0; i < 12; ++i) r = MixD(r, values[i], i);
  return r;
}

double simtest_mixed_args(int i0, double d0, long i1, float f1, long i2, double d2, char c3, double d3, long i4,
                          double d4, short s5, double d5, long i6, double d6, long i7, double d7, double d8, long i8,
                          float f9, SimBig big) {
  unsigned long h = Mix(
      Mix(Mix(Mix(Mix(Mix(Mix(Mix(Mix(1, (unsigned long)i0), (unsigned long)i1), (unsigned long)i2), (unsigned long)c3),
                      (unsigned long)i4),
                  (unsigned long)s5),
              (unsigned long)i6),
          (unsigned long)i7),
      (unsigned long)i8);
  for (int i = 0; i < 5; ++i) h = Mix(h, (unsigned long)big.v[i]);
  const double values[] = {d0, f1, d2, d3, d4, d5, d6, d7, d8, f9};
  double r = (double)(h >> 11);
  for (int i = 0; i < 10; ++i) r = MixD(r, values[i], i);
  return r;
}

long simtest_big_arg(long a, SimBig big, double d) {
  unsigned long h = Mix(7, (unsigned long)a);
  for (int i = 0; i < 5; ++i) h = Mix(h, (unsigned long)big.v[i]);
  return (long)Mix(h, (unsigned long)(long)(d * 1e6));
}

SimPair simtest_pair(long a, long b) {
  SimPair pair = {(long)Mix((unsigned long)a, (unsigned long)b), (long)Mix((unsigned long)b, (unsigned long)a)};
  return pair;
}

SimVec2 simtest_vec2(double x, double y) {
  SimVec2 v = {x * 3.25 - y, y / 7.0 + x};
  return v;
}

SimMixed simtest_mixed(double x, long n) {
  SimMixed m = {x * (double)n + 0.125, n * 31 + (long)x};
  return m;
}

SimBig simtest_big(long seed) {
  SimBig big;
  unsigned long h = (unsigned long)seed;
  for (int i = 0; i < 5; ++i) big.v[i] = (long)(h = Mix(h, (unsigned long)i));
  return big;
}

double simtest_double(double x) { return x * x * 0.75 + 1.0 / (x + 3.0); }

float simtest_float(float x) { return x * 0.5f - 2.25f; }

long double simtest_long_double(long double x, long double y) { return x / 3.0L + y * 1.000000000000000001L; }

double simtest_variadic(int count, ...) {
  va_list args;
  va_start(args, count);
  double r = 0.25;
  for (int i = 0; i < count; ++i) {
    const long n = va_arg(args, long);
    const double d = va_arg(args, double);
    r = MixD(r, (double)n, i) + MixD(0.0, d, i);
  }
  va_end(args);
  return r;
}

long simtest_recursive(int depth, void* self) {
  if (depth <= 0) return 1;
  long (*next)(int, void*) = (long (*)(int, void*))self;
  return depth * 3 + next(depth - 1, self);
}

void simtest_busy_wait_ns(long duration_ns) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < duration_ns);
}

int simtest_call(void (*callback)(void*), void* argument) {
  callback(argument);
  return 1;
}

int simtest_set_errno(int value) {
  errno = value;
  return value;
}

int simother_unhooked(int x) { return x * 2 + 1; }
