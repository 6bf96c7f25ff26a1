#include "report/demangle.h"

#include <cxxabi.h>

#include <cstdlib>

namespace rlscope::report {

std::string Demangle(const std::string& name) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;
  std::string result(demangled);
  free(demangled);
  return result;
}

}  // namespace rlscope::report
