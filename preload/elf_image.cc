#include "preload/elf_image.h"

#include <unistd.h>

#include <cstring>

namespace rlscope::preload {

namespace {

// glibc rewrites most d_ptr entries of a writable dynamic section to
// absolute addresses at load time; the vDSO's (read-only) stay offsets.
// Offsets are below the load base, addresses are not.
uintptr_t Absolute(uintptr_t base, ElfW(Addr) pointer) { return pointer < base ? base + pointer : pointer; }

uint32_t GnuHash(const char* name) {
  uint32_t hash = 5381;
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(name); *p != 0; ++p) hash = hash * 33 + *p;
  return hash;
}

uint32_t SysvHash(const char* name) {
  uint32_t hash = 0;
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(name); *p != 0; ++p) {
    hash = (hash << 4) + *p;
    const uint32_t high = hash & 0xf0000000u;
    if (high != 0) hash ^= high >> 24;
    hash &= ~high;
  }
  return hash;
}

uintptr_t PageSize() {
  static const uintptr_t size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return size;
}

}  // namespace

ElfImage::ElfImage(uintptr_t base, const ElfW(Phdr) * phdr, int phnum, const char* name)
    : base_(base), phdr_(phdr), phnum_(phnum), name_(name != nullptr ? name : "") {
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < phnum_; ++i) {
    if (phdr_[i].p_type == PT_DYNAMIC) dynamic = reinterpret_cast<const ElfW(Dyn)*>(base_ + phdr_[i].p_vaddr);
    if (phdr_[i].p_type == PT_GNU_RELRO) {
      // ld.so protects [start, end) rounded to whole pages, start down and
      // end down: a partial last page stays writable.
      const uintptr_t page = PageSize();
      relro_begin_ = (base_ + phdr_[i].p_vaddr) & ~(page - 1);
      relro_end_ = (base_ + phdr_[i].p_vaddr + phdr_[i].p_memsz) & ~(page - 1);
    }
  }
  if (dynamic == nullptr) return;
  dynamic_ = dynamic;
  bool plt_is_rela = true;
  for (const ElfW(Dyn)* entry = dynamic; entry->d_tag != DT_NULL; ++entry) {
    const ElfW(Addr) value = entry->d_un.d_ptr;
    switch (entry->d_tag) {
      case DT_SYMTAB: symtab_ = reinterpret_cast<const ElfW(Sym)*>(Absolute(base_, value)); break;
      case DT_STRTAB: strtab_ = reinterpret_cast<const char*>(Absolute(base_, value)); break;
      case DT_GNU_HASH: gnu_hash_ = reinterpret_cast<const uint32_t*>(Absolute(base_, value)); break;
      case DT_HASH: sysv_hash_ = reinterpret_cast<const uint32_t*>(Absolute(base_, value)); break;
      case DT_VERSYM: versym_ = reinterpret_cast<const ElfW(Half)*>(Absolute(base_, value)); break;
      case DT_JMPREL: jmprel_ = reinterpret_cast<const ElfW(Rela)*>(Absolute(base_, value)); break;
      case DT_PLTRELSZ: jmprel_bytes_ = entry->d_un.d_val; break;
      case DT_PLTREL: plt_is_rela = entry->d_un.d_val == DT_RELA; break;
      case DT_RELA: rela_ = reinterpret_cast<const ElfW(Rela)*>(Absolute(base_, value)); break;
      case DT_RELASZ: rela_bytes_ = entry->d_un.d_val; break;
      case DT_RELACOUNT: rela_relative_count_ = entry->d_un.d_val; break;
      case DT_RUNPATH: has_runpath_ = true; break;
      case DT_RPATH: has_rpath_ = true; break;
      default: break;
    }
  }
  if (!plt_is_rela) jmprel_ = nullptr;  // Not x86-64's format: leave it alone.
}

bool ElfImage::Needs(const char* file_name) const {
  if (dynamic_ == nullptr || strtab_ == nullptr || file_name == nullptr) return false;
  for (const ElfW(Dyn)* entry = dynamic_; entry->d_tag != DT_NULL; ++entry) {
    if (entry->d_tag == DT_NEEDED && strcmp(strtab_ + entry->d_un.d_val, file_name) == 0) return true;
  }
  return false;
}

