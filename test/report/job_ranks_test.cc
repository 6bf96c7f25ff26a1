#include "report/job_ranks.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "report/report_tables.h"
#include "report/run_report.h"

using namespace rlscope::report;

namespace {

ProcessReport Process(int pid, int ppid, std::vector<std::string> argv, rlscope::LauncherRank rank = {}) {
  ProcessReport process;
  process.pid = pid;
  process.ppid = ppid;
  process.traced_thread_ns = 1;
  process.argv = std::move(argv);
  process.rank = std::move(rank);
  return process;
}

BreakdownRow Row(int pid, const char* operation, int64_t ns, Category category = Category::kPython) {
  BreakdownRow row;
  row.pid = pid;
  row.operation = operation;
  row.category = category;
  row.ns = ns;
  return row;
}

}  // namespace

TEST_CASE("Numbers aside, one command's instances match", "[jobs]") {
  CHECK(NumbersAside("spawn_main(tracker_fd=6, pipe_handle=12)") == "spawn_main(tracker_fd=#, pipe_handle=#)");
  CHECK(NumbersAside("worker.py") == "worker.py");
  CHECK(NumbersAside("") == "");
}

TEST_CASE("Ranks told by the launcher, one process each, slowest found", "[jobs]") {
  RunReport report;
  // Processes in start order: the launcher, rank 1, rank 0, and a child of
  // rank 0 that inherited its variables.
  report.processes = {Process(10, 1, {"launcher"}), Process(11, 10, {"python3", "train.py"}, {"torchrun", 1, 2, 1}),
                      Process(12, 10, {"python3", "train.py"}, {"torchrun", 0, 2, 0}),
                      Process(13, 12, {"sh", "-c", "nvidia-smi"}, {"torchrun", 0, 2, 0})};
  report.rows = {Row(11, "simulation", 300),
                 Row(12, "simulation", 100),
                 Row(12, "backprop", 50),
                 Row(11, "backprop", 10),
                 Row(11, "backprop", 999, Category::kWait),
                 Row(13, "simulation", 5000)};
  const std::vector<JobReport> jobs = JobsOf(report);
  REQUIRE(jobs.size() == 1);
  const JobReport& job = jobs[0];
  CHECK(job.launcher == "torchrun");
  CHECK(job.world_size == 2);
  REQUIRE(job.ranks.size() == 2);
  CHECK((job.ranks[0].rank == 0 && job.ranks[0].pid == 12));
  CHECK((job.ranks[1].rank == 1 && job.ranks[1].pid == 11));
  REQUIRE(job.operations.size() == 2);
  CHECK(job.operations[0].operation == "simulation");
  CHECK(job.operations[0].total_ns == 400);
  CHECK(job.operations[0].per_rank_ns == std::vector<int64_t>{100, 300});
  CHECK(job.operations[0].slowest == 1);
  CHECK(job.operations[0].slowest_over_mean == Approx(1.5));
  CHECK(job.operations[1].per_rank_ns == std::vector<int64_t>{50, 10});  // Wait is not work.
  CHECK(JobTitle(job) == "2 ranks of torchrun (world size 2): python3 train.py");
  const CellTable cells = JobCells(job, 8, 10);
  CHECK(cells.header == std::vector<std::string>{"operation", "all ranks", "rank 0", "rank 1", "slowest"});
  CHECK(cells.rows[0].back() == "rank 1, 1.50x the mean");
  const CellTable narrow = JobCells(job, 1, 10);
  CHECK(narrow.header ==
        std::vector<std::string>{"operation", "all ranks", "min rank", "median rank", "max rank", "slowest"});
}

