// ElfImage: read-only view of a loaded ELF object's dynamic section: its
// symbol table, hash tables, relocations and load segments. Reads memory the
// loader mapped; makes no dl* call, allocates nothing, so it can be used
// anywhere (including before the preload's own dlsym is resolved).
#ifndef RLSCOPE_PRELOAD_ELF_IMAGE_H_
#define RLSCOPE_PRELOAD_ELF_IMAGE_H_

#include <elf.h>
#include <link.h>

#include <cstddef>
#include <cstdint>

namespace rlscope::preload {

class ElfImage {
 public:
  // From dl_iterate_phdr's view of an object. `name` must outlive the image.
  ElfImage(uintptr_t base, const ElfW(Phdr) * phdr, int phnum, const char* name);

  bool valid() const { return symtab_ != nullptr && strtab_ != nullptr; }
  uintptr_t base() const { return base_; }
  const char* name() const { return name_; }

  // Contains: whether `address` lies in one of the object's PT_LOAD segments.
  bool Contains(uintptr_t address) const;
  // InRelro: whether `address` lies in the part of PT_GNU_RELRO that the
  // loader made read-only (whole pages only, as ld.so rounds it).
  bool InRelro(uintptr_t address) const;
  // Needs: whether one of the object's DT_NEEDED entries is `file_name`
  // (a soname such as "libgloo.so.0").
  bool Needs(const char* file_name) const;
  // Soname: its DT_SONAME, or "" when it has none.
  const char* Soname() const;
  bool HasRunpath() const { return has_runpath_; }
  bool HasRpath() const { return has_rpath_; }

  // Definition: address of the function `name` defined by this object (the
  // default version when versioned; functions only). Returns 0 if it is not
  // defined here, and for GNU indirect functions (their address is the
  // resolver's, not the function's).
  uintptr_t Definition(const char* name) const;

  // Import: one GOT slot that the loader fills with a symbol's address.
  struct Import {
    const char* name;
    void** slot;
    bool defined_here;  // The object itself defines the symbol (preemptible).
  };
  // ForEachImport: R_X86_64_JUMP_SLOT (PLT) and R_X86_64_GLOB_DAT (-fno-plt
  // calls, address-taking) relocations, in table order. Stops early when
  // `visit` returns false.
  template <typename Visit>
  void ForEachImport(Visit&& visit) const;

 private:
  const ElfW(Sym) * FindSymbol(const char* name) const;
  const ElfW(Sym) * FindGnu(const char* name) const;
  const ElfW(Sym) * FindSysv(const char* name) const;
  bool Matches(const ElfW(Sym) * symbol, uint32_t index, const char* name) const;
  template <typename Visit>
  bool VisitRelocations(const ElfW(Rela) * table, size_t bytes, size_t skip, Visit& visit) const;

  uintptr_t base_;
  const ElfW(Phdr) * phdr_;
  int phnum_;
  const char* name_;
  const ElfW(Dyn) * dynamic_ = nullptr;
  const ElfW(Sym) * symtab_ = nullptr;
  const char* strtab_ = nullptr;
  const uint32_t* gnu_hash_ = nullptr;
  const uint32_t* sysv_hash_ = nullptr;
  const ElfW(Half) * versym_ = nullptr;
  const ElfW(Rela) * jmprel_ = nullptr;
  size_t jmprel_bytes_ = 0;
  const ElfW(Rela) * rela_ = nullptr;
  size_t rela_bytes_ = 0;
  size_t rela_relative_count_ = 0;
  uintptr_t relro_begin_ = 0;
  uintptr_t relro_end_ = 0;
  bool has_runpath_ = false;
  bool has_rpath_ = false;
};

template <typename Visit>
bool ElfImage::VisitRelocations(const ElfW(Rela) * table, size_t bytes, size_t skip, Visit& visit) const {
  const size_t count = bytes / sizeof(ElfW(Rela));
  for (size_t i = skip; i < count; ++i) {
    const ElfW(Rela)& rela = table[i];
    const uint32_t type = ELF64_R_TYPE(rela.r_info);
    if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
    const uint32_t index = ELF64_R_SYM(rela.r_info);
    if (index == 0) continue;
    const ElfW(Sym)& symbol = symtab_[index];
    const Import import{strtab_ + symbol.st_name, reinterpret_cast<void**>(base_ + rela.r_offset),
                        symbol.st_shndx != SHN_UNDEF};
    if (!visit(import)) return false;
  }
  return true;
}

template <typename Visit>
void ElfImage::ForEachImport(Visit&& visit) const {
  if (!valid()) return;
  if (jmprel_ != nullptr && !VisitRelocations(jmprel_, jmprel_bytes_, 0, visit)) return;
  // R_X86_64_RELATIVE entries come first and are counted by DT_RELACOUNT:
  // skipping them keeps the scan of a large library (torch) short.
  if (rela_ != nullptr) VisitRelocations(rela_, rela_bytes_, rela_relative_count_, visit);
}

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_ELF_IMAGE_H_
