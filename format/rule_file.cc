#include "format/rule_file.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <sstream>

#include "format/glob_match.h"
#include "format/input_file.h"

namespace rlscope {

namespace {

std::vector<std::string> SplitWords(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream stream(line);
  std::string word;
  while (stream >> word) words.push_back(word);
  return words;
}

std::vector<std::string> SplitOn(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(separator, begin);
    if (end == std::string::npos) end = text.size();
    if (end > begin) parts.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return parts;
}

constexpr char kLibraryUsage[] =
    "expected 'library CATEGORY PATH-GLOB' or 'library CATEGORY [package=GLOB] [lib=GLOB] [caller=MODULE-GLOB]'";

bool IsCategory(const std::string& word) {
  return std::find(std::begin(kLibraryCategories), std::end(kLibraryCategories), word) != std::end(kLibraryCategories);
}

}  // namespace

std::vector<std::string> ClassAttributesAskedFor(const std::vector<OperationRule>& rules) {
  std::vector<std::string> names;
  for (const OperationRule& rule : rules) {
    for (const std::vector<std::string>& group : rule.class_has) {
      for (const std::string& name : group) {
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      }
    }
  }
  return names;
}

bool MatchesClass(const OperationRule& rule, const ClassFacts& facts) {
  if (!rule.class_glob.empty() &&
      std::none_of(facts.hierarchy.begin(), facts.hierarchy.end(),
                   [&](const std::string& name) { return MatchesGlob(rule.class_glob, name.c_str()); })) {
    return false;
  }
  if (!rule.class_has.empty() && facts.hierarchy.empty()) return false;  // Not a method of a known class.
  for (const std::vector<std::string>& group : rule.class_has) {
    if (std::none_of(group.begin(), group.end(), [&](const std::string& name) {
          return std::find(facts.attributes.begin(), facts.attributes.end(), name) != facts.attributes.end();
        })) {
      return false;
    }
  }
  return true;
}

bool MatchesGlob(std::string_view glob, const char* text) {
  const std::string_view subject(text);
  size_t begin = 0;
  while (begin <= glob.size()) {
    size_t end = glob.find('|', begin);
    if (end == std::string_view::npos) end = glob.size();
    const std::string_view alternative = glob.substr(begin, end - begin);
    if (!alternative.empty() && GlobMatch(alternative, subject)) return true;
    begin = end + 1;
  }
  return false;
}

bool MatchesLocation(const OperationRule& rule, const char* filename, const char* module) {
  if (!rule.file_glob.empty() && !MatchesGlob(rule.file_glob, filename)) return false;
  // No module (the user's code) is no match, even for module=*.
  if (!rule.module_glob.empty() && (*module == '\0' || !MatchesGlob(rule.module_glob, module))) return false;
  return true;
}

bool ParseRules(std::string_view text, const std::string& source, RuleSet& rules, std::string* error) {
  std::vector<LibraryRule> libraries;
  std::istringstream lines{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    const std::vector<std::string> words = SplitWords(line);
    if (words.empty()) continue;
    auto fail = [&](const std::string& what) {
      if (error != nullptr) *error = source + ":" + std::to_string(number) + ": " + what;
      return false;
    };
    if (words[0] == "operation") {
      if (words.size() < 3) {
        return fail(
            "expected 'operation NAME QUALNAME-GLOB [module=GLOB] [file=GLOB] [class=GLOB] [class-has=NAMES] "
            "[user-code] [unless-inside=OPS]'");
      }
      OperationRule rule;
      rule.operation = words[1];
      rule.qualname_glob = GlobSet(words[2]);
      for (size_t i = 3; i < words.size(); ++i) {
        if (words[i].rfind("file=", 0) == 0) {
          rule.file_glob = words[i].substr(5);
        } else if (words[i].rfind("module=", 0) == 0) {
          rule.module_glob = words[i].substr(7);
          if (rule.module_glob.empty()) return fail("empty module= (expected a dotted module glob: torch.optim.*)");
        } else if (words[i].rfind("unless-inside=", 0) == 0) {
          rule.unless_inside = SplitOn(words[i].substr(14), ',');
        } else if (words[i].rfind("class=", 0) == 0 && words[i].size() > 6) {
          rule.class_glob = words[i].substr(6);
        } else if (words[i].rfind("class-has=", 0) == 0 && words[i].size() > 10) {
          for (const std::string& group : SplitOn(words[i].substr(10), ',')) {
            rule.class_has.push_back(SplitOn(group, '|'));
          }
        } else if (words[i] == "user-code") {
          rule.user_code_only = true;
        } else {
          return fail("unknown option '" + words[i] +
                      "' (expected module=, file=, class=, class-has=, user-code or unless-inside=)");
        }
      }
      rules.operations.push_back(std::move(rule));
    } else if (words[0] == "library") {
      if (words.size() < 3) return fail(kLibraryUsage);
      if (!IsCategory(words[1])) {
        return fail("unknown category '" + words[1] + "' (Backend, Simulator, Communication or Native)");
      }
      LibraryRule rule;
      rule.category = words[1];
      for (size_t i = 2; i < words.size(); ++i) {
        // A word is a path glob unless it starts with an option's name, as
        // every library rule was before the options (a path may hold '=').
        const bool package = words[i].rfind("package=", 0) == 0, lib = words[i].rfind("lib=", 0) == 0,
                   caller = words[i].rfind("caller=", 0) == 0;
        std::string& glob = package  ? rule.package_glob
                            : lib    ? rule.lib_glob
                            : caller ? rule.caller_glob
                                     : rule.path_glob;
        const std::string value = words[i].substr(package ? 8 : lib ? 4 : caller ? 7 : 0);
        const char* what = package ? "package=" : lib ? "lib=" : caller ? "caller=" : "path glob";
        if (value.empty()) return fail(std::string("empty ") + what + " in " + kLibraryUsage);
        if (!glob.empty()) return fail(std::string("more than one ") + what + " in " + kLibraryUsage);
        glob = value;
      }
      libraries.push_back(std::move(rule));
    } else {
      return fail("unknown rule '" + words[0] + "' (expected 'operation' or 'library')");
    }
  }
  // A later file's library rules are tried before earlier ones.
  rules.libraries.insert(rules.libraries.begin(), libraries.begin(), libraries.end());
  return true;
}

bool LoadRuleFile(const std::string& path, RuleSet& rules, std::string* error) {
  std::string content, why;
  if (!ReadInputFile(path, kMaxRulesFileBytes, Symlinks::kFollow, &content, &why)) {
    if (error != nullptr) *error = path + ": cannot read the rules file: " + why;
    return false;
  }
  return ParseRules(content, path, rules, error);
}

std::vector<std::string> RuleFilesFromEnvironment() {
  const char* count = getenv(kRulesCountVariable);
  if (count == nullptr) {
    const char* legacy = getenv(kLegacyRulesVariable);
    return legacy != nullptr ? SplitOn(legacy, ':') : std::vector<std::string>{};
  }
  std::vector<std::string> files;
  const int n = std::min(atoi(count), kMaxRuleFiles);
  for (int i = 0; i < n; ++i) {
    const char* path = getenv((kRulesFileVariablePrefix + std::to_string(i)).c_str());
    if (path != nullptr && *path != '\0') files.emplace_back(path);
  }
  return files;
}

}  // namespace rlscope