TEST_CASE("Ranks told by the process tree: siblings running one command", "[jobs]") {
  RunReport report;
  report.processes = {Process(20, 1, {"python3", "main.py"}),
                      Process(21, 20, {"python3", "-c", "from multiprocessing.resource_tracker import main;main(5)"}),
                      Process(22, 20, {"python3", "-c", "spawn_main(tracker_fd=6, pipe_handle=8)"}),
                      Process(23, 20, {"python3", "-c", "spawn_main(tracker_fd=6, pipe_handle=10)"}),
                      Process(24, 23, {"python3", "-c", "spawn_main(tracker_fd=6, pipe_handle=8)"}),
                      Process(25, 1, {"python3", "main.py"}),
                      Process(26, 20, {"nvidia-smi", "--query"}),
                      Process(27, 20, {"nvidia-smi", "--query"})};
  report.processes[6].traced_thread_ns = report.processes[7].traced_thread_ns = 0;  // Helpers: no traced work.
  report.rows = {Row(22, "simulation", 10), Row(23, "simulation", 30)};
  const std::vector<JobReport> jobs = JobsOf(report);
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].launcher == "process tree");
  CHECK(jobs[0].parent_pid == 20);
  CHECK(jobs[0].world_size == 2);
  REQUIRE(jobs[0].ranks.size() == 2);
  CHECK((jobs[0].ranks[0].pid == 22 && jobs[0].ranks[1].pid == 23));
  REQUIRE(jobs[0].operations.size() == 1);
  CHECK(jobs[0].operations[0].slowest == 1);
  // Siblings that never communicate are workers, not ranks.
  CHECK(JobTitle(jobs[0]).starts_with("2 worker processes of process 20, one command"));
  report.rows.push_back(Row(22, "backprop", 4, Category::kCommunication));
  CHECK(JobTitle(JobsOf(report).at(0)).starts_with("2 ranks by the process tree (children of process 20"));
  report.rows.pop_back();
  // Without operation time they are no job; nor are children of init
  // (pid 1: orphans, or programs started apart).
  report.rows.clear();
  CHECK(JobsOf(report).empty());
  report.rows = {Row(20, "simulation", 5), Row(25, "simulation", 5)};
  report.processes = {report.processes[0], report.processes[5]};
  CHECK(JobsOf(report).empty());
}

TEST_CASE("A launcher's job of one rank is none; its workers group by the tree", "[jobs]") {
  RunReport report;
  const rlscope::LauncherRank one{"srun", 0, 1, 0};
  report.processes = {Process(30, 2, {"python3", "train.py"}, one), Process(31, 30, {"python3", "worker", "1"}, one),
                      Process(32, 30, {"python3", "worker", "2"}, one)};
  report.rows = {Row(30, "backprop", 5), Row(31, "simulation", 5), Row(32, "simulation", 7)};
  const std::vector<JobReport> jobs = JobsOf(report);
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].launcher == "process tree");
  CHECK(jobs[0].parent_pid == 30);
}

