#include "report/job_merge.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/clock_alignment.h"
#include "report/node_summary.h"
#include "report/report_json.h"
#include "report/run_report.h"
#include "test/report/diff_test_runs.h"

using namespace rlscope::report;
using rlscope::report::diff_test::Row;

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kUs = 1'000;

// A deterministic scatter in [-50, 50) us, as scheduling adds to when a
// rank sees a collective end.
int64_t Jitter(uint64_t k, uint64_t salt) {
  const uint64_t mixed = (k + 1) * 0x9E3779B97F4A7C15ULL ^ (salt * 0xC2B2AE3D27D4EB4FULL);
  return static_cast<int64_t>((mixed >> 33) % 100) * kUs - 50 * kUs;
}

RankCollectiveEnds Rank(int rank, std::vector<int64_t> ends) { return {"torchrun", 4, rank, std::move(ends)}; }

// Ends of `count` collectives 10 ms apart on the true clock, seen on a
// node whose clock reads true time - `behind`.
std::vector<int64_t> Ends(size_t count, int64_t behind, uint64_t salt) {
  std::vector<int64_t> ends;
  for (size_t k = 0; k < count; ++k)
    ends.push_back(1'000 * kMs + static_cast<int64_t>(k) * 10 * kMs + Jitter(k, salt) - behind);
  return ends;
}

ProcessReport RankProcess(int pid, int rank, int64_t begin_ns, int64_t unix_ns, std::vector<CollectiveCall> calls) {
  ProcessReport process;
  process.pid = pid;
  process.ppid = 100;
  process.argv = {"python3", "train.py"};
  process.rank = {"torchrun", rank, 4, rank % 2};
  process.begin_ns = begin_ns;
  process.end_ns = begin_ns + 5'000 * kMs;
  process.begin_unix_ns = unix_ns;
  process.traced_thread_ns = 1;
  process.collectives = std::move(calls);
  process.collective_operations = {"backprop"};
  return process;
}

}  // namespace

TEST_CASE("Collectives' ends give a node's clock offset where the real-time clocks are off", "[merge]") {
  // Node 1's monotonic clock is 3.5 s behind node 0's (another boot time);
  // its real-time clock is 2 ms fast (NTP's error, or worse).
  const int64_t behind = 3'500 * kMs, ntp_error = 2 * kMs;
  NodeClockInput reference, node;
  reference.realtime_minus_monotonic_ns = {1'700'000'000'000 * kMs, 1'700'000'000'000 * kMs + 3 * kUs};
  node.realtime_minus_monotonic_ns = {1'700'000'000'000 * kMs + behind + ntp_error};
  reference.ranks = {Rank(0, Ends(200, 0, 1)), Rank(1, Ends(200, 0, 2))};
  node.ranks = {Rank(2, Ends(200, behind, 3)), Rank(3, Ends(200, behind, 4))};
  // A few collectives seen late on one node (preempted ranks) move a
  // median little.
  for (size_t k = 0; k < 200; k += 25) node.ranks[0].ends_ns[k] += 5 * kMs, node.ranks[1].ends_ns[k] += 5 * kMs;
  const std::vector<NodeClock> clocks = AlignClocks({reference, node});
  REQUIRE(clocks.size() == 2);
  CHECK(clocks[0].by == NodeClock::By::kReference);
  CHECK(clocks[0].offset_ns == 0);
  CHECK(clocks[1].by == NodeClock::By::kCollectives);
  CHECK(clocks[1].collectives == 200);
  REQUIRE(clocks[1].coarse_offset_ns.has_value());
  CHECK(std::llabs(*clocks[1].coarse_offset_ns - (behind + ntp_error)) < 10 * kUs);
  CHECK(std::llabs(clocks[1].offset_ns - behind) < 20 * kUs);
  CHECK(clocks[1].drift == 0);  // The halves agree within their noise.
  CHECK(clocks[1].spread_ns > 0);
  CHECK(clocks[1].spread_ns < 50 * kUs);
  // 1.858 x spread / sqrt(200): a few microseconds.
  CHECK(clocks[1].uncertainty_ns > 0);
  CHECK(clocks[1].uncertainty_ns < clocks[1].spread_ns / 5);
}

