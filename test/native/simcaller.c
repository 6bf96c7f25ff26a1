/* A library calling libsimtest through its GOT, built three times:
   libsimcaller_now.so  (simnow_*):  -fno-plt calls (GLOB_DAT slots), -z now,
                                     -z relro: the GOT is read-only (RELRO);
   libsimcaller_lazy.so (simlazy_*): classic PLT calls, lazy binding: slots
                                     still point into its own PLT until the
                                     first call. Tests dlopen it late.
   libsimcaller_late.so (simlate_*): the same, but not linked with
                                     libsimtest: it can be loaded before the
                                     simulator, whose symbols a later
                                     RTLD_GLOBAL dlopen provides. */
#include "test/native/simtest.h"

#ifdef SIMCALLER_LAZY
#define CALLER(name) simlazy_##name
#elif defined(SIMCALLER_LATE)
#define CALLER(name) simlate_##name
#else
#define CALLER(name) simnow_##name
#endif

long CALLER(int_args)(long a0, long a1, long a2, long a3, long a4, long a5, long a6, long a7, long a8, long a9) {
  return simtest_int_args(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9);
}

double CALLER(double_args)(double d0, double d1, double d2, double d3, double d4, double d5, double d6, double d7,
                           double d8, double d9, double d10, double d11) {
  return simtest_double_args(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11);
}

SimPair CALLER(pair)(long a, long b) { return simtest_pair(a, b); }

long double CALLER(long_double)(long double x, long double y) { return simtest_long_double(x, y); }

double CALLER(variadic2)(long n0, double d0, long n1, double d1) { return simtest_variadic(2, n0, d0, n1, d1); }

/* Not a tail call: returns into this frame after each hooked call. */
int CALLER(busy_loop)(int count, long duration_ns) {
  int done = 0;
  for (int i = 0; i < count; ++i) {
    simtest_busy_wait_ns(duration_ns);
    ++done;
  }
  return done;
}

int CALLER(add)(int a, int b) { return simtest_add(a, b) + 0 * b; }

int CALLER(unhooked)(int x) { return simother_unhooked(x); }

#ifndef SIMCALLER_LATE
/* Takes the address through the GOT (R_X86_64_GLOB_DAT), which is bound at
   load: not in the library loaded before libsimtest. */
void* CALLER(address_of_add)(void) { return (void*)&simtest_add; }
#endif
