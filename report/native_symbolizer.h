// NativeSymbolizer: names the function that holds a native address, from
// the ELF symbol table (.symtab, else .dynsym) of the file the process had
// loaded there - in the collector, never in the profiled process. Names are
// demangled and normalised for rule matching: "ns::Agent::SelectAction(int)"
// becomes "ns.Agent.SelectAction", the same shape as a Python qualname.
#ifndef RLSCOPE_REPORT_NATIVE_SYMBOLIZER_H_
#define RLSCOPE_REPORT_NATIVE_SYMBOLIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace rlscope::report {

class NativeSymbolizer {
 public:
  // RuleName: the normalised name of the function at `address` in the
  // object at `path` (loaded with `load_bias`), or "" when unknown.
  const std::string& RuleName(const std::string& path, uint64_t load_bias, uint64_t address);

  // NormaliseDemangled: "a::B::f(int) const" -> "a.B.f" (exposed for tests).
  static std::string NormaliseDemangled(const std::string& demangled);

 private:
  struct Symbol {
    uint64_t address;
    uint64_t size;
    uint32_t name_offset;
    int32_t rule_name = -1;  // Index into rule_names_ once computed.
  };
  struct ObjectSymbols {
    std::vector<Symbol> symbols;  // Sorted by address.
    std::string names;            // The string table.
  };
  ObjectSymbols& Load(const std::string& path);

  absl::flat_hash_map<std::string, std::unique_ptr<ObjectSymbols>> objects_;
  std::vector<std::string> rule_names_;
  std::string empty_;
};

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_NATIVE_SYMBOLIZER_H_