TEST_CASE("Queued collectives keep their place in the line-up but align nothing", "[merge]") {
  // Every other collective is NCCL's, ended on the CPU when queued: node
  // 1's ranks queued theirs 7 ms before the reference's ranks did (they
  // waited for a straggler on the device instead). Their ends would drag
  // the offset by up to 7 ms; the blocking ones give it.
  const int64_t behind = 3'500 * kMs;
  NodeClockInput reference, node;
  reference.ranks = {Rank(0, Ends(200, 0, 1))};
  node.ranks = {Rank(1, Ends(200, behind, 2))};
  for (size_t k = 0; k < 200; k += 2) node.ranks[0].ends_ns[k] -= 7 * kMs;
  NodeClockInput marked_reference = reference, marked_node = node;
  for (size_t k = 0; k < 200; k += 2) {
    marked_reference.ranks[0].ends_ns[k] = kQueuedEnd;
    marked_node.ranks[0].ends_ns[k] = kQueuedEnd;
  }
  const std::vector<NodeClock> clocks = AlignClocks({marked_reference, marked_node});
  REQUIRE(clocks[1].by == NodeClock::By::kCollectives);
  CHECK(clocks[1].collectives == 100);
  CHECK(std::llabs(clocks[1].offset_ns - behind) < 20 * kUs);
  // Unmarked, the same ends put the offset milliseconds off.
  const std::vector<NodeClock> unmarked = AlignClocks({reference, node});
  CHECK(std::llabs(unmarked[1].offset_ns - behind) > 1 * kMs);
  // One queued end at k marks the k-th out for the whole job, not just
  // that node.
  marked_node = node;
  for (size_t k = 0; k < 200; k += 2) marked_node.ranks[0].ends_ns[k] = kQueuedEnd;
  CHECK(AlignClocks({reference, marked_node})[1].collectives == 100);
}

TEST_CASE("A node whose clock runs slow over an hour gets an offset that drifts with it", "[merge]") {
  // One collective a second for an hour; node 1's clock loses 20 parts per
  // million (72 ms over the hour) on top of being 3.5 s behind. One
  // offset would be 36 ms off at either end.
  const int64_t behind = 3'500 * kMs, start = 1'000 * kMs;
  const double slow = 20e-6;
  const auto node_time = [&](int64_t true_ns) {
    return true_ns - behind - static_cast<int64_t>(std::llround(slow * static_cast<double>(true_ns - start)));
  };
  NodeClockInput reference, node;
  std::vector<int64_t> reference_ends, node_ends;
  for (int64_t k = 0; k < 3600; ++k) {
    const int64_t end = start + k * 1'000 * kMs;
    reference_ends.push_back(end + Jitter(static_cast<uint64_t>(k), 1));
    node_ends.push_back(node_time(end) + Jitter(static_cast<uint64_t>(k), 2));
  }
  reference.ranks = {Rank(0, reference_ends)};
  node.ranks = {Rank(1, node_ends)};
  const std::vector<NodeClock> clocks = AlignClocks({reference, node});
  REQUIRE(clocks[1].by == NodeClock::By::kCollectives);
  CHECK(clocks[1].drift == Approx(slow / (1 - slow)).epsilon(0.01));
  for (const int64_t true_ns : {start, start + 1'800'000 * kMs, start + 3'599'000 * kMs}) {
    CHECK(std::llabs(clocks[1].ToReference(node_time(true_ns)) - true_ns) < 50 * kUs);
  }
}

