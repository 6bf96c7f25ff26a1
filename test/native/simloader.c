/* libsimloader.so: has DT_RUNPATH $ORIGIN/loader_sub and dlopens
   libsimleaf.so by bare name, which only that RUNPATH finds. glibc searches
   the *caller's* RUNPATH: an interposed dlopen that hid the caller would
   fail here. */
#include <dlfcn.h>

int simloader_open_leaf(void) {
  void* handle = dlopen("libsimleaf.so", RTLD_NOW | RTLD_LOCAL);
  if (handle == 0) return 0;
  int (*leaf)(void) = (int (*)(void))dlsym(handle, "simleaf_answer");
  return leaf != 0 && leaf() == 42;
}
