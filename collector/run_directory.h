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

// DefaultRunDirectory: ./rlscope-out/<YYYYmmdd-HHMMSS>-<command basename>.
std::string DefaultRunDirectory(const std::vector<std::string>& command);

// PrepareRunDirectory: creates DIR and DIR/trace (and missing parents).
// Refuses a DIR that already holds a run, so no result is overwritten; a
// default-named DIR that exists gets a numeric suffix instead.
absl::StatusOr<std::string> PrepareRunDirectory(const std::optional<std::string>& requested,
                                                const std::vector<std::string>& command);

// FindPreload: $RLSCOPE_PRELOAD, else ../lib/librlscope_preload.so next to
// this executable (the build and install trees share that layout).
absl::StatusOr<std::string> FindPreload();

// MakeSocketPath: a fresh private directory under $TMPDIR (or /tmp) with a
// socket path inside it; Unix socket paths must stay under 108 bytes.
absl::StatusOr<std::string> MakeSocketPath();

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_RUN_DIRECTORY_H_