TEST_CASE("A node sharing no job with the reference is aligned through one that shares both", "[merge]") {
  // A learner job (torchrun) on nodes 0 and 1; an actor fleet (mpirun) on
  // nodes 1 and 2. Node 1's clock is 3.5 s behind node 0's, node 2's 7.25 s
  // behind and losing 20 parts per million over an hour; the real-time
  // clocks are 2 ms off.
  const int64_t start = 1'000 * kMs, behind1 = 3'500 * kMs, behind2 = 7'250 * kMs;
  const double slow = 20e-6;
  const auto node2_time = [&](int64_t true_ns) {
    return true_ns - behind2 - static_cast<int64_t>(std::llround(slow * static_cast<double>(true_ns - start)));
  };
  std::vector<int64_t> learner0, learner1, actor1, actor2;
  for (int64_t k = 0; k < 3600; ++k) {
    const int64_t end = start + k * 1'000 * kMs;
    const auto u = static_cast<uint64_t>(k);
    learner0.push_back(end + Jitter(u, 1));
    learner1.push_back(end - behind1 + Jitter(u, 2));
    actor1.push_back(end + 400 * kMs - behind1 + Jitter(u, 3));
    actor2.push_back(node2_time(end + 400 * kMs) + Jitter(u, 4));
  }
  NodeClockInput node0, node1, node2;
  node0.ranks = {Rank(0, learner0)};
  node1.ranks = {Rank(1, learner1), {"mpirun (Open MPI)", 2, 0, actor1}};
  node2.ranks = {{"mpirun (Open MPI)", 2, 1, actor2}};
  node0.realtime_minus_monotonic_ns = {1'700'000'000'000 * kMs};
  node2.realtime_minus_monotonic_ns = {1'700'000'000'000 * kMs + behind2 + 2 * kMs};
  // Listed before the node it is aligned through: the rounds still find it.
  const std::vector<NodeClock> clocks = AlignClocks({node0, node2, node1});
  REQUIRE(clocks[2].by == NodeClock::By::kCollectives);
  CHECK_FALSE(clocks[2].via.has_value());
  REQUIRE(clocks[1].by == NodeClock::By::kCollectives);
  REQUIRE(clocks[1].via == std::optional<size_t>(2));
  CHECK(clocks[1].collectives == 3600);
  CHECK(clocks[1].drift == Approx(slow / (1 - slow)).epsilon(0.02));
  for (const int64_t true_ns : {start, start + 1'800'000 * kMs, start + 3'599'000 * kMs}) {
    CHECK(std::llabs(clocks[1].ToReference(node2_time(true_ns)) - true_ns) < 50 * kUs);
  }
  // Both links' errors: more than either alone.
  CHECK(clocks[1].uncertainty_ns >= clocks[2].uncertainty_ns);
  CHECK(clocks[1].coarse_offset_ns == behind2 + 2 * kMs);
  // In the merge's words and job.json, the node it went through.
  MergedJob job;
  job.labels = {"n0", "n2", "n1"};
  job.clocks = clocks;
  for (int n = 0; n < 3; ++n) job.nodes.emplace_back();
  CHECK_THAT(FormatJobJson(job), Catch::Contains("\"via\": \"n1\""));
  CHECK_THAT(FormatJobText(job), Catch::Contains("shares no job with n0's ranks"));
}

TEST_CASE("Without lined-up collectives a node's clock is aligned by real time, or not at all", "[merge]") {
  NodeClockInput reference, node;
  reference.realtime_minus_monotonic_ns = {5 * kMs};
  node.realtime_minus_monotonic_ns = {12 * kMs};
  SECTION("too few collectives") {
    reference.ranks = {Rank(0, Ends(2, 0, 1))};
    node.ranks = {Rank(1, Ends(2, 0, 2))};
  }
  SECTION("the ranks issued different numbers of them") {
    reference.ranks = {Rank(0, Ends(10, 0, 1)), Rank(1, Ends(9, 0, 1))};
    node.ranks = {Rank(2, Ends(10, 0, 2))};
  }
  SECTION("ranks of another job") {
    reference.ranks = {Rank(0, Ends(10, 0, 1))};
    node.ranks = {{"mpirun (Open MPI)", 4, 1, Ends(10, 0, 2)}};
  }
  std::vector<NodeClock> clocks = AlignClocks({reference, node});
  CHECK(clocks[1].by == NodeClock::By::kRealtime);
  CHECK(clocks[1].offset_ns == 7 * kMs);
  CHECK(clocks[1].collectives == 0);
  node.realtime_minus_monotonic_ns.clear();
  clocks = AlignClocks({reference, node});
  CHECK(clocks[1].by == NodeClock::By::kNothing);
  CHECK(clocks[1].offset_ns == 0);
  CHECK_FALSE(clocks[1].coarse_offset_ns.has_value());
  CHECK(std::string(AlignedBy(clocks[1].by)) == "none");
}

