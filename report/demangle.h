// Demangle: a C++ symbol's demangled name ("_ZN5torch3addEv" ->
// "torch::add()"); a name that is not a mangled C++ one (a C function, an
// extern "C" kernel) comes back as it is.
#ifndef RLSCOPE_REPORT_DEMANGLE_H_
#define RLSCOPE_REPORT_DEMANGLE_H_

#include <string>

namespace rlscope::report {

std::string Demangle(const std::string& name);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_DEMANGLE_H_
