// The SQLite export (export_sqlite.h) of a hand-made run: what each table
// holds, and how FILE is replaced.
#include "report/export_sqlite.h"

#include <sqlite3.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test/report/timeline_fixtures.h"

namespace rlscope::report {
namespace {

using fixtures::Thread;

// A process (pid 7) whose Python thread is in "inference" over [100, 900):
// a native call into the backend (from the user's train.py line 9) with
// a call nested in it, a category interval before the operation, a kernel
// launch and its kernel, and a memcpy whose launch was not seen.
DecodedRun SmallRun() {
  DecodedRun run;
  run.metadata.command = {"python3", "train.py"};
  run.metadata.wall_ns = 1000;
  NameTable& names = run.names;
  const int32_t inference = names.Intern("inference");
  ProcessTimeline process;
  process.pid = 7;
  process.argv = {"python3", "train.py"};
  process.end_ns = 1000;
  ThreadTimeline thread = Thread(0, 1000);
  thread.tid = 7;
  thread.python = true;
  thread.operations = {{100, 900, inference}};
  thread.operation_instances = {{inference, 1}};
  thread.cpu_events = {{10, 20, static_cast<int32_t>(Category::kNative)},
                       {200, 400, static_cast<int32_t>(Category::kBackend)},
                       {250, 300, static_cast<int32_t>(Category::kCudaApi)}};
  NativeCall outer{200, 400, Category::kBackend, names.Intern("Agent.act (agent.py:3)"), 5};
  outer.user_location = names.Intern("<module> (train.py:1)");
  outer.user_line = 9;
  NativeCall inner{250, 300, Category::kCudaApi, names.Intern("Agent.act (agent.py:3)"), 5};
  thread.native_calls = {inner, outer};  // Recorded as they return.
  thread.gpu_launches = {{260, 42, false, names.Intern("cudaLaunchKernel")}};
  process.threads = {thread};
  process.gpu_activities = {{500, 600, GpuActivityKind::kKernel, 0, 7, 42, names.Intern("gemm_kernel"), 0},
                            {610, 620, GpuActivityKind::kMemcpy, 0, 7, 99, names.Intern("Memcpy HtoD"), 64}};
  run.processes = {process};
  return run;
}

std::string TempDir() {
  char folder[] = "/tmp/rlscope-sqlite-XXXXXX";
  REQUIRE(mkdtemp(folder) != nullptr);
  return folder;
}

// Rows: the rows of `sql` on the database at `path`, each as its columns'
// text ("NULL" for null), joined by "|".
std::vector<std::string> Rows(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK);
  std::vector<std::string> rows;
  while (sqlite3_step(statement) == SQLITE_ROW) {
    std::string row;
    for (int i = 0; i < sqlite3_column_count(statement); ++i) {
      const unsigned char* text = sqlite3_column_text(statement, i);
      row += (i == 0 ? "" : "|") + (text != nullptr ? std::string(reinterpret_cast<const char*>(text)) : "NULL");
    }
    rows.push_back(row);
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return rows;
}

// OpenDescriptors: how many of this process's file descriptors are open
// on `path` (also once it is renamed away or removed).
int OpenDescriptors(const std::string& path) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    const std::string target = std::filesystem::read_symlink(entry.path(), error).string();
    if (!error && (target == path || target == path + " (deleted)")) ++count;
  }
  return count;
}

std::string Export(const std::string& path, const RunReport& report) {
  absl::StatusOr<std::unique_ptr<SqliteExport>> sink = SqliteExport::Open(path);
  REQUIRE(sink.ok());
  (*sink)->Timelines(SmallRun());
  (*sink)->Report(report);
  const absl::Status finished = (*sink)->Finish();
  return finished.ok() ? "" : std::string(finished.message());
}