TEST_CASE("A node's report.json reads back what the merge needs", "[merge]") {
  RunReport report;
  report.processes.push_back(RankProcess(41, 0, 7 * kMs, 1'700'000'000'000 * kMs,
                                         {{8 * kMs, 9 * kMs, 0}, {10 * kMs, 11 * kMs, 0, true, true}}));
  report.processes.push_back(RankProcess(42, 1, 7 * kMs, 0, {}));
  report.processes.back().rank = {};
  report.rows = {Row("backprop", Category::kCommunication, 123, Resource::kCpu, 41),
                 Row("simulation", Category::kPython, 7, Resource::kCpu, 42)};
  report.rows[0].resource = Resource::kCpuGpu;
  report.metadata.command = {"torchrun", "train.py"};
  report.metadata.wall_ns = 6'000 * kMs;
  report.metadata.exit_code = 3;
  report.corrected = true;
  report.corrected_wall_ns = 5'500 * kMs;
  report.processes[0].transitions = {{"backprop", Category::kPython, Category::kCommunication, 12, 4}};
  report.processes[0].instance_stats = {{"backprop", 4, 40 * kMs, 10 * kMs, 10 * kMs, 11 * kMs, 12 * kMs}};
  const absl::StatusOr<NodeSummary> node = ParseNodeSummary(FormatReportJson(report), "node0");
  REQUIRE(node.ok());
  // What comparing jobs needs: the run's own figures, and per process its
  // transitions and its operations' instances.
  CHECK(node->command == std::vector<std::string>{"torchrun", "train.py"});
  CHECK(node->report.metadata.command == node->command);
  CHECK(node->report.metadata.wall_ns == 6'000 * kMs);
  CHECK(node->report.metadata.exit_code == 3);
  CHECK(node->corrected);
  CHECK(node->report.corrected_wall_ns == 5'500 * kMs);
  REQUIRE(node->report.processes[0].transitions.size() == 1);
  const TransitionRow& transition = node->report.processes[0].transitions[0];
  CHECK(transition.operation == "backprop");
  CHECK(transition.from == Category::kPython);
  CHECK(transition.to == Category::kCommunication);
  CHECK(transition.count == 12);
  CHECK(transition.operation_instances == 4);
  CHECK(node->report.processes[0].operation_instances == std::map<std::string, uint64_t>{{"backprop", 4}});
  CHECK(node->dir == "node0");
  REQUIRE(node->report.processes.size() == 2);
  const ProcessReport& rank = node->report.processes[0];
  CHECK(rank.pid == 41);
  CHECK(rank.ppid == 100);
  CHECK(rank.argv == std::vector<std::string>{"python3", "train.py"});
  CHECK(rank.rank.launcher == "torchrun");
  CHECK(rank.rank.world_size == 4);
  CHECK(rank.begin_ns == 7 * kMs);
  CHECK(rank.begin_unix_ns == 1'700'000'000'000 * kMs);
  REQUIRE(rank.collectives.size() == 2);
  CHECK(rank.collectives[0].begin_ns == 8 * kMs);
  CHECK(rank.collectives[0].end_ns == 9 * kMs);
  CHECK_FALSE(rank.collectives[0].queued);
  CHECK(rank.collectives[1].queued);
  CHECK(rank.collective_operations == std::vector<std::string>{"backprop"});
  CHECK(node->report.processes[1].rank.launcher.empty());
  CHECK(node->report.processes[1].begin_unix_ns == 0);  // Written null: not known.
  REQUIRE(node->report.rows.size() == 2);
  CHECK(node->report.rows[0].pid == 41);
  CHECK(node->report.rows[0].category == Category::kCommunication);
  CHECK(node->report.rows[0].resource == Resource::kCpuGpu);
  CHECK(node->report.rows[0].ns == 123);
}

TEST_CASE("A report.json the merge cannot use is refused with a reason", "[merge]") {
  const auto problem = [](const std::string& text) {
    const absl::StatusOr<NodeSummary> node = ParseNodeSummary(text, "node0");
    REQUIRE_FALSE(node.ok());
    return std::string(node.status().message());
  };
  CHECK_THAT(problem("{not json"), Catch::Contains("node0/report.json is not valid JSON"));
  CHECK_THAT(problem(R"({"schema": "rlscope.diff/1"})"), Catch::Contains("has schema \"rlscope.diff/1\""));
  const std::string old_process = R"({"pid": 1, "ppid": 0, "argv": [], "begin_ns": 0, "end_ns": 1,
                                      "traced_thread_ns": 0, "launcher_rank": null})";
  const std::string head = R"({"schema": "rlscope.report/1", "command": ["x"], "corrected": false, "rows": [], )";
  CHECK_THAT(problem(head + R"("processes": [)" + old_process + "]}"), Catch::Contains("written by an older rlscope"));
  CHECK_THAT(problem(head + R"("processes": [{"pid": "1"}]})"), Catch::Contains("\"pid\" has the wrong type"));
  CHECK_THAT(problem(head + R"("processes": [{"pid": 1, "ppid": 0, "argv": [], "begin_ns": 0, "end_ns": 1,
      "traced_thread_ns": 0, "begin_unix_ns": 5, "collectives": {"operations": [], "calls": [[1, 2, 0]]}}]})"),
             Catch::Contains("a collective is not"));
  const std::string process_head = R"({"pid": 1, "ppid": 0, "argv": [], "end_ns": 9, "traced_thread_ns": 0, )";
  CHECK_THAT(problem(head + R"("processes": [)" + process_head + R"("begin_ns": 0, "begin_unix_ns": 5,
      "collectives": {"operations": ["a"], "calls": [[8, 2, 0]]}}]})"),
             Catch::Contains("0 <= begin_ns <= end_ns < 2^61"));
  CHECK_THAT(problem(head + R"("processes": [)" + process_head + R"("begin_ns": 0, "begin_unix_ns": 5,
      "collectives": {"operations": ["a", 5], "calls": []}}]})"),
             Catch::Contains("operation is no string"));
  CHECK_THAT(
      problem(head + R"("processes": [)" + process_head + R"("begin_ns": 9000000000000000000, "begin_unix_ns": 5}]})"),
      Catch::Contains("is not from 0 to 2^61"));
  CHECK_THAT(problem(R"({"schema": "rlscope.report/1", "command": ["x"], "corrected": false,
      "rows": [{"process": 1, "operation": "a", "resource": "CPU", "category": "Telepathy", "ns": 1}],
      "processes": []})"),
             Catch::Contains("unknown category"));
}

