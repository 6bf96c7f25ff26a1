#include "report/timeline_builder.h"

#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "format/rule_file.h"
#include "format/trace_reader.h"
#include "preload/batch_encoder.h"
#include "report/category.h"
#include "report/library_classifier.h"
#include "report/native_symbolizer.h"

using namespace rlscope::report;
using rlscope::OperationRule;
using rlscope::ParseRules;
using rlscope::RuleSet;
using rlscope::preload::BatchEncoder;
namespace wire = rlscope::wire;

namespace {

wire::Event Ev(int64_t begin, int64_t end, wire::EventKind kind, uint32_t name = 0, uint64_t payload = 0) {
  return wire::Event(begin, end, name, static_cast<uint16_t>(kind), 0, payload);
}

// Feeds one encoded frame to the builder, through the verifier like real data.
void Feed(TimelineBuilder& builder, BatchEncoder::Frame frame) {
  std::vector<uint8_t> bytes(frame.begin(), frame.end());
  auto verified = rlscope::collector::VerifyFrame(bytes.data(), bytes.size());
  REQUIRE(verified.ok());
  builder.AddFrame(**verified);
}

// FeedThreadBatch: thread 9's `events` into the batch `encoder` began,
// and the batch to the builder.
void FeedThreadBatch(TimelineBuilder& builder, BatchEncoder& encoder, const std::vector<wire::Event>& events) {
  encoder.AddThreadEvents(9, 9, static_cast<uint32_t>(events.size()), 0, {}, [&](wire::Event* out) {
    for (size_t i = 0; i < events.size(); ++i) out[i] = events[i];
  });
  Feed(builder, encoder.FinishBatch());
}

// Events of thread `tid` (instance `instance`, by default the tid itself),
// `dropped` more lost.
void FeedEvents(TimelineBuilder& builder, uint32_t tid, std::vector<wire::Event> events,
                std::vector<std::pair<uint32_t, std::string>> strings = {}, int64_t flushed_ns = 0,
                uint64_t instance = 0, uint64_t dropped = 0) {
  BatchEncoder encoder;
  encoder.BeginBatch(1, flushed_ns);
  for (const auto& [id, text] : strings) encoder.AddString(id, text);
  encoder.AddThreadEvents(tid, instance != 0 ? instance : tid, static_cast<uint32_t>(events.size()), dropped, {},
                          [&](wire::Event* out) {
                            for (size_t i = 0; i < events.size(); ++i) out[i] = events[i];
                          });
  Feed(builder, encoder.FinishBatch());
}

void FeedHello(TimelineBuilder& builder, int pid, int64_t start_ns) {
  BatchEncoder encoder;
  rlscope::preload::ProcessIdentity identity;
  identity.pid = pid;
  identity.start_ns = start_ns;
  Feed(builder, encoder.EncodeHello(identity, "tsc"));
}

// FinishAt: the process's timeline, its Goodbye at `goodbye_ns`.
ProcessTimeline FinishAt(TimelineBuilder& builder, int64_t goodbye_ns) {
  BatchEncoder encoder;
  Feed(builder, encoder.EncodeGoodbye(goodbye_ns, 4, 0, "exit"));
  return builder.Finish();
}

const ThreadTimeline& OnlyThread(const ProcessTimeline& process, uint32_t tid) {
  const ThreadTimeline* found = nullptr;
  for (const ThreadTimeline& thread : process.threads) {
    if (thread.tid == tid) {
      REQUIRE(found == nullptr);
      found = &thread;
    }
  }
  REQUIRE(found != nullptr);
  return *found;
}

// LabelAt: the label of the interval of `intervals` (disjoint) holding `time_ns`; -1 if none.
int32_t LabelAt(const IntervalList& intervals, int64_t time_ns) {
  for (const Interval& interval : intervals) {
    if (interval.begin_ns <= time_ns && time_ns < interval.end_ns) return interval.label;
  }
  return -1;
}

ThreadTimeline MakeThread(uint32_t tid, uint64_t instance, std::string name, int64_t begin, int64_t end,
                          uint64_t events) {
  ThreadTimeline thread;
  thread.tid = tid;
  thread.instance = instance;
  thread.name = std::move(name);
  thread.begin_ns = begin;
  thread.end_ns = end;
  thread.events = events;
  return thread;
}

}  // namespace

TEST_CASE("Push/pop pairs become operations named once the strings arrive", "[timeline]") {
  NameTable names;
  TimelineBuilder builder(names);
  FeedHello(builder, 10, 0);
  FeedEvents(builder, 10,
             {Ev(0, 0, wire::EventKind::kThreadBegin), Ev(10, 10, wire::EventKind::kOperationPush, 5),
              Ev(12, 20, wire::EventKind::kCudaApi, 1), Ev(30, 30, wire::EventKind::kOperationPop)});
  // The operation's name comes in a later batch: names resolve at Finish.
  FeedEvents(builder, 10, {}, {{5, "inference"}});
  const ProcessTimeline process = FinishAt(builder, 100);
  const ThreadTimeline& thread = OnlyThread(process, 10);
  CHECK(thread.begin_ns == 0);
  CHECK(thread.end_ns == 100);  // No ThreadEnd: ends with the process.
  REQUIRE(thread.operations.size() == 1);
  CHECK(names.Name(thread.operations[0].label) == "inference");
  CHECK(thread.operations[0].begin_ns == 10);
  CHECK(thread.operations[0].end_ns == 30);
  REQUIRE(thread.cpu_events.size() == 1);
  CHECK(thread.cpu_events[0].label == static_cast<int32_t>(Category::kCudaApi));
  CHECK(process.ended_cleanly);
  CHECK(process.problems.empty());
}

