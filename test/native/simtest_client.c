/* simtest_client LIBSIMCALLER_LAZY: a native program that reaches the
   simulator stand-in (libsimtest) every way a real one can:
     1. PLT calls from the program itself;
     2. a library dlopened by path, calling through its own PLT;
     3. dlsym on a handle (what ctypes does);
     4. a library that dlopens by bare name along its own RUNPATH.
   Prints every result bit for bit: the end-to-end test compares the output
   of a bare run with that of a profiled run. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "test/native/simtest.h"

int simloader_open_leaf(void);

static void PrintBits(const char* label, const void* value, size_t size) {
  const unsigned char* bytes = (const unsigned char*)value;
  printf("%s ", label);
  for (size_t i = 0; i < size; ++i) printf("%02x", bytes[i]);
  printf("\n");
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: simtest_client LIBSIMCALLER_LAZY\n");
    return 2;
  }
  /* 1. Through the program's PLT. */
  for (int i = 0; i < 3; ++i) simtest_busy_wait_ns(1000000);
  const long ints = simtest_int_args(1, -2, 3, -4, 5, -6, 7, -8, 9, -10);
  PrintBits("int_args", &ints, sizeof(ints));
  const double doubles = simtest_double_args(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2);
  PrintBits("double_args", &doubles, sizeof(doubles));
  const long double extended = simtest_long_double(1.0L / 3.0L, 2.5L);
  PrintBits("long_double", &extended, 10);
  const SimPair pair = simtest_pair(123456789, -987654321);
  PrintBits("pair", &pair, sizeof(pair));
  const double variadic = simtest_variadic(3, 1L, 0.5, 2L, 0.25, 3L, 0.125);
  PrintBits("variadic", &variadic, sizeof(variadic));

  /* 2. A library loaded late, calling through its own (lazy) PLT. */
  void* caller = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (caller == NULL) {
    fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
    return 1;
  }
  int (*busy_loop)(int, long) = (int (*)(int, long))dlsym(caller, "simlazy_busy_loop");
  printf("busy_loop %d\n", busy_loop(2, 1000000));

  /* 3. dlsym on a handle, as ctypes does. */
  void* simtest = dlopen("libsimtest.so", RTLD_NOW | RTLD_NOLOAD);
  long (*int_args)(long, long, long, long, long, long, long, long, long, long) =
      (long (*)(long, long, long, long, long, long, long, long, long, long))dlsym(simtest, "simtest_int_args");
  const long looked_up = int_args(1, -2, 3, -4, 5, -6, 7, -8, 9, -10);
  PrintBits("dlsym_int_args", &looked_up, sizeof(looked_up));
  void (*busy)(long) = (void (*)(long))dlsym(simtest, "simtest_busy_wait_ns");
  busy(1000000);

  /* 4. A bare-name dlopen that depends on the caller's RUNPATH. */
  printf("runpath_dlopen %d\n", simloader_open_leaf());
  return 0;
}
