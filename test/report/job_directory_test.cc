#include "report/job_directory.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "format/run_layout.h"
#include "nlohmann/json.hpp"
#include "report/export_job.h"
#include "report/job_merge.h"
#include "report/report_json.h"
#include "test/report/diff_test_runs.h"

using namespace rlscope::report;
using rlscope::report::diff_test::Row;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kMs = 1'000'000;

std::string TempDir() {
  char folder[] = "/tmp/rlscope-job-XXXXXX";
  REQUIRE(mkdtemp(folder) != nullptr);
  return folder;
}

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A node's report.json: two ranks of one torchrun job, their collectives
// ending every 10 ms at true time 1 s + 10 ms k, seen on a clock that
// reads true time + `ahead` (a host booted earlier).
std::string NodeReport(int first_rank, int64_t ahead) {
  RunReport report;
  report.metadata.command = {"torchrun", "train.py"};
  report.metadata.wall_ns = 6'000 * kMs;
  for (int r = 0; r < 2; ++r) {
    ProcessReport process;
    process.pid = 40 + r;
    process.ppid = 30;
    process.argv = {"python3", "train.py"};
    process.rank = {"torchrun", first_rank + r, 4, r};
    process.begin_ns = 500 * kMs + ahead;
    process.end_ns = 5'000 * kMs + ahead;
    process.begin_unix_ns = 1'700'000'000'000 * kMs + 500 * kMs;
    process.traced_thread_ns = 1;
    for (int64_t k = 0; k < 5; ++k) {
      const int64_t end = 1'000 * kMs + 10 * kMs * k + ahead;
      process.collectives.push_back({end - 2 * kMs, end, 0});
    }
    process.collective_operations = {"backprop"};
    report.processes.push_back(process);
    report.rows.push_back(
        Row("backprop", Category::kCommunication, 1'000 * (first_rank + r + 1), Resource::kCpu, 40 + r));
  }
  return FormatReportJson(report);
}

// A job directory as `rlscope merge --out JOB` leaves it: job.json naming
// the nodes' directories (which need not exist), the copies in nodes/N.
std::string JobDirectory(bool with_copies) {
  const std::string job = TempDir();
  const std::string reports[] = {NodeReport(0, 0), NodeReport(2, 3'500 * kMs)};
  nlohmann::json nodes = nlohmann::json::array();
  for (int n = 0; n < 2; ++n) {
    const std::string node_dir = job + "/elsewhere/node" + std::to_string(n);
    nodes.push_back({{"label", "node" + std::to_string(n)}, {"dir", node_dir}});
    const std::string copy = with_copies ? NodeCopyDir(job, n) : node_dir;
    Write(fs::path(copy) / rlscope::run_layout::kReportJson, reports[n]);
  }
  Write(fs::path(job) / rlscope::run_layout::kJobJson,
        nlohmann::json({{"schema", kJobSchema}, {"nodes", nodes}}).dump());
  return job;
}

}  // namespace

TEST_CASE("A job directory is merged again from the copies of its nodes' reports", "[merge]") {
  const std::string job_dir = JobDirectory(/*with_copies=*/true);
  CHECK(IsJobDirectory(job_dir));
  CHECK(NodeCopyDir(job_dir, 0) == job_dir + "/nodes/1");
  const absl::StatusOr<MergedJob> job = LoadJobDirectory(job_dir);
  INFO(job.status().message());
  REQUIRE(job.ok());
  // Labelled and named by the nodes' own directories, not the copies.
  CHECK(job->labels == std::vector<std::string>{"node0", "node1"});
  CHECK(job->nodes[1].dir == job_dir + "/elsewhere/node1");
  CHECK(job->clocks[1].by == NodeClock::By::kCollectives);
  CHECK(job->clocks[1].offset_ns == -3'500 * kMs);
  REQUIRE(job->merged.jobs.size() == 1);
  CHECK(job->merged.jobs[0].ranks.size() == 4);
  fs::remove_all(job_dir);
}

TEST_CASE("A job merged before copies were kept reads its nodes' directories", "[merge]") {
  const std::string job_dir = JobDirectory(/*with_copies=*/false);
  const absl::StatusOr<MergedJob> job = LoadJobDirectory(job_dir);
  INFO(job.status().message());
  REQUIRE(job.ok());
  CHECK(job->merged.jobs.size() == 1);
  // Neither a copy nor the node's directory: refused, naming both.
  fs::remove_all(job_dir + "/elsewhere/node1");
  const absl::StatusOr<MergedJob> lost = LoadJobDirectory(job_dir);
  REQUIRE_FALSE(lost.ok());
  CHECK(lost.status().code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(lost.status().message()), Catch::Contains(job_dir + "/nodes/2"));
  CHECK_THAT(std::string(lost.status().message()), Catch::Contains(job_dir + "/elsewhere/node1"));
  fs::remove_all(job_dir);
}

TEST_CASE("A job.json rlscope cannot read is refused with what to do", "[merge]") {
  const std::string job_dir = TempDir();
  const fs::path job_json = fs::path(job_dir) / rlscope::run_layout::kJobJson;
  const auto problem = [&](const std::string& text) {
    Write(job_json, text);
    const absl::StatusOr<MergedJob> job = LoadJobDirectory(job_dir);
    REQUIRE_FALSE(job.ok());
    CHECK_THAT(std::string(job.status().message()), Catch::Contains("rlscope merge"));
    return std::string(job.status().message());
  };
  CHECK_THAT(problem("{"), Catch::Contains("not valid JSON"));
  CHECK_THAT(problem(R"({"schema": "rlscope.report/1"})"), Catch::Contains("no schema"));
  CHECK_THAT(problem(R"({"schema": "rlscope.job/1", "nodes": {}})"), Catch::Contains("\"nodes\""));
  CHECK_THAT(problem(R"({"schema": "rlscope.job/1", "nodes": [{"dir": "a"}]})"), Catch::Contains("fewer than two"));
  CHECK_THAT(problem(R"({"schema": "rlscope.job/1", "nodes": [{"dir": "a"}, {"dir": 7}]})"),
             Catch::Contains("\"dir\""));
  // A run directory is never a job directory, even with a stray job.json.
  fs::create_directories(fs::path(job_dir) / rlscope::run_layout::kTraceDir);
  CHECK_FALSE(IsJobDirectory(job_dir));
  fs::remove_all(job_dir);
}

TEST_CASE("A job exports every node's rows and its ranks' collectives on one clock", "[merge]") {
  const std::string job_dir = JobDirectory(/*with_copies=*/true);
  const absl::StatusOr<MergedJob> job = LoadJobDirectory(job_dir);
  INFO(job.status().message());
  REQUIRE(job.ok());
  std::ostringstream csv;
  WriteJobCsv(*job, csv);
  CHECK(csv.str() ==
        "view,node,process,operation,resource,category,ns\r\n"
        "uncorrected,node0,40,backprop,CPU,Communication,1000\r\n"
        "uncorrected,node0,41,backprop,CPU,Communication,2000\r\n"
        "uncorrected,node1,40,backprop,CPU,Communication,3000\r\n"
        "uncorrected,node1,41,backprop,CPU,Communication,4000\r\n");
  std::ostringstream chrome;
  WriteJobChromeTrace(*job, chrome);
  const nlohmann::json trace = nlohmann::json::parse(chrome.str());
  std::map<int, std::string> names;
  std::map<int, std::vector<double>> ends;  // Per Chrome pid, microseconds.
  for (const nlohmann::json& event : trace["traceEvents"]) {
    if (event["name"] == "process_name") names[event["pid"]] = event["args"]["name"];
    if (event.value("cat", "") == "Communication") {
      CHECK(event["name"] == "collective in backprop");
      ends[event["pid"]].push_back(event["ts"].get<double>() + event["dur"].get<double>());
    }
  }
  CHECK(names[1] == "node0 pid 40 (torchrun rank 0 of 4): python3");
  CHECK(names[4] == "node1 pid 41 (torchrun rank 3 of 4): python3");
  REQUIRE(ends.size() == 4);
  // Node 1's clock reads 3.5 s ahead; on the job's clock every rank's
  // k-th collective ends at the same instant, 500 ms + 10 ms k after the
  // earliest process start.
  for (const auto& [pid, times] : ends) {
    REQUIRE(times.size() == 5);
    for (size_t k = 0; k < times.size(); ++k) CHECK(times[k] == Approx(500'000.0 + 10'000.0 * k).margin(0.01));
  }
  fs::remove_all(job_dir);
}