TEST_CASE("SQLite export: the trace tables of a hand-made run", "[export_sqlite]") {
  const std::string path = TempDir() + "/run.db";
  REQUIRE(Export(path, RunReport{}) == "");
  CHECK(Rows(path, "SELECT pid, command FROM processes") == std::vector<std::string>{"7|python3 train.py"});
  CHECK(Rows(path, "SELECT id, pid, tid, python, inherits_operations FROM threads") ==
        std::vector<std::string>{"1|7|7|1|0"});
  CHECK(Rows(path,
             "SELECT thread_id, s.text, begin_ns, end_ns FROM operation_intervals JOIN strings s "
             "ON s.id = operation_id") == std::vector<std::string>{"1|inference|100|900"});
  CHECK(Rows(path, "SELECT s.text, instances FROM operation_instances JOIN strings s ON s.id = operation_id") ==
        std::vector<std::string>{"inference|1"});
  CHECK(Rows(path,
             "SELECT begin_ns, category, s.text FROM category_intervals JOIN strings s ON s.id = operation_id "
             "ORDER BY begin_ns") ==
        std::vector<std::string>{"10|Native|(none)", "200|Backend|inference", "250|CUDA API|inference"});
  CHECK(
      Rows(path,
           "SELECT begin_ns, category, l.text, line, u.text, user_line, shown.text, shown_line, nested "
           "FROM python_calls JOIN strings l ON l.id = location_id LEFT JOIN strings u ON u.id = user_location_id "
           "JOIN strings shown ON shown.id = shown_location_id ORDER BY begin_ns") ==
      std::vector<std::string>{"200|Backend|Agent.act (agent.py:3)|5|<module> (train.py:1)|9|<module> (train.py:1)|9|0",
                               "250|CUDA API|Agent.act (agent.py:3)|5|NULL|NULL|Agent.act (agent.py:3)|5|1"});
  CHECK(Rows(path,
             "SELECT c.id, time_ns, correlation_id, a.text, nested, o.text FROM cuda_api_calls c "
             "JOIN strings a ON a.id = api_id JOIN strings o ON o.id = operation_id") ==
        std::vector<std::string>{"1|260|42|cudaLaunchKernel|0|inference"});
  CHECK(Rows(path,
             "SELECT kind, stream, begin_ns, correlation_id, n.text, bytes, launch_id, o.text FROM gpu_activities "
             "JOIN strings n ON n.id = name_id JOIN strings o ON o.id = operation_id ORDER BY begin_ns") ==
        std::vector<std::string>{"Kernel|7|500|42|gemm_kernel|0|1|inference",
                                 "Memcpy|7|610|99|Memcpy HtoD|64|NULL|(launch not seen)"});
  // Every name once.
  CHECK(Rows(path, "SELECT COUNT(*) - COUNT(DISTINCT text) FROM strings") == std::vector<std::string>{"0"});
}

TEST_CASE("SQLite export: a helper thread takes its process's operations", "[export_sqlite]") {
  DecodedRun run = SmallRun();
  ThreadTimeline helper = Thread(0, 1000);
  helper.tid = 8;
  helper.cpu_events = {{300, 350, static_cast<int32_t>(Category::kCudaApi)}};
  run.processes[0].threads.push_back(helper);
  const std::string path = TempDir() + "/run.db";
  absl::StatusOr<std::unique_ptr<SqliteExport>> sink = SqliteExport::Open(path);
  REQUIRE(sink.ok());
  (*sink)->Timelines(run);
  (*sink)->Report(RunReport{});
  REQUIRE((*sink)->Finish().ok());
  CHECK(Rows(path, "SELECT tid, inherits_operations FROM threads ORDER BY id") ==
        std::vector<std::string>{"7|0", "8|1"});
  CHECK(Rows(path,
             "SELECT t.tid, s.text, o.begin_ns, o.end_ns FROM operation_intervals o JOIN threads t ON t.id = thread_id "
             "JOIN strings s ON s.id = operation_id ORDER BY t.tid") ==
        std::vector<std::string>{"7|inference|100|900", "8|inference|100|900"});
  CHECK(Rows(path,
             "SELECT s.text FROM category_intervals JOIN threads t ON t.id = thread_id JOIN strings s "
             "ON s.id = operation_id WHERE t.tid = 8") == std::vector<std::string>{"inference"});
}