TEST_CASE("Hooked communication calls are Communication time; collectives among them are kept", "[timeline]") {
  NameTable names;
  TimelineBuilder builder(names);
  FeedHello(builder, 10, 0);
  FeedEvents(builder, 10,
             {Ev(0, 0, wire::EventKind::kThreadBegin), Ev(10, 20, wire::EventKind::kCommunicationCall, 1),
              Ev(30, 40, wire::EventKind::kCommunicationCall, 2), Ev(50, 60, wire::EventKind::kCommunicationCall, 3),
              Ev(70, 80, wire::EventKind::kCommunicationCall, 4)});
  // The functions' names come after their calls.
  FeedEvents(
      builder, 10, {},
      {{1, "_ZN4gloo9allreduceERKNS_16AllreduceOptionsE"}, {2, "ncclAllReduce"}, {3, "ncclSend"}, {4, "MPI_Waitall"}});
  const ProcessTimeline process = FinishAt(builder, 100);
  const ThreadTimeline& thread = OnlyThread(process, 10);
  CHECK(thread.cpu_events.size() == 4);
  for (const Interval& event : thread.cpu_events) CHECK(event.label == static_cast<int32_t>(Category::kCommunication));
  // A point-to-point send and a completion are no collectives; NCCL's
  // all-reduce returns once queued.
  REQUIRE(thread.hooked_collectives.size() == 2);
  CHECK((thread.hooked_collectives[0].begin_ns == 10 && !thread.hooked_collectives[0].queued));
  CHECK(names.Name(thread.hooked_collectives[0].function) == "_ZN4gloo9allreduceERKNS_16AllreduceOptionsE");
  CHECK((thread.hooked_collectives[1].begin_ns == 30 && thread.hooked_collectives[1].queued));
  CHECK(names.Name(thread.hooked_collectives[1].function) == "ncclAllReduce");
}

TEST_CASE("A start/end range belongs to the thread that started it", "[timeline]") {
  NameTable names;
  TimelineBuilder builder(names);
  FeedHello(builder, 10, 0);
  FeedEvents(builder, 10, {Ev(5, 5, wire::EventKind::kRangeStart, 7, 99)}, {{7, "replay"}});
  FeedEvents(builder, 11, {Ev(40, 40, wire::EventKind::kRangeEnd, 0, 99)});
  const ProcessTimeline process = builder.Finish();
  REQUIRE(OnlyThread(process, 10).operations.size() == 1);
  CHECK(OnlyThread(process, 10).operations[0].end_ns == 40);
  CHECK(OnlyThread(process, 11).operations.empty());
}

TEST_CASE("Unbalanced pops and unclosed operations are reported, not fatal", "[timeline]") {
  NameTable names;
  TimelineBuilder builder(names);
  FeedHello(builder, 10, 0);
  FeedEvents(builder, 10,
             {Ev(1, 1, wire::EventKind::kOperationPop), Ev(2, 2, wire::EventKind::kOperationPush, 3),
              Ev(9, 9, wire::EventKind::kThreadEnd)},
             {{3, "left-open"}});
  const ProcessTimeline process = builder.Finish();
  const ThreadTimeline& thread = OnlyThread(process, 10);
  REQUIRE(thread.operations.size() == 1);
  CHECK(thread.operations[0].end_ns == 9);  // Closed at the thread's end.
  CHECK_FALSE(process.ended_cleanly);
  REQUIRE(process.problems.size() == 2);
  CHECK(process.problems[0].find("without a matching push") != std::string::npos);
  CHECK(process.problems[1].find("still open") != std::string::npos);
}

