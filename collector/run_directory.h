// Run directory: where one `rlscope run` keeps its results.
//
//   DIR/meta.json      command, exit status, wall time (RunMetadata)
//   DIR/trace/*.rlt    one event stream per traced process (wire_format.h)
//   DIR/report.json    the analysed report (report_json.h)
//   DIR/report.txt     the same, for people
#ifndef RLSCOPE_COLLECTOR_RUN_DIRECTORY_H_
#define RLSCOPE_COLLECTOR_RUN_DIRECTORY_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rlscope::collector {

// DefaultRunDirectory: ./rlscope-out/<YYYYmmdd-HHMMSS>-<command basename>-<random>,
// or ./rlscope-out/<YYYYmmdd-HHMMSS>-<kind>-<command basename>-<random> with a
// `kind` ("validate", ...). The random suffix (6 letters and digits) makes
// the name unpredictable, so nobody can prepare it in a shared directory.
std::string DefaultRunDirectory(const std::vector<std::string>& command, const std::string& kind = "");

// CreateOutputDirectory: creates DIR (mode 0700, missing parents as
// usual). A DIR that exists already is used only when it is this user's
// directory, writable by nobody else, and holds no run; a link at DIR is
// refused, not followed; so is a DIR below a directory of another user or
// a world-writable one without the sticky bit (who could swap DIR for a
// link mid-run). Without `requested`, a fresh
// DefaultRunDirectory(command, kind) is created exclusively.
absl::StatusOr<std::string> CreateOutputDirectory(const std::optional<std::string>& requested,
                                                  const std::vector<std::string>& command, const std::string& kind);

// PrepareRunDirectory: CreateOutputDirectory, then DIR/trace. Creating
// DIR/trace (mkdir is atomic) claims DIR, so two runs given one --out at
// once never share it: the second is refused.
absl::StatusOr<std::string> PrepareRunDirectory(const std::optional<std::string>& requested,
                                                const std::vector<std::string>& command);

// Installation: what rlscope injects, found next to this executable (the
// build and install trees share the layout bin/, lib/, share/rlscope/).
struct Installation {
  std::string preload;        // lib/librlscope_preload.so ($RLSCOPE_PRELOAD)
  std::string python_dir;     // share/rlscope/python: sitecustomize.py, rlscope/
  std::string module_dir;     // share/rlscope/module: rlscope/ alone (`rlscope python-path`)
  std::string default_rules;  // share/rlscope/rules/default.rules
};
absl::StatusOr<Installation> FindInstallation();
// InstallationPrefix: the folder that holds bin/, lib/ and share/rlscope/
// (this executable's grandparent).
absl::StatusOr<std::string> InstallationPrefix();

// CopyRules: copies the rule files a run uses into DIR/rules/ (numbered, in
// order; ReplaceFile, mode 0600), so `rlscope report DIR` classifies
// exactly as the run did.
absl::Status CopyRules(const std::string& run_dir, const std::vector<std::string>& rule_files);

// MakeSocketPath: a fresh abstract socket name, "@rlscope-<pid>-<random>"
// (Linux; see Receiver::Listen for what that implies).
absl::StatusOr<std::string> MakeSocketPath();

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_RUN_DIRECTORY_H_
