// ResolveNextSymbol: finds the definition an interposed function would have
// reached without the preload.
//
// Order: dlvsym/dlsym(RTLD_NEXT) (libraries in the global scope after us),
// then every loaded object whose path contains `library_hint`, reached via
// dl_iterate_phdr + dlopen(RTLD_NOLOAD): libraries loaded RTLD_LOCAL (torch's
// libcudart) are invisible to RTLD_NEXT. Our own definitions are skipped.
// Not for the hot path: callers cache the result.
#ifndef RLSCOPE_PRELOAD_REAL_SYMBOL_H_
#define RLSCOPE_PRELOAD_REAL_SYMBOL_H_

namespace rlscope::preload {

// `version` may be null (unversioned lookup); `library_hint` may be null
// (RTLD_NEXT only). Returns null when no other definition is loaded.
void* ResolveNextSymbol(const char* name, const char* version, const char* library_hint);

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_REAL_SYMBOL_H_