TEST_CASE("Records lost inside an operation do not leave it open for the rest of the run", "[timeline]") {
  // The ring dropped records from 20 on (the pops of both operations among
  // them) and kept them again at 50, saying so with a kRecordsLost marker.
  const auto push = [](int64_t t, uint32_t name, wire::OperationSource source, uint64_t token = 0) {
    return wire::Event(t, t, name, static_cast<uint16_t>(wire::EventKind::kOperationPush),
                       static_cast<uint16_t>(source), token);
  };
  const auto pop = [](int64_t t, uint64_t token = 0) { return Ev(t, t, wire::EventKind::kOperationPop, 0, token); };
  NameTable names;
  TimelineBuilder builder(names);
  FeedHello(builder, 10, 0);
  FeedEvents(builder, 10,
             {Ev(0, 0, wire::EventKind::kThreadBegin), push(5, 1, wire::OperationSource::kPythonApi, 7),
              push(6, 1, wire::OperationSource::kPythonApi, 8), push(10, 2, wire::OperationSource::kInferred),
              Ev(12, 20, wire::EventKind::kCudaApi, 3)},
             {{1, "explicit"}, {2, "simulation"}, {3, "cudaLaunchKernel"}});
  FeedEvents(builder, 10,
             {Ev(50, 50, wire::EventKind::kRecordsLost, 0, 1000),
              // The lost records closed the inferred operation: its pop is
              // gone, so this one (a push lost with them) finds nothing.
              pop(52), push(60, 2, wire::OperationSource::kInferred), pop(70), pop(80, 8),
              Ev(100, 100, wire::EventKind::kThreadEnd)});
  const ProcessTimeline process = builder.Finish();
  const ThreadTimeline& thread = OnlyThread(process, 10);
  // The inferred view (resolved at Finish, glue filled): the env step ends
  // where the records were lost (its last event before them), so the time
  // after the last step is teardown, not a step open to the end.
  CHECK(names.Name(LabelAt(thread.inferred_operations, 15)) == "simulation");
  CHECK(names.Name(LabelAt(thread.inferred_operations, 65)) == "simulation");
  CHECK(names.Name(LabelAt(thread.inferred_operations, 90)) == "teardown");
  std::vector<std::tuple<std::string, int64_t, int64_t>> explicit_ops;
  for (const Interval& op : thread.operations) explicit_ops.emplace_back(names.Name(op.label), op.begin_ns, op.end_ns);
  std::sort(explicit_ops.begin(), explicit_ops.end());
  // Token 8's pop came: open all along. Token 7's never did: it ends at the hole.
  CHECK(explicit_ops ==
        std::vector<std::tuple<std::string, int64_t, int64_t>>{{"explicit", 5, 20}, {"explicit", 6, 80}});
  CHECK(thread.events == 10);  // The marker is the ring's, not the thread's.
  // The lost pop and push are what the dropped count says: no problem of their own.
  CHECK(process.problems.empty());
}

TEST_CASE("Records lost at a stream's end close what was open at its last event", "[timeline]") {
  // 40 records dropped and none kept after them (the program ended while
  // the collector stalled): no marker, only the count.
  NameTable names;
  TimelineBuilder builder(names);
  FeedHello(builder, 10, 0);
  FeedEvents(builder, 10,
             {Ev(0, 0, wire::EventKind::kThreadBegin),
              wire::Event(5, 5, 1, static_cast<uint16_t>(wire::EventKind::kOperationPush),
                          static_cast<uint16_t>(wire::OperationSource::kPythonApi), 7),
              Ev(10, 30, wire::EventKind::kCudaApi)},
             {{1, "explicit"}}, 0, 0, 40);
  BatchEncoder encoder;
  Feed(builder, encoder.EncodeGoodbye(100, 3, 40, "exit"));
  const ProcessTimeline process = builder.Finish();
  const ThreadTimeline& thread = OnlyThread(process, 10);
  REQUIRE(thread.operations.size() == 1);
  CHECK(thread.operations[0].end_ns == 30);
  for (const std::string& problem : process.problems) CHECK(problem.find("still open") == std::string::npos);
}

TEST_CASE("A pop without a token closes the innermost operation without one", "[timeline]") {
  // An inferred pop inside an rlscope.operation opened after its push
  // (interleaved with-blocks of asyncio tasks) closes the inferred one.
  NameTable names;
  TimelineBuilder builder(names);
  FeedHello(builder, 10, 0);
  FeedEvents(builder, 10,
             {wire::Event(1, 1, 2, static_cast<uint16_t>(wire::EventKind::kOperationPush),
                          static_cast<uint16_t>(wire::OperationSource::kInferred), 0),
              wire::Event(3, 3, 1, static_cast<uint16_t>(wire::EventKind::kOperationPush),
                          static_cast<uint16_t>(wire::OperationSource::kPythonApi), 4),
              Ev(5, 5, wire::EventKind::kOperationPop), Ev(9, 9, wire::EventKind::kOperationPop, 0, 4)},
             {{1, "explicit"}, {2, "forward"}});
  const ProcessTimeline process = builder.Finish();
  const ThreadTimeline& thread = OnlyThread(process, 10);
  CHECK(names.Name(LabelAt(thread.inferred_operations, 4)) == "inference");  // The forward pass, resolved.
  CHECK(names.Name(LabelAt(thread.inferred_operations, 7)) == "teardown");
  REQUIRE(thread.operations.size() == 1);
  CHECK(thread.operations[0].begin_ns == 3);
  CHECK(thread.operations[0].end_ns == 9);
  CHECK(process.problems.empty());
}

TEST_CASE("Events of unknown kinds are skipped and counted", "[timeline]") {
  NameTable names;
  TimelineBuilder builder(names);
  FeedHello(builder, 10, 0);
  FeedEvents(builder, 10, {wire::Event(1, 2, 0, 999, 0, 0)});
  const ProcessTimeline process = builder.Finish();
  REQUIRE(process.problems.size() == 1);
  CHECK(process.problems[0].find("kinds this rlscope does not know") != std::string::npos);
}

