// Rule files: the data that tells rlscope what code means. One rule per
// line; '#' starts a comment. Two kinds, used by two sides:
//
//   operation NAME QUALNAME-GLOB [module=GLOB] [file=PATH-GLOB]
//             [class=CLASS-GLOB] [user-code] [unless-inside=OP[,OP...]]
//     (preload) a Python function whose qualified name (co_qualname, e.g.
//     "CartPoleEnv.step") matches opens operation NAME while it runs, unless
//     one of the listed operations is already open on that thread.
//     module= matches the dotted module of the function's file, from its
//     path inside its installed package ("torch.optim.adam" for
//     .../site-packages/torch/optim/adam.py, whatever the prefix; see
//     ModuleOfPath in code_origin.h): the user's own files have none, so
//     such a rule never takes them. file= matches the full path (co_filename).
//     For native stacks both match the shared object of the frame.
//     class=: only methods of a class that is, or derives from, a class
//     whose "module.qualname" matches ("gymnasium.core.Env", "*.Env"): what
//     the code is, not what it is called. user-code: only code outside
//     installed packages and the standard library (code_origin.h). Both
//     describe Python code: rules with them never match native frames.
//     class-has=NAMES: only methods of a class that has these attributes
//     (its own or inherited), comma-separated, each with '|'-alternatives:
//     "step,reset" is the Gym API (an env by what it offers, whatever it is
//     called).
//     The operation `forward` is reserved: a forward pass, which the
//     analysis reports as backprop when it is part of a training step and
//     as inference otherwise (report/operation_inference.h). So is
//     `env_reset`: an env reset, reported as simulation, which tells the
//     analysis where an episode starts.
//   library CATEGORY [package=GLOB] [lib=GLOB] [caller=MODULE-GLOB] [PATH-GLOB]
//     (report) native code in a shared object belongs to CATEGORY: Backend,
//     Simulator, Communication or Native. At least one matcher; all given
//     must match.
//     package= matches an installed Python package's code by its names:
//     the folder it is installed in (site-packages/NAME/, whatever the
//     virtualenv, conda or /opt prefix), and where the folder's
//     *.dist-info/RECORD lists the file, the distribution that installed it
//     (normalized: "nvidia-cudnn-cu12") and that distribution's top-level
//     import names. lib= matches the shared object's file name
//     ("libmujoco.so.2.2.2"), wherever it lives. PATH-GLOB, the older form,
//     matches the full path. caller= matches the dotted module of the
//     Python code that called into the library (ModuleOfPath:
//     "torch.distributed.distributed_c10d"), so one library's calls can be
//     told apart by who makes them; a rule with it never matches native
//     frames, calls from the user's own files or a module's import-time
//     (module-level) code. First matching rule wins;
//     unmatched code is Native.
//
// Globs are fnmatch(3) patterns; '|' separates alternatives ("*Env.step|
// *Env.reset"). Later files extend earlier ones; for `library` rules the
// user's (later) rules are tried first, so they can override defaults.
#ifndef RLSCOPE_PRELOAD_RULE_FILE_H_
#define RLSCOPE_PRELOAD_RULE_FILE_H_

#include <string>
#include <string_view>
#include <vector>

#include "format/glob_set.h"

namespace rlscope {

struct OperationRule {
  std::string operation;
  GlobSet qualname_glob;                   // Set by ParseRules.
  std::string file_glob;                   // Empty: any file.
  std::string module_glob;                 // Empty: any module.
  std::vector<std::string> unless_inside;  // Operations that suppress this one.
  std::string class_glob;                  // Empty: any code, method or not.
  // class-has=: groups of attribute names the method's class must have,
  // one of each group's '|'-alternatives ("step,reset": both).
  std::vector<std::vector<std::string>> class_has;
  bool user_code_only = false;
};

// LibraryRule: one `library` line; an empty glob is a matcher not given.
// The categories a library rule may name: the report's own names for them
// (report/category.h; report/library_classifier.cc maps a name to its
// category through CategoryName, and a test checks each one is there).
inline constexpr std::string_view kLibraryCategories[] = {"Backend", "Simulator", "Native", "Communication"};

struct LibraryRule {
  std::string category;  // One of kLibraryCategories.
  std::string path_glob;
  std::string package_glob;
  std::string lib_glob;
  std::string caller_glob;  // The calling Python code's module.
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

// MatchesLocation: whether code in file `filename`, of dotted module
// `module` ("" when it has none: ModuleOfPath), is where `rule` applies
// (its file= and module= options; the qualified name aside).
bool MatchesLocation(const OperationRule& rule, const char* filename, const char* module);

// CodeFacts: what an operation rule is matched against, gathered once per
// code object. `class_facts` is asked for only when a rule with class= or
// class-has= gets that far (reading a class costs attribute lookups): it
// returns a ClassFacts.
struct CodeFacts {
  const char* qualname = "";
  const char* filename = "";
  const char* module = "";  // ModuleOfPath; "" when none.
  bool user_code = false;
};

// ClassFacts: about a method's class: the "module.qualname" of the class
// and of every class it derives from, and which of the attribute names the
// rules ask about (ClassAttributesAskedFor) it has. Empty for a function,
// or when the class could not be found.
struct ClassFacts {
  std::vector<std::string> hierarchy;
  std::vector<std::string> attributes;
};

// ClassAttributesAskedFor: every attribute name some rule's class-has= names.
std::vector<std::string> ClassAttributesAskedFor(const std::vector<OperationRule>& rules);

// MatchesClass: whether a class with `facts` passes the rule's class= and
// class-has= options.
bool MatchesClass(const OperationRule& rule, const ClassFacts& facts);

// MatchOperationRule: the index of the first rule in `rules` that applies
// to the code, or -1.
template <typename ClassFactsOf>
int MatchOperationRule(const std::vector<OperationRule>& rules, const CodeFacts& code, ClassFactsOf&& class_facts) {
  for (size_t i = 0; i < rules.size(); ++i) {
    const OperationRule& rule = rules[i];
    if (rule.user_code_only && !code.user_code) continue;
    if (!rule.qualname_glob.Matches(code.qualname)) continue;
    if (!MatchesLocation(rule, code.filename, code.module)) continue;
    if ((!rule.class_glob.empty() || !rule.class_has.empty()) && !MatchesClass(rule, class_facts())) continue;
    return static_cast<int>(i);
  }
  return -1;
}

}  // namespace rlscope

#endif  // RLSCOPE_PRELOAD_RULE_FILE_H_
