// LibraryClassifier: which stack level native code belongs to, from the
// `library` rules (rule_file.h) matched against the shared object that
// holds an address: its installed package (folder and, from RECORD files,
// distribution), its file name, its path, and the module of the Python
// code that called it. Unmatched code is Native.
#ifndef RLSCOPE_REPORT_LIBRARY_CLASSIFIER_H_
#define RLSCOPE_REPORT_LIBRARY_CLASSIFIER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "format/rule_file.h"
#include "report/category.h"
#include "report/package_records.h"

namespace rlscope::report {

// LibraryCategoryNamed: the category a library rule names (one of
// format's kLibraryCategories); Native for any other name.
Category LibraryCategoryNamed(std::string_view name);

class LibraryClassifier {
 public:
  explicit LibraryClassifier(std::vector<LibraryRule> rules);
  // Classify: the category of code in the library at `path` (cached),
  // called from Python code of module `caller` ("" when not called from
  // Python, or from code of no module: the user's own files).
  Category Classify(const std::string& path, const std::string& caller = "");
  // HasCallerRules: some rule has caller=, so the caller matters.
  bool HasCallerRules() const { return has_caller_rules_; }

 private:
  // PackageNames: the names package= matches for the file at `path`.
  std::vector<std::string> PackageNames(const std::string& path);

  std::vector<LibraryRule> rules_;
  PackageRecords records_;
  bool has_caller_rules_ = false;
  // By path, then '\0' and the caller where a caller= rule could apply.
  absl::flat_hash_map<std::string, Category> cache_;
};

// ModuleMap: address ranges of loaded libraries, as a process reported them.
class ModuleMap {
 public:
  struct Range {
    uint64_t begin;
    uint64_t end;
    size_t order;  // Later additions win.
    std::string path;
    uint64_t load_bias;
  };

  // Add: a later range over an overlapping address replaces the earlier.
  void Add(std::string path, uint64_t begin, uint64_t end, uint64_t load_bias = 0);
  // Find: the range holding `address`, or nullptr.
  const Range* Find(uint64_t address);
  // PathOf: the library holding `address`, or nullptr.
  const std::string* PathOf(uint64_t address) {
    const Range* range = Find(address);
    return range != nullptr ? &range->path : nullptr;
  }

 private:
  std::vector<Range> ranges_;
  size_t sorted_count_ = 0;        // ranges_[0, sorted_count_) are sorted for Find.
  std::vector<uint64_t> max_end_;  // max_end_[i]: the furthest end of ranges_[0..i].
};

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_LIBRARY_CLASSIFIER_H_