TEST_CASE("Exec chains continue the calling thread and keep the later command", "[timeline]") {
  ProcessTimeline before;
  before.pid = 5;
  before.proc_start_ticks = 77;
  before.argv = {"sh", "-c", "exec python3"};
  before.begin_ns = 0;
  before.end_ns = 50;
  before.threads.push_back(MakeThread(5, 1, "sh", 0, 50, 1));
  ProcessTimeline after;
  after.pid = 5;
  after.proc_start_ticks = 77;
  after.argv = {"python3"};
  after.begin_ns = 50;
  after.end_ns = 200;
  after.threads.push_back(MakeThread(5, 1, "python3", 50, 200, 2));
  after.threads.push_back(MakeThread(6, 2, "worker", 60, 190, 4));
  REQUIRE(SameProcess(before, after));
  MergeExecChain(before, std::move(after));
  CHECK(before.argv == std::vector<std::string>{"python3"});
  REQUIRE(before.threads.size() == 2);
  CHECK(before.threads[0].begin_ns == 0);
  CHECK(before.threads[0].end_ns == 200);
  CHECK(before.threads[0].events == 3);
  CHECK(before.threads[1].name == "worker");
}

TEST_CASE("A reused pid is not an exec chain", "[timeline]") {
  ProcessTimeline first, second;
  first.pid = second.pid = 5;
  first.proc_start_ticks = 77;
  second.proc_start_ticks = 91;
  CHECK_FALSE(SameProcess(first, second));
}

TEST_CASE("A reused tid starts a new thread record", "[timeline]") {
  NameTable names;
  TimelineBuilder builder(names);
  FeedHello(builder, 10, 0);
  // The second thread's events arrive first: order of arrival must not matter.
  FeedEvents(builder, 12, {Ev(50, 50, wire::EventKind::kThreadBegin), Ev(60, 70, wire::EventKind::kCudaApi, 1)}, {}, 0,
             /*instance=*/3);
  FeedEvents(builder, 12,
             {Ev(10, 10, wire::EventKind::kThreadBegin), Ev(20, 25, wire::EventKind::kCudaApi, 1),
              Ev(40, 40, wire::EventKind::kThreadEnd)},
             {}, 0, /*instance=*/2);
  const ProcessTimeline process = builder.Finish();
  REQUIRE(process.threads.size() == 2);
  CHECK(process.threads[0].instance == 3);
  CHECK(process.threads[0].begin_ns == 50);
  CHECK(process.threads[1].instance == 2);
  CHECK(process.threads[1].end_ns == 40);
  CHECK(process.threads[1].cpu_events.size() == 1);
}

TEST_CASE("A process that died ends at its last batch, not at its last event", "[timeline]") {
  NameTable names;
  TimelineBuilder builder(names);
  FeedHello(builder, 10, 0);
  FeedEvents(builder, 10, {Ev(0, 0, wire::EventKind::kThreadBegin)}, {}, /*flushed_ns=*/500);
  const ProcessTimeline process = builder.Finish();
  CHECK_FALSE(process.ended_cleanly);
  CHECK(process.end_ns == 500);
  CHECK(OnlyThread(process, 10).end_ns == 500);
}

TEST_CASE("An operation entered inside itself counts as one instance", "[timeline]") {
  NameTable names;
  TimelineBuilder builder(names);
  FeedHello(builder, 10, 0);
  // update() is backprop and so is the backward step inside it.
  FeedEvents(builder, 10,
             {Ev(0, 0, wire::EventKind::kOperationPush, 4), Ev(10, 10, wire::EventKind::kOperationPush, 4),
              Ev(20, 20, wire::EventKind::kOperationPop), Ev(50, 50, wire::EventKind::kOperationPop),
              Ev(60, 60, wire::EventKind::kOperationPush, 4), Ev(90, 90, wire::EventKind::kOperationPop)},
             {{4, "backprop"}});
  const ProcessTimeline process = builder.Finish();
  CHECK(OnlyThread(process, 10).operation_instances.at(names.Intern("backprop")) == 2);
}

TEST_CASE("CUPTI-seen calls add CUDA API time only when no runtime hook timed them", "[timeline]") {
  NameTable names;
  TimelineBuilder builder(names);
  FeedHello(builder, 7, 0);
  auto cupti = [](int64_t begin, int64_t end, uint32_t correlation, uint16_t flags) {
    return wire::Event(begin, end, 1, static_cast<uint16_t>(wire::EventKind::kCuptiApi), flags, correlation);
  };
  FeedEvents(builder, 7,
             {Ev(10, 40, wire::EventKind::kCudaApi, 2),
              cupti(12, 38, 100, wire::kCuptiSeenByInterposer),                // Timed by the hook: no time.
              cupti(20, 20, 101, wire::kCuptiDriverApi | wire::kCuptiNested),  // Alias: no time.
              cupti(50, 60, 102, wire::kCuptiDriverApi)},                      // Bypassed libcudart: time.
             {{1, "cuLaunchKernel"}, {2, "cudaLaunchKernel"}});
  ProcessTimeline process = builder.Finish();
  const ThreadTimeline& thread = OnlyThread(process, 7);
  REQUIRE(thread.cpu_events.size() == 2);
  CHECK(thread.cpu_events[1].begin_ns == 50);
  CHECK(thread.cpu_events[1].end_ns == 60);
  CHECK(thread.cuda_api_calls == 2);
  REQUIRE(thread.gpu_launches.size() == 3);
  CHECK(thread.gpu_launches[1].nested);
  CHECK(thread.gpu_launches[2].correlation_id == 102);
  // Entry and return: the correction judges queued GPU work by the return.
  CHECK(thread.gpu_launches[2].time_ns == 50);
  CHECK(thread.gpu_launches[2].return_ns == 60);
}