TEST_CASE("SQLite export: the report's rows in both views, and meta", "[export_sqlite]") {
  RunReport report;
  report.metadata.command = {"python3", "train.py"};
  report.metadata.wall_ns = 1000;
  report.corrected = true;
  report.corrected_wall_ns = 800;
  report.calibration_quality.verdict = "trusted";
  report.rows = {{7, "inference", Resource::kCpu, Category::kPython, 600}};
  report.uncorrected_rows = {{7, "inference", Resource::kCpu, Category::kPython, 700},
                             {7, "inference", Resource::kCpu, Category::kProfiler, 100}};
  report.gpu_busy_ns = 110;
  ProcessReport process;
  process.pid = 7;
  LineRow line{"inference", "<module> (train.py:1)", 9, 300, 2, 200};
  line.user_code = true;
  process.python_lines = {line};
  line.user_code = false;
  line.location = "Agent.act (agent.py:3)";
  process.library_lines = {line};
  report.processes = {process};
  const std::string path = TempDir() + "/run.db";
  REQUIRE(Export(path, report) == "");
  CHECK(Rows(path, "SELECT * FROM report_rows") ==
        std::vector<std::string>{"corrected|7|inference|CPU|Python|600", "uncorrected|7|inference|CPU|Python|700",
                                 "uncorrected|7|inference|CPU|Profiler|100"});
  CHECK(Rows(path, "SELECT pid, lines, operation, code, line, user_code, ns, calls, outer_ns FROM report_lines") ==
        std::vector<std::string>{"7|user|inference|<module> (train.py:1)|9|1|300|2|200",
                                 "7|library|inference|Agent.act (agent.py:3)|9|0|300|2|200"});
  CHECK(Rows(path,
             "SELECT key, value FROM meta WHERE key IN ('schema', 'command', 'wall_ns', 'corrected', "
             "'corrected_wall_ns', 'calibration_verdict', 'gpu_busy_ns', 'trace_times') ORDER BY key") ==
        std::vector<std::string>{"calibration_verdict|trusted", "command|python3 train.py", "corrected|1",
                                 "corrected_wall_ns|800", "gpu_busy_ns|110", "schema|rlscope.sqlite/1",
                                 "trace_times|measured", "wall_ns|1000"});
}

TEST_CASE("SQLite export: FILE is replaced by a finished export only", "[export_sqlite]") {
  const std::string dir = TempDir();
  const std::string path = dir + "/run.db";
  std::ofstream(path) << "before";
  std::ofstream(path + ".tmp") << "stale";
  {
    absl::StatusOr<std::unique_ptr<SqliteExport>> sink = SqliteExport::Open(path);
    REQUIRE(sink.ok());
    (*sink)->Timelines(SmallRun());
    // Destroyed unfinished: FILE stays, the temporary goes.
  }
  CHECK(std::filesystem::exists(path));
  CHECK(std::filesystem::file_size(path) == 6);
  CHECK(!std::filesystem::exists(path + ".tmp"));
  REQUIRE(Export(path, RunReport{}) == "");
  CHECK(Rows(path, "SELECT pid FROM processes") == std::vector<std::string>{"7"});
  CHECK(!std::filesystem::exists(path + ".tmp"));
}

TEST_CASE("SQLite export: an unwritable place is an error naming the file", "[export_sqlite]") {
  const std::string path = TempDir() + "/no/such/dir/run.db";
  absl::StatusOr<std::unique_ptr<SqliteExport>> sink = SqliteExport::Open(path);
  REQUIRE(!sink.ok());
  CHECK(std::string(sink.status().message()).find(path) != std::string::npos);
}

TEST_CASE("SQLite export: a finished export, or a failed one, leaves no file open", "[export_sqlite]") {
  const std::string dir = std::filesystem::canonical(TempDir()).string();
  SECTION("finished") {
    const std::string path = dir + "/run.db";
    REQUIRE(Export(path, RunReport{}) == "");
    CHECK(OpenDescriptors(path) == 0);
    CHECK(OpenDescriptors(path + ".tmp") == 0);
  }
  SECTION("FILE cannot be replaced: a directory stands there") {
    const std::string path = dir + "/run.db";
    std::filesystem::create_directories(path + "/inside");
    absl::StatusOr<std::unique_ptr<SqliteExport>> sink = SqliteExport::Open(path);
    REQUIRE(sink.ok());
    (*sink)->Timelines(SmallRun());
    (*sink)->Report(RunReport{});
    const absl::Status finished = (*sink)->Finish();
    REQUIRE(!finished.ok());
    CHECK(std::string(finished.message()).find(path) != std::string::npos);
    CHECK(OpenDescriptors(path + ".tmp") == 0);
    sink->reset();
    CHECK(!std::filesystem::exists(path + ".tmp"));
  }
}

TEST_CASE("SQLite export: closing frees the database though a statement was left open", "[export_sqlite]") {
  const std::string path = std::filesystem::canonical(TempDir()).string() + "/left.db";
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2);", nullptr, nullptr, nullptr) ==
          SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT x FROM t", -1, &statement, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(statement) == SQLITE_ROW);  // Mid-query, never finalized.
  REQUIRE(OpenDescriptors(path) == 1);
  const absl::Status closed = CloseSqlite(db, path);
  INFO(closed.ToString());
  CHECK(closed.ok());
  CHECK(OpenDescriptors(path) == 0);
  CHECK(Rows(path, "SELECT COUNT(*) FROM t") == std::vector<std::string>{"2"});
}

}  // namespace
}  // namespace rlscope::report
