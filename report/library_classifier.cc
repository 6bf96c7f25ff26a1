#include "report/library_classifier.h"

#include <algorithm>

#include "format/code_origin.h"

namespace rlscope::report {

Category LibraryCategoryNamed(std::string_view name) {
  for (int32_t c = 0; c < static_cast<int32_t>(Category::kCount); ++c) {
    if (CategoryName(static_cast<Category>(c)) == name) return static_cast<Category>(c);
  }
  return Category::kNative;  // The rule file admits no other names (kLibraryCategories).
}

std::vector<std::string> LibraryClassifier::PackageNames(const std::string& path) {
  std::vector<std::string> names;
  CodeOrigin origin = OriginOfPath(path);
  if (origin.kind != CodeOrigin::Kind::kPackage) return names;
  names.push_back(std::move(origin.package));
  if (const Distribution* owner = records_.OwnerOf(path)) {
    names.push_back(owner->name);
    names.insert(names.end(), owner->top_level.begin(), owner->top_level.end());
  }
  return names;
}

LibraryClassifier::LibraryClassifier(std::vector<LibraryRule> rules) : rules_(std::move(rules)) {
  has_caller_rules_ =
      std::any_of(rules_.begin(), rules_.end(), [](const LibraryRule& rule) { return !rule.caller_glob.empty(); });
}

Category LibraryClassifier::Classify(const std::string& path, const std::string& caller) {
  // Without caller= rules the caller changes nothing: one entry per path.
  const bool by_caller = has_caller_rules_ && !caller.empty();
  std::string key;
  if (by_caller) key = path + '\0' + caller;
  auto it = cache_.find(by_caller ? key : path);
  if (it != cache_.end()) return it->second;
  if (!by_caller) key = path;
  const size_t slash = path.rfind('/');
  const std::string file_name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::vector<std::string> packages = PackageNames(path);
  auto matches_package = [&](const std::string& glob) {
    return std::any_of(packages.begin(), packages.end(),
                       [&](const std::string& name) { return MatchesGlob(glob, name.c_str()); });
  };
  Category category = Category::kNative;
  for (const LibraryRule& rule : rules_) {
    if (rule.path_glob.empty() && rule.package_glob.empty() && rule.lib_glob.empty() && rule.caller_glob.empty()) {
      continue;
    }
    if (!rule.caller_glob.empty() && (!by_caller || !MatchesGlob(rule.caller_glob, caller.c_str()))) continue;
    if (!rule.path_glob.empty() && !MatchesGlob(rule.path_glob, path.c_str())) continue;
    if (!rule.package_glob.empty() && !matches_package(rule.package_glob)) continue;
    if (!rule.lib_glob.empty() && !MatchesGlob(rule.lib_glob, file_name.c_str())) continue;
    category = LibraryCategoryNamed(rule.category);
    break;
  }
  cache_.emplace(std::move(key), category);
  return category;
}

void ModuleMap::Add(std::string path, uint64_t begin, uint64_t end, uint64_t load_bias) {
  if (end <= begin) return;
  ranges_.push_back({begin, end, ranges_.size(), std::move(path), load_bias});
}

const ModuleMap::Range* ModuleMap::Find(uint64_t address) {
  if (sorted_count_ < ranges_.size()) {
    // By begin; among ranges with the same begin, the latest first. Only
    // the ranges added since are sorted, then merged in: every batch that
    // lists a changed set of modules lists them all, and a trace decoded
    // as it is written looks ranges up after each batch.
    const auto earlier = [](const Range& a, const Range& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.order > b.order;
    };
    const auto added = ranges_.begin() + static_cast<std::ptrdiff_t>(sorted_count_);
    std::sort(added, ranges_.end(), earlier);
    std::inplace_merge(ranges_.begin(), added, ranges_.end(), earlier);
    sorted_count_ = ranges_.size();
    max_end_.resize(ranges_.size());
    uint64_t reach = 0;
    for (size_t i = 0; i < ranges_.size(); ++i) max_end_[i] = reach = std::max(reach, ranges_[i].end);
  }
  // The ranges beginning at or before the address, walked back to the
  // latest that contains it, as far as any range before reaches past it
  // (libraries loaded in turn at one place overlap as often as that
  // happened).
  const auto after = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                                      [](uint64_t value, const Range& range) { return value < range.begin; });
  const Range* best = nullptr;
  for (size_t i = static_cast<size_t>(after - ranges_.begin()); i > 0 && max_end_[i - 1] > address; --i) {
    const Range& range = ranges_[i - 1];
    if (address < range.end && (best == nullptr || range.order > best->order)) best = &range;
  }
  return best;
}

}  // namespace rlscope::report