TEST_CASE("CPU events recorded as they end are decoded outer first", "[timeline]") {
  // Hooks record a call when it returns, after the calls inside it; every
  // pass after decoding wants the enclosing call first (flatten.h).
  NameTable names;
  TimelineBuilder builder(names);
  FeedHello(builder, 7, 0);
  FeedEvents(builder, 7,
             {Ev(10, 40, wire::EventKind::kCudaApi), Ev(50, 60, wire::EventKind::kCudaApi),
              Ev(5, 90, wire::EventKind::kBackendCall), Ev(95, 99, wire::EventKind::kSimulatorCall),
              Ev(0, 100, wire::EventKind::kBackendCall)});
  ProcessTimeline process = builder.Finish();
  const ThreadTimeline& thread = OnlyThread(process, 7);
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const Interval& event : thread.cpu_events) spans.emplace_back(event.begin_ns, event.end_ns);
  CHECK(spans == std::vector<std::pair<int64_t, int64_t>>{{0, 100}, {5, 90}, {10, 40}, {50, 60}, {95, 99}});
}

TEST_CASE("GPU activities, their names, lost records and notices are decoded", "[timeline]") {
  NameTable names;
  TimelineBuilder builder(names);
  FeedHello(builder, 7, 0);
  BatchEncoder encoder;
  encoder.BeginBatch(1, 0);
  const uint8_t kernel = static_cast<uint8_t>(wire::GpuActivityKind::kKernel);
  const uint8_t memcpy = static_cast<uint8_t>(wire::GpuActivityKind::kMemcpy);
  const uint8_t overhead = static_cast<uint8_t>(wire::GpuActivityKind::kCuptiOverhead);
  const std::vector<wire::GpuActivity> activities = {
      wire::GpuActivity(100, 130, 0, 5, 3, 7, 0, kernel, 0),
      wire::GpuActivity(140, 150, 4096, 6, 0, 7, 1, memcpy, 1),
      wire::GpuActivity(10, 25, 1234, 0, 0, 0, 0, overhead, 0x81),
  };
  encoder.AddGpuActivities(activities, 4);
  encoder.AddNotice("gpu", "captured", "CUPTI /x/libcupti.so.13");
  // The kernel's name arrives in a later frame than the record using it.
  Feed(builder, encoder.FinishBatch());
  FeedEvents(builder, 7, {}, {{3, "_Z10gemmKernelPfi"}});
  ProcessTimeline process = builder.Finish();
  REQUIRE(process.gpu_activities.size() == 2);
  CHECK(names.Name(process.gpu_activities[0].name) == "gemmKernel(float*, int)");
  CHECK(process.gpu_activities[0].correlation_id == 5);
  CHECK(names.Name(process.gpu_activities[1].name) == "Memcpy HtoD");
  CHECK(process.gpu_activities[1].bytes == 4096);
  CHECK(process.gpu_activities[1].device == 1);
  CHECK(process.cupti_overhead_ns == 15);
  CHECK(process.gpu_dropped == 4);
  REQUIRE(process.notices.size() == 1);
  CHECK(process.notices[0].status == "captured");
}

namespace rlscope_test {
// A program function whose name a default replay rule (*Buffer.add) matches.
struct InputBuffer {
  static __attribute__((noinline)) void add() { asm volatile(""); }
};
}  // namespace rlscope_test

namespace {

// The executable segment of this test program, as the preload reports modules.
struct OwnModule {
  std::string path;
  uint64_t begin = 0, end = 0, bias = 0;
};
OwnModule FindOwnModule(uint64_t address) {
  OwnModule own;
  char path[4096] = {};
  const ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  REQUIRE(length > 0);
  own.path = path;
  struct Search {
    uint64_t address;
    OwnModule* own;
  } search{address, &own};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* search = static_cast<Search*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& segment = info->dlpi_phdr[i];
          if (segment.p_type != PT_LOAD || (segment.p_flags & PF_X) == 0) continue;
          const uint64_t begin = info->dlpi_addr + segment.p_vaddr;
          if (search->address >= begin && search->address < begin + segment.p_memsz) {
            search->own->begin = begin;
            search->own->end = begin + segment.p_memsz;
            search->own->bias = info->dlpi_addr;
            return 1;
          }
        }
        return 0;
      },
      &search);
  REQUIRE(own.end > own.begin);
  return own;
}