const char* ElfImage::Soname() const {
  if (dynamic_ == nullptr || strtab_ == nullptr) return "";
  for (const ElfW(Dyn)* entry = dynamic_; entry->d_tag != DT_NULL; ++entry) {
    if (entry->d_tag == DT_SONAME) return strtab_ + entry->d_un.d_val;
  }
  return "";
}

bool ElfImage::Contains(uintptr_t address) const {
  for (int i = 0; i < phnum_; ++i) {
    if (phdr_[i].p_type != PT_LOAD) continue;
    const uintptr_t begin = base_ + phdr_[i].p_vaddr;
    if (address >= begin && address < begin + phdr_[i].p_memsz) return true;
  }
  return false;
}

bool ElfImage::InRelro(uintptr_t address) const { return address >= relro_begin_ && address < relro_end_; }

uintptr_t ElfImage::Definition(const char* name) const {
  const ElfW(Sym)* symbol = FindSymbol(name);
  if (symbol == nullptr || ELF64_ST_TYPE(symbol->st_info) != STT_FUNC) return 0;
  return base_ + symbol->st_value;
}

const ElfW(Sym) * ElfImage::FindSymbol(const char* name) const {
  if (!valid()) return nullptr;
  if (gnu_hash_ != nullptr) return FindGnu(name);
  if (sysv_hash_ != nullptr) return FindSysv(name);
  return nullptr;
}

bool ElfImage::Matches(const ElfW(Sym) * symbol, uint32_t index, const char* name) const {
  if (symbol->st_shndx == SHN_UNDEF || symbol->st_value == 0) return false;
  const int binding = ELF64_ST_BIND(symbol->st_info);
  if (binding != STB_GLOBAL && binding != STB_WEAK) return false;
  // 0x8000: a hidden (non-default) version, e.g. dlsym@GLIBC_2.2.5 next to
  // dlsym@@GLIBC_2.34. Plain lookups bind the default one.
  if (versym_ != nullptr && (versym_[index] & 0x8000) != 0) return false;
  return strcmp(strtab_ + symbol->st_name, name) == 0;
}

const ElfW(Sym) * ElfImage::FindGnu(const char* name) const {
  const uint32_t bucket_count = gnu_hash_[0];
  const uint32_t first_symbol = gnu_hash_[1];
  const uint32_t bloom_words = gnu_hash_[2];
  const uint32_t bloom_shift = gnu_hash_[3];
  if (bucket_count == 0 || bloom_words == 0) return nullptr;
  const auto* bloom = reinterpret_cast<const uint64_t*>(gnu_hash_ + 4);
  const uint32_t* buckets = reinterpret_cast<const uint32_t*>(bloom + bloom_words);
  const uint32_t* chain = buckets + bucket_count;
  const uint32_t hash = GnuHash(name);
  const uint64_t word = bloom[(hash / 64) % bloom_words];
  const uint64_t mask = (uint64_t{1} << (hash % 64)) | (uint64_t{1} << ((hash >> bloom_shift) % 64));
  if ((word & mask) != mask) return nullptr;
  uint32_t index = buckets[hash % bucket_count];
  if (index < first_symbol) return nullptr;
  for (;; ++index) {
    const uint32_t chain_hash = chain[index - first_symbol];
    if ((chain_hash | 1) == (hash | 1) && Matches(&symtab_[index], index, name)) return &symtab_[index];
    if ((chain_hash & 1) != 0) return nullptr;  // End of this bucket's chain.
  }
}

const ElfW(Sym) * ElfImage::FindSysv(const char* name) const {
  const uint32_t bucket_count = sysv_hash_[0];
  if (bucket_count == 0) return nullptr;
  const uint32_t* buckets = sysv_hash_ + 2;
  const uint32_t* chain = buckets + bucket_count;
  for (uint32_t index = buckets[SysvHash(name) % bucket_count]; index != STN_UNDEF; index = chain[index]) {
    if (Matches(&symtab_[index], index, name)) return &symtab_[index];
  }
  return nullptr;
}

}  // namespace rlscope::preload