TEST_CASE("Two nodes' ranks are one job, on one clock, whatever their pids", "[merge]") {
  // Four ranks, two a node; node 1's clock reads 3.5 s less than node 0's
  // and its real-time clock is 2 ms fast. Both nodes reuse pids 41 and 42.
  // Rank 3 (node 1) arrives 4 ms late at every collective: the others wait
  // for it, which only holds once node 1's times are moved onto node 0's
  // clock.
  const int64_t behind = 3'500 * kMs, ntp_error = 2 * kMs, unix_base = 1'700'000'000'000 * kMs;
  const auto calls = [&](int rank, int64_t shift) {
    std::vector<CollectiveCall> out;
    for (int64_t k = 0; k < 50; ++k) {
      const int64_t arrival = 1'000 * kMs + k * 20 * kMs + (rank == 3 ? 4 * kMs : 0) + rank * 10 * kUs;
      const int64_t end = 1'000 * kMs + k * 20 * kMs + 4 * kMs + 100 * kUs + Jitter(static_cast<uint64_t>(k), rank) / 5;
      out.push_back({arrival - shift, end - shift, 0});
    }
    return out;
  };
  NodeSummary node0, node1;
  node0.dir = "/runs/node0";
  node1.dir = "/runs/node1";
  for (int local = 0; local < 2; ++local) {
    const int pid = 41 + local;
    node0.report.processes.push_back(RankProcess(pid, local, 0, unix_base, calls(local, 0)));
    node1.report.processes.push_back(
        RankProcess(pid, 2 + local, -behind, unix_base + ntp_error, calls(2 + local, behind)));
    for (NodeSummary* node : {&node0, &node1}) {
      node->report.rows.push_back(Row("backprop", Category::kCommunication, 250 * kMs, Resource::kCpu, pid));
      node->report.rows.push_back(Row("simulation", Category::kPython,
                                      (node == &node1 && local == 1) ? 900 * kMs : 300 * kMs, Resource::kCpu, pid));
    }
  }
  const MergedJob job = MergeNodes({node0, node1});
  REQUIRE(job.labels == std::vector<std::string>{"node0", "node1"});
  CHECK(job.clocks[1].by == NodeClock::By::kCollectives);
  CHECK(std::llabs(job.clocks[1].offset_ns - behind) < 20 * kUs);
  REQUIRE(job.merged.jobs.size() == 1);
  const JobReport& merged = job.merged.jobs[0];
  CHECK(merged.launcher == "torchrun");
  REQUIRE(merged.ranks.size() == 4);
  for (int r = 0; r < 4; ++r) {
    CHECK(merged.ranks[r].rank == r);
    CHECK(merged.ranks[r].pid == 41 + r % 2);
    CHECK(merged.ranks[r].node == (r < 2 ? "node0" : "node1"));
  }
  // Rank 3 is the straggler: last at every collective, and every other
  // rank waits about 4 ms at each of the 50.
  const JobReport::Communication& talk = merged.communication;
  REQUIRE(talk.lined_up);
  CHECK(talk.per_rank_last == std::vector<uint64_t>{0, 0, 0, 50});
  for (int r = 0; r < 3; ++r) {
    CHECK(talk.per_rank_wait_ns[r] > 50 * 39 * kMs / 10);
    CHECK(talk.per_rank_wait_ns[r] < 50 * 41 * kMs / 10);
  }
  CHECK(talk.per_rank_wait_ns[3] == 0);
  CHECK(job.problems.empty());
  const std::string text = FormatJobText(job);
  CHECK_THAT(text, Catch::Contains("rlscope merge: 2 nodes, 1 job(s)"));
  CHECK_THAT(text, Catch::Contains("by the ends of 50 collectives"));
  CHECK_THAT(text, Catch::Contains("job: 4 ranks of torchrun"));
  const std::string json = FormatJobJson(job);
  CHECK_THAT(json, Catch::Contains("\"schema\": \"rlscope.job/1\""));
  CHECK_THAT(json, Catch::Contains("\"aligned_by\": \"collectives\""));
  CHECK_THAT(json, Catch::Contains("\"node\": \"node1\""));
}