ProcessTimeline InferFromOneSample(LibraryClassifier& classifier, NativeSymbolizer& symbolizer,
                                   const std::vector<OperationRule>& rules, NameTable& names) {
  const uint64_t function = reinterpret_cast<uint64_t>(&rlscope_test::InputBuffer::add);
  const OwnModule own = FindOwnModule(function);
  TimelineBuilder builder(names, &classifier, &symbolizer, &rules);
  FeedHello(builder, 9, 0);
  BatchEncoder encoder;
  encoder.BeginBatch(1, 0);
  encoder.AddModule(own.path, own.begin, own.end, own.bias);
  // One sample of one frame: a return address just inside the function.
  const std::vector<wire::Event> events = {Ev(0, 0, wire::EventKind::kThreadBegin),
                                           Ev(1000, 1000, wire::EventKind::kNativeStack, 1, function + 1),
                                           Ev(2000, 2000, wire::EventKind::kThreadEnd)};
  encoder.AddThreadEvents(9, 9, static_cast<uint32_t>(events.size()), 0, {}, [&](wire::Event* out) {
    for (size_t i = 0; i < events.size(); ++i) out[i] = events[i];
  });
  Feed(builder, encoder.FinishBatch());
  return builder.Finish();
}

}  // namespace

TEST_CASE("Native stack frames in ML backend libraries never name operations", "[timeline]") {
  RuleSet rules;
  std::string error;
  REQUIRE(ParseRules("operation replay *Buffer.add\n", "test.rules", rules, &error));
  NativeSymbolizer symbolizer;
  NameTable names;
  names.Intern("(none)");
  {
    LibraryClassifier program_code({});
    const ProcessTimeline process = InferFromOneSample(program_code, symbolizer, rules.operations, names);
    const ThreadTimeline& thread = OnlyThread(process, 9);
    REQUIRE(thread.inferred_operations.size() == 1);
    CHECK(names.Name(thread.inferred_operations[0].label) == "replay");
  }
  {
    // The same code, classified as an ML backend's (torch's autograd engine).
    RuleSet backend;
    REQUIRE(ParseRules("library Backend *\n", "test.rules", backend, &error));
    LibraryClassifier backend_code(backend.libraries);
    const ProcessTimeline process = InferFromOneSample(backend_code, symbolizer, rules.operations, names);
    CHECK(OnlyThread(process, 9).inferred_operations.empty());
  }
}

TEST_CASE("Native frames outside installed packages have no module for module= rules", "[timeline]") {
  // The test program is no package's file: a module= rule passes it over,
  // a file= glob on its path still takes it.
  RuleSet rules;
  std::string error;
  REQUIRE(
      ParseRules("operation replay *Buffer.add module=*\n"
                 "operation storage *Buffer.add file=/*\n",
                 "test.rules", rules, &error));
  NativeSymbolizer symbolizer;
  NameTable names;
  names.Intern("(none)");
  LibraryClassifier program_code({});
  const ProcessTimeline process = InferFromOneSample(program_code, symbolizer, rules.operations, names);
  const ThreadTimeline& thread = OnlyThread(process, 9);
  REQUIRE(thread.inferred_operations.size() == 1);
  CHECK(names.Name(thread.inferred_operations[0].label) == "storage");
}

TEST_CASE("Hook counts arrive as windows between cuts; the frames of one flush share its window",
          "[timeline][correction]") {
  NameTable names;
  TimelineBuilder builder(names);
  builder.CollectOverhead(true);
  FeedHello(builder, 10, 0);
  auto batch = [&](int64_t flushed_ns, uint32_t tid, uint64_t calls) {
    BatchEncoder encoder;
    encoder.BeginBatch(1, flushed_ns);
    const wire::HookOverhead overhead(calls, 0, static_cast<uint16_t>(wire::OverheadKind::kPythonCall));
    encoder.AddThreadEvents(tid, tid, 0, 0, {&overhead, 1}, [](wire::Event*) {});
    Feed(builder, encoder.FinishBatch());
  };
  batch(1000, 10, 5);
  batch(2000, 10, 7);
  batch(2000, 11, 9);  // A second frame of the same flush.
  const ProcessTimeline process = builder.Finish();
  const ThreadTimeline& first = OnlyThread(process, 10);
  REQUIRE(first.overhead_windows.size() == 2);
  CHECK(first.overhead_windows[0].end_ns == 1000);
  CHECK(first.overhead_windows[1].begin_ns == 1000);
  CHECK(first.overhead_windows[1].end_ns == 2000);
  CHECK(first.overhead_windows[1].count == 7);
  const ThreadTimeline& second = OnlyThread(process, 11);
  REQUIRE(second.overhead_windows.size() == 1);
  CHECK(second.overhead_windows[0].begin_ns == 1000);
  CHECK(second.overhead_windows[0].end_ns == 2000);
}

TEST_CASE("Without CollectOverhead no sites or windows are kept", "[timeline][correction]") {
  NameTable names;
  TimelineBuilder builder(names);
  FeedHello(builder, 10, 0);
  FeedEvents(builder, 10, {Ev(12, 20, wire::EventKind::kCudaApi, 1)});
  const ProcessTimeline process = builder.Finish();
  CHECK(OnlyThread(process, 10).overhead_sites.empty());
}

