#include "report/export_sqlite.h"

#include <sqlite3.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "calibration/calibration_verdict.h"
#include "report/export_tracks.h"
#include "report/operation_timeline.h"
#include "report/report_vocabulary.h"
#include "report/thread_analysis.h"

namespace rlscope::report {

namespace {

// The tables (export_sqlite.h documents them). No indexes: they would slow
// the export, and a user's query can create the ones it needs.
constexpr const char* kSchemaSql = R"SQL(
CREATE TABLE meta(key TEXT PRIMARY KEY, value);
CREATE TABLE strings(id INTEGER PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE processes(id INTEGER PRIMARY KEY, pid INTEGER, ppid INTEGER, forked_from INTEGER, executable TEXT,
  command TEXT, begin_ns INTEGER, end_ns INTEGER, ended_cleanly INTEGER, events INTEGER, dropped_events INTEGER);
CREATE TABLE threads(id INTEGER PRIMARY KEY, process_id INTEGER, pid INTEGER, tid INTEGER, name TEXT,
  begin_ns INTEGER, end_ns INTEGER, python INTEGER, inherits_operations INTEGER);
CREATE TABLE operation_intervals(thread_id INTEGER, operation_id INTEGER, begin_ns INTEGER, end_ns INTEGER);
CREATE TABLE operation_instances(thread_id INTEGER, operation_id INTEGER, instances INTEGER);
CREATE TABLE category_intervals(thread_id INTEGER, begin_ns INTEGER, end_ns INTEGER, category TEXT,
  operation_id INTEGER);
CREATE TABLE python_calls(thread_id INTEGER, begin_ns INTEGER, end_ns INTEGER, category TEXT, operation_id INTEGER,
  location_id INTEGER, line INTEGER, user_location_id INTEGER, user_line INTEGER, shown_location_id INTEGER,
  shown_line INTEGER, nested INTEGER);
CREATE TABLE cuda_api_calls(id INTEGER PRIMARY KEY, thread_id INTEGER, time_ns INTEGER, correlation_id INTEGER,
  api_id INTEGER, nested INTEGER, operation_id INTEGER);
CREATE TABLE gpu_activities(process_id INTEGER, kind TEXT, device INTEGER, stream INTEGER, begin_ns INTEGER,
  end_ns INTEGER, correlation_id INTEGER, name_id INTEGER, bytes INTEGER, launch_id INTEGER, operation_id INTEGER);
CREATE TABLE report_rows(view TEXT, pid INTEGER, operation TEXT, resource TEXT, category TEXT, ns INTEGER);
CREATE TABLE report_lines(pid INTEGER, lines TEXT, operation TEXT, code TEXT, line INTEGER, function TEXT,
  file TEXT, source TEXT, user_code INTEGER, ns INTEGER, calls INTEGER, outer_ns INTEGER);
CREATE TABLE report_instances(pid INTEGER, operation TEXT, instances INTEGER, total_ns INTEGER, mean_ns INTEGER,
  p50_ns INTEGER, p95_ns INTEGER, max_ns INTEGER);
)SQL";

using Value = std::variant<std::monostate, int64_t, double, std::string_view>;

absl::Status SqlError(sqlite3* db, const std::string& file, std::string_view what) {
  return absl::InternalError(absl::StrFormat("cannot write %s: %s: %s", file, what, sqlite3_errmsg(db)));
}

absl::Status Exec(sqlite3* db, const std::string& file, const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) == SQLITE_OK) return absl::OkStatus();
  const std::string text = message != nullptr ? message : "unknown error";
  sqlite3_free(message);
  return absl::InternalError(absl::StrFormat("cannot write %s: %s", file, text));
}

// Inserter: one table's rows, through one prepared statement, in one
// transaction (a transaction per row would make the export minutes long).
class Inserter {
 public:
  Inserter(sqlite3* db, const std::string& file, std::string_view table, int columns) : db_(db), file_(file) {
    std::string sql = "INSERT INTO " + std::string(table) + " VALUES (";
    for (int i = 0; i < columns; ++i) sql += i == 0 ? "?" : ",?";
    sql += ")";
    status_ = Exec(db_, file_, "BEGIN");
    if (status_.ok() && sqlite3_prepare_v2(db_, sql.c_str(), -1, &statement_, nullptr) != SQLITE_OK) {
      status_ = SqlError(db_, file_, table);
    }
  }
  ~Inserter() { sqlite3_finalize(statement_); }
  Inserter(const Inserter&) = delete;
  Inserter& operator=(const Inserter&) = delete;

