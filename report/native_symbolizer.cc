#include "report/native_symbolizer.h"

#include <elf.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "format/input_file.h"
#include "report/demangle.h"

namespace rlscope::report {

namespace {

// The largest shared object read (libtorch_cuda.so is ~1.5 GB): a module
// path in a trace is input too, and may name /dev/zero or a FIFO.
constexpr size_t kMaxObjectBytes = size_t{8} << 30;

std::string ReadFile(const std::string& path) {
  std::string content, error;
  if (!ReadInputFile(path, kMaxObjectBytes, Symlinks::kFollow, &content, &error)) return "";  // No names.
  return content;
}

// Reads T at `offset` of `file`, or returns false when out of range.
template <typename T>
bool ReadAt(const std::string& file, uint64_t offset, T* out) {
  if (offset > file.size() || file.size() - offset < sizeof(T)) return false;
  memcpy(out, file.data() + offset, sizeof(T));
  return true;
}

}  // namespace

std::string NativeSymbolizer::NormaliseDemangled(const std::string& demangled) {
  // Cut the parameter list: the '(' matching the last ')' (qualifiers such
  // as "const" may follow it).
  std::string name = demangled;
  const size_t close = name.rfind(')');
  if (close != std::string::npos) {
    int depth = 0;
    for (size_t i = close + 1; i-- > 0;) {
      if (name[i] == ')') ++depth;
      if (name[i] == '(' && --depth == 0) {
        name.resize(i);
        break;
      }
    }
  }
  std::string normalised;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == ':' && i + 1 < name.size() && name[i + 1] == ':') {
      normalised += '.';
      ++i;
    } else {
      normalised += name[i];
    }
  }
  return normalised;
}

NativeSymbolizer::ObjectSymbols& NativeSymbolizer::Load(const std::string& path) {
  auto [it, inserted] = objects_.try_emplace(path, std::make_unique<ObjectSymbols>());
  ObjectSymbols& object = *it->second;
  if (!inserted) return object;
  const std::string file = ReadFile(path);
  Elf64_Ehdr header;
  if (!ReadAt(file, 0, &header) || memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_shentsize != sizeof(Elf64_Shdr)) {
    return object;  // Not a 64-bit ELF (or gone): no names.
  }
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  for (size_t i = 0; i < sections.size(); ++i) {
    if (!ReadAt(file, header.e_shoff + i * sizeof(Elf64_Shdr), &sections[i])) return object;
  }
  // .symtab has every function; stripped objects keep only .dynsym.
  const Elf64_Shdr* table = nullptr;
  for (uint32_t type : {SHT_SYMTAB, SHT_DYNSYM}) {
    for (const Elf64_Shdr& section : sections) {
      if (section.sh_type == type && section.sh_link < sections.size()) table = &section;
    }
    if (table != nullptr) break;
  }
  if (table == nullptr) return object;
  const Elf64_Shdr& strings = sections[table->sh_link];
  if (strings.sh_offset > file.size() || file.size() - strings.sh_offset < strings.sh_size) return object;
  object.names.assign(file.data() + strings.sh_offset, strings.sh_size);
  for (uint64_t offset = table->sh_offset; offset + sizeof(Elf64_Sym) <= table->sh_offset + table->sh_size;
       offset += sizeof(Elf64_Sym)) {
    Elf64_Sym symbol;
    if (!ReadAt(file, offset, &symbol)) break;
    if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_value == 0 || symbol.st_name >= object.names.size()) {
      continue;
    }
    object.symbols.push_back({symbol.st_value, symbol.st_size, symbol.st_name});
  }
  std::sort(object.symbols.begin(), object.symbols.end(),
            [](const Symbol& a, const Symbol& b) { return a.address < b.address; });
  return object;
}

const std::string& NativeSymbolizer::RuleName(const std::string& path, uint64_t load_bias, uint64_t address) {
  ObjectSymbols& object = Load(path);
  const uint64_t file_address = address - load_bias;
  auto it = std::upper_bound(object.symbols.begin(), object.symbols.end(), file_address,
                             [](uint64_t value, const Symbol& symbol) { return value < symbol.address; });
  if (it == object.symbols.begin()) return empty_;
  Symbol& symbol = *std::prev(it);
  if (symbol.size != 0 && file_address >= symbol.address + symbol.size) return empty_;
  if (symbol.rule_name < 0) {
    symbol.rule_name = static_cast<int32_t>(rule_names_.size());
    rule_names_.push_back(NormaliseDemangled(Demangle(std::string(object.names.c_str() + symbol.name_offset))));
  }
  return rule_names_[static_cast<size_t>(symbol.rule_name)];
}

}  // namespace rlscope::report
