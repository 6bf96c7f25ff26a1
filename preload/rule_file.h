// Rule files: the data that tells rlscope what code means. One rule per
// line; '#' starts a comment. Two kinds, used by two sides:
//
//   operation NAME QUALNAME-GLOB [file=PATH-GLOB] [unless-inside=OP[,OP...]]
//     (preload) a Python function whose qualified name (co_qualname, e.g.
//     "CartPoleEnv.step") matches opens operation NAME while it runs, unless
//     one of the listed operations is already open on that thread.
//   library CATEGORY PATH-GLOB
//     (collector) native code in a shared object whose path matches belongs
//     to CATEGORY: Backend, Simulator or Native. First match wins.
//
// Globs are fnmatch(3) patterns; '|' separates alternatives ("*Env.step|
// *Env.reset"). Later files extend earlier ones; for `library` rules the
// user's (later) rules are tried first, so they can override defaults.
#ifndef RLSCOPE_PRELOAD_RULE_FILE_H_
#define RLSCOPE_PRELOAD_RULE_FILE_H_

#include <string>
#include <string_view>
#include <vector>

namespace rlscope {

struct OperationRule {
  std::string operation;
  std::string qualname_glob;
  std::string file_glob;                    // Empty: any file.
  std::vector<std::string> unless_inside;  // Operations that suppress this one.
};

struct LibraryRule {
  std::string category;  // "Backend", "Simulator" or "Native".
  std::string path_glob;
};

struct RuleSet {
  std::vector<OperationRule> operations;
  std::vector<LibraryRule> libraries;  // In match order (user rules first).
};

// ParseRules: adds the rules in `text` (from `source`, for messages) to
// `rules`. Returns false and sets *error ("FILE:LINE: what is wrong") on the
// first bad line; the lines before it are kept.
bool ParseRules(std::string_view text, const std::string& source, RuleSet& rules, std::string* error);

// LoadRuleFile: parses the rules file `path` (any name: ':' included).
// Returns false and sets *error ("PATH: ...") when it cannot be read (not a
// regular file, over kMaxRulesFileBytes) or has a bad line.
bool LoadRuleFile(const std::string& path, RuleSet& rules, std::string* error);

// How the launcher hands rule files to the preload: RLSCOPE_RULES_COUNT=N
// and RLSCOPE_RULES_0 .. RLSCOPE_RULES_<N-1>, one path each, since no
// separator is safe in a path. Without RLSCOPE_RULES_COUNT, the older
// RLSCOPE_RULES (':'-separated paths) is read, for environments set by hand.
inline constexpr char kRulesCountVariable[] = "RLSCOPE_RULES_COUNT";
inline constexpr char kRulesFileVariablePrefix[] = "RLSCOPE_RULES_";
inline constexpr char kLegacyRulesVariable[] = "RLSCOPE_RULES";
inline constexpr int kMaxRuleFiles = 1000;

// RuleFilesFromEnvironment: the rule files named as above, in order (calls
// getenv: never from a hook).
std::vector<std::string> RuleFilesFromEnvironment();

// MatchesGlob: fnmatch with '|'-separated alternatives.
bool MatchesGlob(std::string_view glob, const char* text);

}  // namespace rlscope

#endif  // RLSCOPE_PRELOAD_RULE_FILE_H_