  void Row(std::initializer_list<Value> values) {
    if (!status_.ok()) return;
    int index = 1;
    for (const Value& value : values) {
      int result = SQLITE_OK;
      if (const auto* integer = std::get_if<int64_t>(&value)) {
        result = sqlite3_bind_int64(statement_, index, *integer);
      } else if (const auto* real = std::get_if<double>(&value)) {
        result = sqlite3_bind_double(statement_, index, *real);
      } else if (const auto* text = std::get_if<std::string_view>(&value)) {
        result = sqlite3_bind_text64(statement_, index, text->data(), text->size(), SQLITE_TRANSIENT, SQLITE_UTF8);
      } else {
        result = sqlite3_bind_null(statement_, index);
      }
      if (result != SQLITE_OK) {
        status_ = SqlError(db_, file_, "bind");
        return;
      }
      ++index;
    }
    if (sqlite3_step(statement_) != SQLITE_DONE) status_ = SqlError(db_, file_, "insert");
    sqlite3_reset(statement_);
  }

  // Commit: ends the table's transaction; its first error, if any.
  absl::Status Commit() {
    if (!status_.ok()) {
      (void)Exec(db_, file_, "ROLLBACK");
      return status_;
    }
    return Exec(db_, file_, "COMMIT");
  }

 private:
  sqlite3* db_;
  const std::string& file_;
  sqlite3_stmt* statement_ = nullptr;
  absl::Status status_;
};

// Strings: the strings table: NameTable labels and other names, each
// written once; ids from 1.
class Strings {
 public:
  explicit Strings(const NameTable& names) : names_(names), by_label_(names.size(), 0) {}

  int64_t OfLabel(int32_t label) {
    if (label < 0 || static_cast<size_t>(label) >= by_label_.size()) return Of("(none)");
    int64_t& id = by_label_[static_cast<size_t>(label)];
    if (id == 0) id = Of(names_.Name(label));
    return id;
  }
  int64_t Of(std::string_view text) {
    auto [it, inserted] = ids_.try_emplace(std::string(text), static_cast<int64_t>(texts_.size()) + 1);
    if (inserted) texts_.emplace_back(text);
    return it->second;
  }
  const std::vector<std::string>& texts() const { return texts_; }

 private:
  const NameTable& names_;
  std::vector<int64_t> by_label_;
  absl::flat_hash_map<std::string, int64_t> ids_;
  std::vector<std::string> texts_;
};

Value OptionalLabel(Strings& strings, int32_t label) {
  if (label == kNoLabel) return std::monostate{};
  return strings.OfLabel(label);
}

// ThreadOperations: per thread of a process, the operation timeline its
// time is attributed by (thread_analysis.h): its own, or for a helper
// thread its process's main one, held once for all of them.
class ThreadOperations {
 public:
  explicit ThreadOperations(const ProcessTimeline& process) : inherited_(InheritedOperations(process.threads)) {
    own_.reserve(process.threads.size());
    for (const ThreadTimeline& thread : process.threads) {
      const bool inherits = InheritsOperations(thread) && !inherited_.empty();
      own_.push_back(inherits ? std::nullopt
                              : std::optional(OperationTimeline(thread.operations, thread.inferred_operations)));
    }
  }
  const IntervalList& Of(size_t thread) const { return own_[thread] ? *own_[thread] : inherited_; }

 private:
  IntervalList inherited_;
  std::vector<std::optional<IntervalList>> own_;
};

// TimelineWriter: the trace tables of one decoded run, table by table.
class TimelineWriter {
 public:
  TimelineWriter(sqlite3* db, const std::string& file, const DecodedRun& run)
      : db_(db), file_(file), run_(run), strings_(run.names) {
    operations_.reserve(run.processes.size());
    for (const ProcessTimeline& process : run.processes) operations_.emplace_back(process);
  }

  absl::Status Write() {
    for (absl::Status (TimelineWriter::*table)() :
         {&TimelineWriter::Processes, &TimelineWriter::Threads, &TimelineWriter::OperationIntervals,
          &TimelineWriter::OperationInstances, &TimelineWriter::CategoryIntervals, &TimelineWriter::PythonCalls,
          &TimelineWriter::CudaApiCalls, &TimelineWriter::GpuActivities, &TimelineWriter::StringsTable}) {
      if (absl::Status status = (this->*table)(); !status.ok()) return status;
    }
    return absl::OkStatus();
  }

 private:
  // ForEachThread: fn(process index, thread index, thread id) over the run.
  template <typename Fn>
  void ForEachThread(Fn fn) {
    int64_t thread_id = 0;
    for (size_t p = 0; p < run_.processes.size(); ++p) {
      for (size_t t = 0; t < run_.processes[p].threads.size(); ++t) fn(p, t, ++thread_id);
    }
  }