TEST_CASE("A thread known only by a count of dropped events covers no time", "[timeline]") {
  // The preload sends such a count for a thread whose ring it reclaimed
  // while the collector stalled (flusher.h): none of its events arrived.
  NameTable names;
  TimelineBuilder builder(names);
  FeedHello(builder, 10, 0);
  FeedEvents(builder, 10, {Ev(0, 0, wire::EventKind::kThreadBegin), Ev(12, 20, wire::EventKind::kCudaApi, 1)});
  BatchEncoder encoder;
  encoder.BeginBatch(2, 50);
  encoder.AddThreadEvents(11, 11, 0, 3943, {}, [](wire::Event*) {});
  Feed(builder, encoder.FinishBatch());
  Feed(builder, encoder.EncodeGoodbye(100, 3945, 3943, "exit"));
  const ProcessTimeline process = builder.Finish();
  const ThreadTimeline& reclaimed = OnlyThread(process, 11);
  CHECK(reclaimed.dropped == 3943);
  CHECK(reclaimed.events == 0);
  CHECK(reclaimed.end_ns - reclaimed.begin_ns == 0);
  const ThreadTimeline& main_thread = OnlyThread(process, 10);
  CHECK(main_thread.end_ns == 100);
}

TEST_CASE("caller= rules take calls from a module's functions, not from its import", "[timeline]") {
  RuleSet rules;
  std::string error;
  REQUIRE(ParseRules("library Communication lib=libtorch* caller=torch.distributed*\nlibrary Backend lib=libtorch*\n",
                     "test.rules", rules, &error));
  LibraryClassifier classifier(rules.libraries);
  NameTable names;
  names.Intern("(none)");
  TimelineBuilder builder(names, &classifier);
  FeedHello(builder, 9, 0);
  BatchEncoder encoder;
  encoder.BeginBatch(1, 0);
  encoder.AddModule("/usr/lib/x86_64-linux-gnu/libtorch_python.so.1.13", 0x1000, 0x2000, 0);
  encoder.AddString(1, "<module> (/usr/lib/python3/dist-packages/torch/distributed/__init__.py:1)");
  encoder.AddString(2, "all_reduce (/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py:1472)");
  encoder.AddString(3, "forward (/usr/lib/python3/dist-packages/torch/nn/modules/linear.py:113)");
  const std::vector<wire::Event> events = {Ev(0, 0, wire::EventKind::kThreadBegin),
                                           Ev(0, 0, wire::EventKind::kPythonThread),
                                           Ev(100, 200, wire::EventKind::kPythonCall, 1, 0x1500),
                                           Ev(300, 400, wire::EventKind::kPythonCall, 2, 0x1500),
                                           Ev(500, 600, wire::EventKind::kPythonCall, 3, 0x1500),
                                           Ev(700, 800, wire::EventKind::kPythonCall, 2, 0x1500),
                                           Ev(1000, 1000, wire::EventKind::kThreadEnd)};
  encoder.AddThreadEvents(9, 9, static_cast<uint32_t>(events.size()), 0, {}, [&](wire::Event* out) {
    for (size_t i = 0; i < events.size(); ++i) out[i] = events[i];
  });
  Feed(builder, encoder.FinishBatch());
  const ProcessTimeline process = builder.Finish();
  const ThreadTimeline& thread = OnlyThread(process, 9);
  REQUIRE(thread.native_calls.size() == 4);
  CHECK(thread.native_calls[0].category == Category::kBackend);  // torch.distributed's import.
  CHECK(thread.native_calls[1].category == Category::kCommunication);
  CHECK(thread.native_calls[2].category == Category::kBackend);
  CHECK(thread.native_calls[3].category == Category::kCommunication);  // The cache keeps it.
}

// LibraryRuled: a builder of process 9 whose libraries' levels follow
// the rules `text`.
struct LibraryRuled {
  explicit LibraryRuled(const std::string& text) {
    std::string error;
    REQUIRE(ParseRules(text, "test.rules", rules, &error));
    classifier = std::make_unique<LibraryClassifier>(rules.libraries);
    names.Intern("(none)");
    builder = std::make_unique<TimelineBuilder>(names, classifier.get());
    FeedHello(*builder, 9, 0);
  }
  RuleSet rules;
  std::unique_ptr<LibraryClassifier> classifier;
  NameTable names;
  std::unique_ptr<TimelineBuilder> builder;
};

