// SQLite export of a run (`rlscope export DIR --sqlite FILE`): the decoded
// timelines and the report's breakdown in one database, for SQL, pandas
// (pandas.read_sql) or any SQLite client. scripts/sqlite/headline_queries.sql
// has queries that give the report's headline figures from it.
//
// Times: every *_ns column of the trace tables (processes .. gpu_activities)
// is as measured (not corrected for rlscope's overhead), in trace-clock
// nanoseconds (CLOCK_MONOTONIC), like the Chrome and Perfetto exports.
// report_rows holds both views of the breakdown (column view), report_lines
// the report's own; meta says whether the report was corrected.
//
// Schema (schema version in meta "schema": "rlscope.sqlite/1"):
//   meta(key TEXT PRIMARY KEY, value): schema, command (the command line),
//     exit_code, wall_ns, corrected (0/1), corrected_wall_ns and
//     corrected_wall_spread_ns (when corrected), correction_message,
//     calibration_file, calibration_verdict, calibration_summary,
//     gpu_busy_ns, steps, rlscope_version, trace_times ("measured").
//   strings(id INTEGER PRIMARY KEY, text): every name the other tables
//     refer to by *_id (operations, code locations, CUDA functions, GPU
//     activity names such as demangled kernel names).
//   processes(id, pid, ppid, forked_from, executable, command, begin_ns,
//     end_ns, ended_cleanly, events, dropped_events): one row per process
//     (exec chains merged); id is ours (a pid can be reused).
//   threads(id, process_id, pid, tid, name, begin_ns, end_ns, python,
//     inherits_operations): one row per thread instance; a thread that
//     inherits operations (a helper thread: none of its own, no Python)
//     takes those of its process's main operation thread.
//   operation_intervals(thread_id, operation_id, begin_ns, end_ns): which
//     operation each instant of the thread was in, as the breakdown decides
//     it (disjoint; explicit operations win over inferred ones; instants in
//     none are absent, "(none)" in the report).
//   operation_instances(thread_id, operation_id, instances): how many times
//     the thread entered each operation (the report's operation_instances:
//     a training step's pieces count once, so it is not the number of
//     operation_intervals rows).
//   category_intervals(thread_id, begin_ns, end_ns, category,
//     operation_id): CPU category intervals as recorded ("Python",
//     "Backend", "Simulator", "Communication", "Native", "CUDA API",
//     "Profiler", "Wait");
//     they nest (the innermost wins in the breakdown); operation_id: the
//     operation at begin_ns ("(none)" when none).
//   python_calls(thread_id, begin_ns, end_ns, category, operation_id,
//     location_id, line, user_location_id, user_line, shown_location_id,
//     shown_line, nested): Python -> native calls: the calling code
//     ("qualname (file:firstline)") and line, the innermost line of the
//     user's own code behind it (NULL when none was on the stack), the
//     line the report shows (the user's where known), and whether the call
//     lies inside another native call of the thread (nested = 1: sum only
//     nested = 0 rows to count time once, as the report's outer_ns does).
//   cuda_api_calls(id, thread_id, time_ns, correlation_id, api_id, nested,
//     operation_id): the CUDA calls CUPTI saw (launches, copies, memsets,
//     graph launches, synchronizes), at their entry (a nested driver call:
//     at its exit); their time is in category_intervals ("CUDA API").
//   gpu_activities(process_id, kind, device, stream, begin_ns, end_ns,
//     correlation_id, name_id, bytes, launch_id, operation_id): kernels,
//     copies and memsets (kind "Kernel", "Memcpy", "Memset"); launch_id is
//     the cuda_api_calls row that launched it (NULL when not seen),
//     operation_id that call's operation ("(launch not seen)" without one),
//     as the report's GPU time by launch.
//   report_rows(view, pid, operation, resource, category, ns): the report's
//     breakdown rows (report.json "rows"): view "corrected" or
//     "uncorrected" as in the CSV export (export_csv.h); sum one view only.
//     Process-level rows leave Wait out, as the report does.
//   report_lines(pid, lines, operation, code, line, function, file, source,
//     user_code, ns, calls, outer_ns): the report's top Python lines per
//     operation (report.json "python_lines": lines "user", the user's own
//     line behind each native call; "python_library_lines": lines
//     "library", the calling line), in the report's view (corrected when
//     it is); ns counts nested calls again, outer_ns does not.
//   report_instances(pid, operation, instances, total_ns, mean_ns, p50_ns,
//     p95_ns, max_ns): the report's per-instance statistics (report.json
//     "instance_stats", instance_durations.h), in the report's view; meta
//     "steps" is the run's environment steps (report.json "per_step").
//
// FILE is written as FILE.tmp and renamed over FILE once complete: an
// existing FILE is replaced only by a complete export, never left half
// written.
#ifndef RLSCOPE_REPORT_EXPORT_SQLITE_H_
#define RLSCOPE_REPORT_EXPORT_SQLITE_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "report/decoded_run.h"
#include "report/run_report.h"
#include "report/run_sink.h"

struct sqlite3;

namespace rlscope::report {

inline constexpr char kSqliteSchema[] = "rlscope.sqlite/1";

// CloseSqlite: closes `db` (nullptr: nothing) and frees it whatever
// happens, so no handle or file descriptor outlives it; an error naming
// `file` if SQLite reports one.
absl::Status CloseSqlite(sqlite3* db, const std::string& file);

// SqliteExport: the sink that writes the database: the trace tables from
// the timelines, report_rows and meta from the report.
class SqliteExport : public RunSink {
 public:
  // Open: creates `path`.tmp (replacing a stale one) with the schema.
  static absl::StatusOr<std::unique_ptr<SqliteExport>> Open(const std::string& path);
  SqliteExport(const SqliteExport&) = delete;
  SqliteExport& operator=(const SqliteExport&) = delete;
  // Removes `path`.tmp unless Finish renamed it.
  ~SqliteExport() override;

  void Timelines(const DecodedRun& run) override;
  void Report(const RunReport& report) override;
  // Finish: closes the database and renames it to `path`; the first error
  // of any step (naming the file) if one failed, and then `path` is left
  // as it was.
  absl::Status Finish();

 private:
  SqliteExport(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  std::string TempPath() const { return path_ + ".tmp"; }
  void Fail(const absl::Status& status);

  std::string path_;
  sqlite3* db_ = nullptr;
  absl::Status status_;
  bool finished_ = false;
};

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_EXPORT_SQLITE_H_