  int32_t OperationAt(size_t p, size_t t, int64_t time_ns) const {
    return report::OperationAt(operations_[p].Of(t), time_ns, kNoLabel);
  }

  absl::Status Processes() {
    Inserter rows(db_, file_, "processes", 11);
    int64_t id = 0;
    for (const ProcessTimeline& process : run_.processes) {
      const std::string command = FormatCommandLine(process.argv);
      rows.Row({++id, int64_t{process.pid}, int64_t{process.ppid}, int64_t{process.forked_from},
                std::string_view(process.executable), std::string_view(command), process.begin_ns, process.end_ns,
                int64_t{process.ended_cleanly}, static_cast<int64_t>(process.recorded_events),
                static_cast<int64_t>(process.dropped_events)});
    }
    return rows.Commit();
  }

  absl::Status Threads() {
    Inserter rows(db_, file_, "threads", 9);
    ForEachThread([&](size_t p, size_t t, int64_t id) {
      const ProcessTimeline& process = run_.processes[p];
      const ThreadTimeline& thread = process.threads[t];
      rows.Row({id, static_cast<int64_t>(p) + 1, int64_t{process.pid}, int64_t{thread.tid},
                std::string_view(thread.name), thread.begin_ns, thread.end_ns, int64_t{thread.python},
                int64_t{InheritsOperations(thread)}});
    });
    return rows.Commit();
  }

  absl::Status OperationIntervals() {
    Inserter rows(db_, file_, "operation_intervals", 4);
    ForEachThread([&](size_t p, size_t t, int64_t id) {
      for (const Interval& interval : operations_[p].Of(t)) {
        rows.Row({id, strings_.OfLabel(interval.label), interval.begin_ns, interval.end_ns});
      }
    });
    return rows.Commit();
  }

  absl::Status OperationInstances() {
    Inserter rows(db_, file_, "operation_instances", 3);
    ForEachThread([&](size_t p, size_t t, int64_t id) {
      for (const auto& [label, count] : run_.processes[p].threads[t].operation_instances) {
        rows.Row({id, strings_.OfLabel(label), static_cast<int64_t>(count)});
      }
    });
    return rows.Commit();
  }

  absl::Status CategoryIntervals() {
    Inserter rows(db_, file_, "category_intervals", 5);
    ForEachThread([&](size_t p, size_t t, int64_t id) {
      for (const Interval& event : run_.processes[p].threads[t].cpu_events) {
        rows.Row({id, event.begin_ns, event.end_ns, CategoryName(static_cast<Category>(event.label)),
                  strings_.OfLabel(OperationAt(p, t, event.begin_ns))});
      }
    });
    return rows.Commit();
  }

  absl::Status PythonCalls() {
    Inserter rows(db_, file_, "python_calls", 12);
    ForEachThread([&](size_t p, size_t t, int64_t id) {
      const std::vector<NativeCall>& calls = run_.processes[p].threads[t].native_calls;
      const std::vector<bool> nested = NestedCalls(calls);
      for (size_t i = 0; i < calls.size(); ++i) {
        const NativeCall& call = calls[i];
        const bool has_user = call.user_location != kNoLabel;
        rows.Row({id, call.begin_ns, call.end_ns, CategoryName(call.category),
                  strings_.OfLabel(OperationAt(p, t, call.begin_ns)), OptionalLabel(strings_, call.location),
                  int64_t{call.line}, OptionalLabel(strings_, call.user_location),
                  has_user ? Value(int64_t{call.user_line}) : Value(std::monostate{}),
                  OptionalLabel(strings_, call.shown_location()), int64_t{call.shown_line()}, int64_t{nested[i]}});
      }
    });
    return rows.Commit();
  }

  // CudaApiCalls: also remembers each call's row id and operation, for
  // the GPU activities it launched.
  absl::Status CudaApiCalls() {
    Inserter rows(db_, file_, "cuda_api_calls", 7);
    int64_t call_id = 0;
    ForEachThread([&](size_t p, size_t t, int64_t id) {
      for (const GpuLaunchPoint& launch : run_.processes[p].threads[t].gpu_launches) {
        // An owner decided before (overhead_correction.h) stands, as in
        // the report's GPU time by launch.
        int32_t operation = launch.operation;
        if (operation == kOperationUndecided) operation = OperationAt(p, t, launch.time_ns);
        const int64_t operation_id = strings_.OfLabel(operation);
        rows.Row({++call_id, id, launch.time_ns, int64_t{launch.correlation_id}, strings_.OfLabel(launch.api),
                  int64_t{launch.nested}, operation_id});
        launch_rows_[&launch] = {call_id, operation_id};
      }
    });
    return rows.Commit();
  }