TEST_CASE("Collectives that disagree with synchronised real-time clocks are reported", "[merge]") {
  // Node 1's window of collectives began 10 collectives (100 ms) later
  // than node 0's: lined up by index they put its clock 100 ms off, where
  // the hosts' real-time clocks (one host here) say 0.
  NodeSummary node0, node1;
  node0.dir = "node0";
  node1.dir = "node1";
  std::vector<CollectiveCall> early, late;
  for (int64_t k = 0; k < 50; ++k) {
    early.push_back({1'000 * kMs + k * 10 * kMs, 1'001 * kMs + k * 10 * kMs, 0});
    late.push_back({1'100 * kMs + k * 10 * kMs, 1'101 * kMs + k * 10 * kMs, 0});
  }
  node0.report.processes.push_back(RankProcess(41, 0, 0, 7 * kMs, early));
  node1.report.processes.push_back(RankProcess(41, 1, 0, 7 * kMs, late));
  for (NodeSummary* node : {&node0, &node1}) {
    node->report.rows.push_back(Row("backprop", Category::kCommunication, kMs, Resource::kCpu, 41));
  }
  const MergedJob job = MergeNodes({node0, node1});
  CHECK(job.clocks[1].offset_ns == -100 * kMs);
  REQUIRE(job.problems.size() == 1);
  CHECK_THAT(job.problems[0], Catch::Contains("differ by 100"));
  CHECK_THAT(job.problems[0], Catch::Contains("may not be one collective"));
}

