/* libsimtest.so: a stand-in simulator library whose functions cover the
   x86-64 calling convention's shapes (arguments in registers and on the
   stack, aggregates, every kind of result, variadics), so a signature-blind
   trampoline can be checked bit for bit. Results mix every argument in an
   order-dependent way: a swapped or clobbered argument changes them. */
#ifndef RLSCOPE_TEST_NATIVE_SIMTEST_H_
#define RLSCOPE_TEST_NATIVE_SIMTEST_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  long a, b;
} SimPair; /* Returned in rax:rdx. */
typedef struct {
  double x, y;
} SimVec2; /* Returned in xmm0:xmm1. */
typedef struct {
  double x;
  long n;
} SimMixed; /* Returned in xmm0 and rax. */
typedef struct {
  long v[5];
} SimBig; /* In memory: hidden pointer, or copied onto the stack. */

int simtest_add(int a, int b);
/* 10 integers: 6 in registers, 4 on the stack. */
long simtest_int_args(long a0, long a1, long a2, long a3, long a4, long a5, long a6, long a7, long a8, long a9);
/* 12 doubles: 8 in xmm0-7, 4 on the stack. */
double simtest_double_args(double d0, double d1, double d2, double d3, double d4, double d5, double d6, double d7,
                           double d8, double d9, double d10, double d11);
/* Integers and floating point interleaved, overflowing both register
   files, plus an aggregate passed by value on the stack. */
double simtest_mixed_args(int i0, double d0, long i1, float f1, long i2, double d2, char c3, double d3, long i4,
                          double d4, short s5, double d5, long i6, double d6, long i7, double d7, double d8, long i8,
                          float f9, SimBig big);
long simtest_big_arg(long a, SimBig big, double d);
SimPair simtest_pair(long a, long b);
SimVec2 simtest_vec2(double x, double y);
SimMixed simtest_mixed(double x, long n);
SimBig simtest_big(long seed);
double simtest_double(double x);
float simtest_float(float x);
long double simtest_long_double(long double x, long double y); /* Arguments on the stack, result in st(0). */
/* `count` pairs (long, double): al carries the number of vector registers. */
double simtest_variadic(int count, ...);
/* Calls `self` (cast to this function's type) with depth - 1 until 0:
   through a trampoline that makes nested hooked calls. */
long simtest_recursive(int depth, void* self);
void simtest_busy_wait_ns(long duration_ns);
/* Calls `callback(argument)`: lets a test throw or longjmp through a
   hooked C frame. Returns 1 if the callback returned. */
int simtest_call(void (*callback)(void*), void* argument);
/* Sets errno to `value` and returns it: errno must survive the exit path. */
int simtest_set_errno(int value);
/* Not covered by the test rules (simtest_*): must never be recorded. */
int simother_unhooked(int x);

#ifdef __cplusplus
}
#endif

#endif /* RLSCOPE_TEST_NATIVE_SIMTEST_H_ */