  absl::Status GpuActivities() {
    Inserter rows(db_, file_, "gpu_activities", 11);
    const int64_t unseen = strings_.Of("(launch not seen)");
    for (size_t p = 0; p < run_.processes.size(); ++p) {
      const ProcessTimeline& process = run_.processes[p];
      const absl::flat_hash_map<uint32_t, LaunchingCall> launches = LaunchingCalls(process);
      for (const GpuActivity& activity : process.gpu_activities) {
        Value launch_id = std::monostate{};
        int64_t operation_id = unseen;
        if (const auto found = launches.find(activity.correlation_id); found != launches.end()) {
          // Every launch found was written as a cuda_api_calls row: a miss
          // (never expected) leaves the activity unlinked, not the export.
          if (const auto row = launch_rows_.find(found->second.call); row != launch_rows_.end()) {
            launch_id = row->second.first;
            operation_id = row->second.second;
          }
        }
        rows.Row({static_cast<int64_t>(p) + 1, GpuActivityCategoryName(activity.kind), int64_t{activity.device},
                  int64_t{activity.stream}, activity.begin_ns, activity.end_ns, int64_t{activity.correlation_id},
                  strings_.OfLabel(activity.name), static_cast<int64_t>(activity.bytes), launch_id, operation_id});
      }
    }
    return rows.Commit();
  }

  absl::Status StringsTable() {
    Inserter rows(db_, file_, "strings", 2);
    int64_t id = 0;
    for (const std::string& text : strings_.texts()) rows.Row({++id, std::string_view(text)});
    return rows.Commit();
  }

  sqlite3* db_;
  const std::string& file_;
  const DecodedRun& run_;
  Strings strings_;
  std::vector<ThreadOperations> operations_;  // Per process.
  absl::flat_hash_map<const GpuLaunchPoint*, std::pair<int64_t, int64_t>> launch_rows_;
};

absl::Status WriteReportRows(sqlite3* db, const std::string& file, const RunReport& report) {
  Inserter rows(db, file, "report_rows", 6);
  auto add = [&](std::string_view view, const std::vector<BreakdownRow>& breakdown) {
    for (const BreakdownRow& row : breakdown) {
      rows.Row({view, int64_t{row.pid}, std::string_view(row.operation), ResourceName(row.resource),
                CategoryName(row.category), row.ns});
    }
  };
  if (report.corrected) {
    add("corrected", report.rows);
    add("uncorrected", report.uncorrected_rows);
  } else {
    add("uncorrected", report.rows);
  }
  return rows.Commit();
}

absl::Status WriteReportLines(sqlite3* db, const std::string& file, const RunReport& report) {
  Inserter rows(db, file, "report_lines", 12);
  for (const ProcessReport& process : report.processes) {
    for (const auto& [lines, table] : {std::pair{"user", &process.python_lines}, {"library", &process.library_lines}}) {
      for (const LineRow& row : *table) {
        rows.Row({int64_t{process.pid}, std::string_view(lines), std::string_view(row.operation),
                  std::string_view(row.location), int64_t{row.line}, std::string_view(row.function),
                  std::string_view(row.file), std::string_view(row.source), int64_t{row.user_code}, row.ns,
                  static_cast<int64_t>(row.calls), row.outer_ns});
      }
    }
  }
  return rows.Commit();
}

absl::Status WriteReportInstances(sqlite3* db, const std::string& file, const RunReport& report) {
  Inserter rows(db, file, "report_instances", 8);
  for (const ProcessReport& process : report.processes) {
    for (const InstanceStats& stats : process.instance_stats) {
      rows.Row({int64_t{process.pid}, std::string_view(stats.operation), static_cast<int64_t>(stats.instances),
                stats.total_ns, stats.mean_ns, stats.p50_ns, stats.p95_ns, stats.max_ns});
    }
  }
  return rows.Commit();
}