TEST_CASE("Workers of one parent pid on two nodes are two jobs, each on its node", "[merge]") {
  // Both hosts ran a vector env whose parent had pid 100 and whose
  // workers had pids 41 and 42: by the tree they are one node's each.
  std::vector<NodeSummary> nodes(2);
  for (size_t n = 0; n < 2; ++n) {
    nodes[n].dir = n == 0 ? "a" : "b";
    for (int pid : {41, 42}) {
      ProcessReport worker = RankProcess(pid, 0, 0, 5, {});
      worker.rank = {};
      worker.argv = {"python3", "-c", "from multiprocessing.spawn import spawn_main; spawn_main(pipe_handle=7)"};
      nodes[n].report.processes.push_back(std::move(worker));
      nodes[n].report.rows.push_back(Row("simulation", Category::kSimulator, 3 * kMs, Resource::kCpu, pid));
    }
  }
  const MergedJob job = MergeNodes(nodes);
  REQUIRE(job.merged.jobs.size() == 2);
  for (size_t j = 0; j < 2; ++j) {
    const JobReport& workers = job.merged.jobs[j];
    CHECK(workers.launcher == "process tree");
    CHECK(workers.parent_pid == 100);
    REQUIRE(workers.ranks.size() == 2);
    CHECK(workers.ranks[0].node == job.labels[j]);
    CHECK(workers.ranks[1].node == job.labels[j]);
    CHECK(workers.ranks[0].pid == 41);
    CHECK(workers.ranks[1].pid == 42);
  }
  CHECK_THAT(FormatJobText(job), Catch::Contains("by node: a: 0 (pid 41), 1 (pid 42)"));
}

TEST_CASE("A merge with no job across the nodes says so", "[merge]") {
  NodeSummary node0, node1;
  node0.dir = "a/run";
  node1.dir = "b/run";
  node0.report.processes.push_back(RankProcess(41, 0, 0, 5, {}));
  node0.report.processes.back().rank = {};
  node1.report.processes.push_back(RankProcess(41, 0, 0, 9, {}));
  node1.report.processes.back().rank = {};
  node1.corrected = true;
  const MergedJob job = MergeNodes({node0, node1});
  CHECK(job.labels == std::vector<std::string>{"run#1", "run#2"});
  CHECK(job.clocks[1].by == NodeClock::By::kRealtime);
  CHECK(job.clocks[1].offset_ns == 4);
  REQUIRE(job.problems.size() == 2);
  CHECK_THAT(job.problems[0], Catch::Contains("No job has ranks on more than one node"));
  CHECK_THAT(job.problems[1], Catch::Contains("some are not"));
}

TEST_CASE("A merged job compares as one run: rows summed, the longest node's wall time", "[merge]") {
  const auto node = [](const std::string& dir, int64_t wall_ns, std::optional<int64_t> corrected_wall_ns,
                       int first_rank, uint64_t steps) {
    NodeSummary summary;
    summary.dir = dir;
    summary.command = {"torchrun", dir};
    summary.corrected = corrected_wall_ns.has_value();
    summary.report.metadata.command = summary.command;
    summary.report.metadata.wall_ns = wall_ns;
    summary.report.corrected = summary.corrected;
    summary.report.corrected_wall_ns = corrected_wall_ns;
    for (int r = 0; r < 2; ++r) {
      ProcessReport process = RankProcess(10 + r, first_rank + r, 0, 0, {});
      process.operation_instances = {{"simulation", steps + static_cast<uint64_t>(r)}};
      summary.report.processes.push_back(process);
      summary.report.rows.push_back(
          Row("backprop", Category::kPython, 100 * (first_rank + r + 1), Resource::kCpu, 10 + r));
    }
    return summary;
  };
  SECTION("every node corrected: the job is, with its longest node's corrected wall time") {
    const MergedJob job =
        MergeNodes({node("a", 6'000 * kMs, 5'000 * kMs, 0, 50), node("b", 7'000 * kMs, 4'000 * kMs, 2, 70)});
    const RunReport& run = job.merged;
    CHECK(run.metadata.command == std::vector<std::string>{"torchrun", "a"});
    CHECK(run.metadata.wall_ns == 7'000 * kMs);
    CHECK(run.corrected);
    CHECK(run.corrected_wall_ns == 5'000 * kMs);
    CHECK_FALSE(run.windowed);
    CHECK(run.steps == 71);  // The rank that stepped most.
    int64_t backprop = 0;
    for (const BreakdownRow& row : run.rows) backprop += row.ns;
    CHECK(backprop == 100 + 200 + 300 + 400);
  }
  SECTION("one node uncorrected: the job is not corrected") {
    const MergedJob job =
        MergeNodes({node("a", 6'000 * kMs, 5'000 * kMs, 0, 5), node("b", 7'000 * kMs, std::nullopt, 2, 5)});
    CHECK_FALSE(job.merged.corrected);
    CHECK_FALSE(job.merged.corrected_wall_ns.has_value());
    CHECK(job.merged.metadata.wall_ns == 7'000 * kMs);
  }
}