TEST_CASE("Collectives lined up across ranks: waits for the last to arrive, the straggler", "[jobs]") {
  RunReport report;
  report.processes = {Process(20, 1, {"train.py"}, {"torchrun", 0, 3, 0}),
                      Process(21, 1, {"train.py"}, {"torchrun", 1, 3, 1}),
                      Process(22, 1, {"train.py"}, {"torchrun", 2, 3, 2})};
  // Collective k: ranks 0 and 1 arrive early, rank 2 (the straggler) late,
  // except in the second one, where rank 0 is last. All end together.
  const int64_t arrivals[3][3] = {{100, 1060, 2000}, {150, 1000, 2050}, {400, 1030, 2300}};
  const int64_t ends[3] = {500, 1100, 2400};
  for (size_t r = 0; r < 3; ++r) {
    ProcessReport& process = report.processes[r];
    process.collective_operations = {"backprop", "inference"};
    for (size_t k = 0; k < 3; ++k) process.collectives.push_back({arrivals[r][k], ends[k], k == 1 ? 1 : 0});
  }
  report.rows = {Row(20, "backprop", 600, Category::kCommunication), Row(21, "backprop", 600, Category::kCommunication),
                 Row(22, "backprop", 250, Category::kCommunication), Row(20, "inference", 90), Row(21, "inference", 90),
                 Row(22, "inference", 90), Row(20, "inference", 100, Category::kCommunication),
                 Row(21, "inference", 100, Category::kCommunication),
                 // Less than the 30 ns rank 2 waited in it on the recorded
                 // clock (a corrected report's time): its wait is cut to 25.
                 Row(22, "inference", 25, Category::kCommunication)};
  const std::vector<JobReport> jobs = JobsOf(report);
  REQUIRE(jobs.size() == 1);
  const JobReport::Communication& talk = jobs[0].communication;
  REQUIRE(talk.lined_up);
  CHECK(talk.collectives == 3);
  CHECK(talk.per_rank_ns == std::vector<int64_t>{700, 700, 275});
  // Rank 0 waits 300 + 0 (last, the second) + 300; rank 1 250 + 60 + 250;
  // rank 2 0 + 30 + 0, of which 25 in inference's 25 ns.
  CHECK(talk.per_rank_wait_ns == std::vector<int64_t>{600, 560, 25});
  CHECK(talk.per_rank_last == std::vector<uint64_t>{1, 0, 2});
  for (const JobReport::Operation& operation : jobs[0].operations) {
    if (operation.operation == "backprop") CHECK(operation.per_rank_wait_ns == std::vector<int64_t>{600, 500, 0});
    if (operation.operation == "inference") CHECK(operation.per_rank_wait_ns == std::vector<int64_t>{0, 60, 25});
  }
  // The table puts the straggler (who waited least) first.
  const CellTable cells = JobCommunicationCells(jobs[0], 8);
  REQUIRE(cells.rows.size() == 3);
  CHECK(cells.rows[0][0] == "rank 2");
  CHECK(cells.rows[0][3] == "2 of 3");
  CHECK(JobCommunicationNote(jobs[0]).find("3 collectives per rank") != std::string::npos);
}

TEST_CASE("Ranks with different numbers of collectives are not lined up, and say why", "[jobs]") {
  RunReport report;
  report.processes = {Process(30, 1, {"train.py"}, {"torchrun", 0, 2, 0}),
                      Process(31, 1, {"train.py"}, {"torchrun", 1, 2, 1})};
  for (ProcessReport& process : report.processes) process.collective_operations = {"backprop"};
  report.processes[0].collectives = {{0, 10, 0}, {20, 30, 0}};
  report.processes[1].collectives = {{0, 10, 0}};
  report.rows = {Row(30, "backprop", 20, Category::kCommunication), Row(31, "backprop", 10, Category::kCommunication)};
  const std::vector<JobReport> jobs = JobsOf(report);
  REQUIRE(jobs.size() == 1);
  const JobReport::Communication& talk = jobs[0].communication;
  CHECK_FALSE(talk.lined_up);
  CHECK(talk.per_rank_wait_ns.empty());
  CHECK(talk.per_rank_ns == std::vector<int64_t>{20, 10});
  CHECK(talk.not_lined_up.find("different numbers of collectives (1 to 2)") != std::string::npos);
  CHECK(JobCommunicationNote(jobs[0]).find("not told") != std::string::npos);
  const CellTable cells = JobCommunicationCells(jobs[0], 8);
  CHECK(cells.header == std::vector<std::string>{"rank", "Communication"});
}

TEST_CASE("A job that never communicated has no communication table", "[jobs]") {
  RunReport report;
  report.processes = {Process(40, 1, {"train.py"}, {"torchrun", 0, 2, 0}),
                      Process(41, 1, {"train.py"}, {"torchrun", 1, 2, 1})};
  report.rows = {Row(40, "simulation", 20), Row(41, "simulation", 10)};
  const std::vector<JobReport> jobs = JobsOf(report);
  REQUIRE(jobs.size() == 1);
  CHECK_FALSE(jobs[0].communication.lined_up);
  CHECK(JobCommunicationCells(jobs[0], 8).header.empty());
  CHECK(JobCommunicationNote(jobs[0]).empty());
}