absl::Status WriteMeta(sqlite3* db, const std::string& file, const RunReport& report) {
  Inserter rows(db, file, "meta", 2);
  const std::string command = FormatCommandLine(report.metadata.command);
  const calibration::CalibrationQuality& quality = report.calibration_quality;
  const std::string summary = report.corrected ? calibration::DescribeQuality(quality) : "";
  rows.Row({std::string_view("schema"), std::string_view(kSqliteSchema)});
  rows.Row({std::string_view("command"), std::string_view(command)});
  rows.Row({std::string_view("exit_code"),
            report.metadata.recorded ? Value(int64_t{report.metadata.exit_code}) : Value(std::monostate{})});
  rows.Row({std::string_view("wall_ns"), report.metadata.wall_ns});
  rows.Row({std::string_view("corrected"), int64_t{report.corrected}});
  if (report.corrected_wall_ns.has_value()) {
    rows.Row({std::string_view("corrected_wall_ns"), *report.corrected_wall_ns});
    rows.Row({std::string_view("corrected_wall_spread_ns"), report.corrected_wall_spread_ns});
  }
  rows.Row({std::string_view("correction_message"), std::string_view(report.correction_message)});
  rows.Row({std::string_view("calibration_file"), std::string_view(report.calibration_file)});
  if (report.corrected) {
    rows.Row({std::string_view("calibration_verdict"),
              std::string_view(quality.verdict.empty() ? "unrecorded" : quality.verdict)});
    rows.Row({std::string_view("calibration_summary"), std::string_view(summary)});
  }
  rows.Row({std::string_view("gpu_busy_ns"), report.gpu_busy_ns});
  rows.Row({std::string_view("steps"), static_cast<int64_t>(report.steps)});
  rows.Row({std::string_view("rlscope_version"), std::string_view(report.metadata.rlscope_version)});
  rows.Row({std::string_view("trace_times"), std::string_view("measured")});
  return rows.Commit();
}

}  // namespace

absl::Status CloseSqlite(sqlite3* db, const std::string& file) {
  if (db == nullptr) return absl::OkStatus();
  // sqlite3_close refuses (SQLITE_BUSY) while a statement is unfinalized
  // and then keeps the handle and its file: finalize any left (only a
  // missed error path leaves one), and sqlite3_close_v2 frees it regardless.
  while (sqlite3_stmt* statement = sqlite3_next_stmt(db, nullptr)) sqlite3_finalize(statement);
  if (const int result = sqlite3_close_v2(db); result != SQLITE_OK) {
    return absl::InternalError(absl::StrFormat("cannot write %s: closing it failed: %s", file, sqlite3_errstr(result)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SqliteExport>> SqliteExport::Open(const std::string& path) {
  const std::string temp = path + ".tmp";
  if (std::remove(temp.c_str()) != 0 && errno != ENOENT) {
    return absl::FailedPreconditionError(
        absl::StrFormat("cannot write %s: cannot remove the stale %s: %s", path, temp, std::strerror(errno)));
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(temp.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXCLUSIVE, nullptr) !=
      SQLITE_OK) {
    const std::string message =
        absl::StrFormat("cannot write %s: %s", path, db != nullptr ? sqlite3_errmsg(db) : "out of memory");
    (void)CloseSqlite(db, path);  // The open's error is the one to tell.
    std::remove(temp.c_str());
    return absl::FailedPreconditionError(message);
  }
  std::unique_ptr<SqliteExport> sink(new SqliteExport(path, db));
  // No journal: the file is private until renamed, and a failed export is
  // removed, never recovered.
  if (absl::Status status = Exec(db, path, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"); !status.ok()) {
    return status;
  }
  if (absl::Status status = Exec(db, path, kSchemaSql); !status.ok()) return status;
  return sink;
}

SqliteExport::~SqliteExport() {
  (void)CloseSqlite(db_, path_);  // Finish reports a close's error; here it is too late.
  if (!finished_) std::remove(TempPath().c_str());
}

void SqliteExport::Fail(const absl::Status& status) {
  if (status_.ok()) status_ = status;
}

void SqliteExport::Timelines(const DecodedRun& run) {
  if (!status_.ok()) return;
  Fail(TimelineWriter(db_, path_, run).Write());
}

void SqliteExport::Report(const RunReport& report) {
  if (!status_.ok()) return;
  Fail(WriteReportRows(db_, path_, report));
  if (status_.ok()) Fail(WriteReportLines(db_, path_, report));
  if (status_.ok()) Fail(WriteReportInstances(db_, path_, report));
  if (status_.ok()) Fail(WriteMeta(db_, path_, report));
}

absl::Status SqliteExport::Finish() {
  if (db_ != nullptr) {
    Fail(CloseSqlite(db_, path_));
    db_ = nullptr;
  }
  if (!status_.ok()) return status_;
  if (std::rename(TempPath().c_str(), path_.c_str()) != 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("cannot write %s: cannot rename %s to it: %s", path_, TempPath(), std::strerror(errno)));
  }
  finished_ = true;
  return absl::OkStatus();
}

}  // namespace rlscope::report