TEST_CASE("A native call is classified by the library at its address when its batch came", "[timeline]") {
  LibraryRuled ruled("library Backend lib=libtorch*\nlibrary Simulator lib=libmujoco*\n");
  TimelineBuilder& builder = *ruled.builder;
  BatchEncoder encoder;
  // The first batch: torch's library at 0x1000 and a call into it. The
  // second: another library loaded at the same place (torch's unloaded),
  // and a call into that one.
  encoder.BeginBatch(1, 0);
  encoder.AddModule("/usr/lib/x86_64-linux-gnu/libtorch_cpu.so", 0x1000, 0x2000, 0);
  encoder.AddString(1, "step (/home/me/train.py:10)");
  const std::vector<wire::Event> first = {Ev(0, 0, wire::EventKind::kThreadBegin),
                                          Ev(0, 0, wire::EventKind::kPythonThread),
                                          Ev(100, 200, wire::EventKind::kPythonCall, 1, 0x1500)};
  FeedThreadBatch(builder, encoder, first);
  encoder.BeginBatch(2, 0);
  encoder.AddModule("/usr/lib/x86_64-linux-gnu/libmujoco.so.3", 0x1000, 0x2000, 0);
  const std::vector<wire::Event> second = {Ev(300, 400, wire::EventKind::kPythonCall, 1, 0x1500),
                                           Ev(1000, 1000, wire::EventKind::kThreadEnd)};
  FeedThreadBatch(builder, encoder, second);
  const ProcessTimeline process = builder.Finish();
  const ThreadTimeline& thread = OnlyThread(process, 9);
  REQUIRE(thread.native_calls.size() == 2);
  CHECK(thread.native_calls[0].category == Category::kBackend);
  CHECK(thread.native_calls[1].category == Category::kSimulator);
  // Their CPU intervals follow the thread's other events, in record order.
  REQUIRE(thread.cpu_events.size() >= 2);
  CHECK(thread.cpu_events[thread.cpu_events.size() - 2].label == static_cast<int32_t>(Category::kBackend));
  CHECK(thread.cpu_events.back().label == static_cast<int32_t>(Category::kSimulator));
}

TEST_CASE("A call whose string or module comes a batch later waits for that batch", "[timeline]") {
  LibraryRuled ruled("library Backend lib=libtorch*\nlibrary Simulator lib=libmujoco*\n");
  TimelineBuilder& builder = *ruled.builder;
  const NameTable& names = ruled.names;
  BatchEncoder encoder;
  // The first batch's call names string 5 and an address in a library
  // neither of which it defines (a string table entry still being filled
  // when it was sent, a library loaded while the flush ran).
  encoder.BeginBatch(1, 0);
  const std::vector<wire::Event> first = {Ev(0, 0, wire::EventKind::kThreadBegin),
                                          Ev(0, 0, wire::EventKind::kPythonThread),
                                          Ev(100, 200, wire::EventKind::kPythonCall, 5, 0x1500)};
  FeedThreadBatch(builder, encoder, first);
  encoder.BeginBatch(2, 0);
  encoder.AddModule("/usr/lib/x86_64-linux-gnu/libtorch_cpu.so", 0x1000, 0x2000, 0);
  encoder.AddString(5, "helper (/home/me/train.py:3)");
  const std::vector<wire::Event> second = {Ev(300, 400, wire::EventKind::kPythonCall, 5, 0x1500)};
  FeedThreadBatch(builder, encoder, second);
  // Then torch's library goes and another takes its place: the calls
  // before were torch's, classified when the batch that named it came.
  encoder.BeginBatch(3, 0);
  encoder.AddModule("/usr/lib/x86_64-linux-gnu/libmujoco.so.3", 0x1000, 0x2000, 0);
  const std::vector<wire::Event> third = {Ev(500, 600, wire::EventKind::kPythonCall, 5, 0x1500),
                                          Ev(1000, 1000, wire::EventKind::kThreadEnd)};
  FeedThreadBatch(builder, encoder, third);
  const ProcessTimeline process = builder.Finish();
  const ThreadTimeline& thread = OnlyThread(process, 9);
  REQUIRE(thread.native_calls.size() == 3);
  for (const NativeCall& call : thread.native_calls) {
    CHECK(names.Name(call.location) == "helper (/home/me/train.py:3)");
    CHECK(call.user_location == call.location);  // The user's own code.
  }
  CHECK(thread.native_calls[0].category == Category::kBackend);
  CHECK(thread.native_calls[1].category == Category::kBackend);
  CHECK(thread.native_calls[2].category == Category::kSimulator);
  CHECK(thread.native_calls[0].begin_ns == 100);  // In record order still.
  CHECK(thread.native_calls[1].begin_ns == 300);
}

TEST_CASE("Libraries loaded in turn at one place: each lookup finds the latest", "[timeline]") {
  ModuleMap modules;
  for (int list = 0; list < 20; ++list) {
    modules.Add(list % 2 == 0 ? "/lib/liba.so" : "/lib/libb.so", 0x1000, 0x2000);
    modules.Add("/lib/libc.so", 0x3000, 0x4000);  // One that stays.
    const std::string* path = modules.PathOf(0x1800);
    REQUIRE(path != nullptr);
    CHECK(*path == (list % 2 == 0 ? "/lib/liba.so" : "/lib/libb.so"));
    REQUIRE(modules.PathOf(0x3800) != nullptr);
    CHECK(*modules.PathOf(0x3800) == "/lib/libc.so");
  }
  CHECK(modules.PathOf(0x2800) == nullptr);
  // A wide range listed first stays found past the narrow ones after it.
  modules.Add("/lib/libwide.so", 0x10000, 0x90000);
  for (uint64_t begin = 0x11000; begin < 0x30000; begin += 0x1000) modules.Add("/lib/libn.so", begin, begin + 0x100);
  REQUIRE(modules.PathOf(0x80000) != nullptr);
  CHECK(*modules.PathOf(0x80000) == "/lib/libwide.so");
}
