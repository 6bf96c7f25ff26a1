#include "report/gpu_analysis.h"

#include <catch2/catch.hpp>

#include "report/overlap_sweep.h"

using namespace rlscope::report;

namespace {

GpuActivity Activity(int64_t begin, int64_t end, GpuActivityKind kind, uint32_t correlation, int32_t name = 0,
                     uint32_t device = 0) {
  GpuActivity activity;
  activity.begin_ns = begin;
  activity.end_ns = end;
  activity.kind = kind;
  activity.correlation_id = correlation;
  activity.name = name;
  activity.device = device;
  return activity;
}

// AnalyseGpu with the busy intervals of the process's own activities.
GpuAnalysis Analyse(const ProcessTimeline& process, const std::vector<ResolvedLaunch>& launches,
                    const IntervalList& main, NameTable& names, const std::string& gpu_capture = "cupti",
                    bool used_cuda = true) {
  return AnalyseGpu(process, launches, main, GpuBusyIntervals(process.gpu_activities), gpu_capture, used_cuda, names);
}

int64_t GpuRow(const GpuAnalysis& gpu, int32_t operation, Category category) {
  const auto it = gpu.rows.find({operation, Resource::kGpu, category});
  return it == gpu.rows.end() ? 0 : it->second;
}

const GpuLaunchRow* ByLaunch(const GpuAnalysis& gpu, const std::string& operation, Category category) {
  for (const GpuLaunchRow& row : gpu.by_launch) {
    if (row.operation == operation && row.category == category) return &row;
  }
  return nullptr;
}

const OperationGpuRow* OperationRow(const GpuAnalysis& gpu, const std::string& operation) {
  for (const OperationGpuRow& row : gpu.operations) {
    if (row.operation == operation) return &row;
  }
  return nullptr;
}

struct Fixture {
  NameTable names;
  int32_t none = names.Intern("(none)");
  int32_t inference = names.Intern("inference");
  int32_t backprop = names.Intern("backprop");
  int32_t gemm = names.Intern("gemm_kernel");
  int32_t relu = names.Intern("relu_kernel");
};

}  // namespace

TEST_CASE("GPU rows partition each device's busy time by overlap, kernels before copies", "[gpu]") {
  Fixture f;
  ProcessTimeline process;
  // Device 0: kernel [10,30), copy [25,40) (overlaps the kernel: 25..30 is
  // Kernel), memset [50,55). Device 1: kernel [12,22).
  process.gpu_activities = {
      Activity(10, 30, GpuActivityKind::kKernel, 1, f.gemm), Activity(25, 40, GpuActivityKind::kMemcpy, 2),
      Activity(50, 55, GpuActivityKind::kMemset, 3), Activity(12, 22, GpuActivityKind::kKernel, 4, f.relu, 1)};
  // Main timeline: inference [0,20), backprop [20,45); after 45: none.
  const IntervalList main = {{0, 20, f.inference}, {20, 45, f.backprop}};
  const GpuAnalysis gpu = Analyse(process, {}, main, f.names);
  CHECK(GpuRow(gpu, f.inference, Category::kGpuKernel) == 10 + 8);  // dev0 [10,20) + dev1 [12,20)
  CHECK(GpuRow(gpu, f.backprop, Category::kGpuKernel) == 10 + 2);   // dev0 [20,30) + dev1 [20,22)
  CHECK(GpuRow(gpu, f.backprop, Category::kGpuMemcpy) == 10);       // [30,40)
  CHECK(GpuRow(gpu, f.none, Category::kGpuMemset) == 5);
  int64_t total = 0;
  for (const auto& [key, ns] : gpu.rows) total += ns;
  CHECK(total == (30 + 5) + 10);  // Device 0 busy [10,40)+[50,55); device 1 [12,22).
  CHECK(gpu.devices == 2);
  CHECK(gpu.busy_ns == 30 + 5);  // Union over devices.
  CHECK(gpu.kernels == 2);
  CHECK(gpu.kernel_ns == 30);
  CHECK(gpu.memcpys == 1);
  CHECK(gpu.memsets == 1);
}

TEST_CASE("NCCL kernels a device runs alone are its exposed Communication; overlapped, Kernel", "[gpu]") {
  Fixture f;
  const int32_t all_reduce =
      f.names.Intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  const int32_t old_style = f.names.Intern("ncclKernel_Broadcast_RING_LL_Sum_int8_t");
  ProcessTimeline process;
  // Backprop [0,100): a gradient all-reduce [20,60) overlapped by the
  // backward kernel [10,40) (the overlap is Kernel), a copy [50,70) under
  // the all-reduce (Communication wins: a kernel runs), and an older
  // NCCL's broadcast [80,90) alone.
  process.gpu_activities = {
      Activity(10, 40, GpuActivityKind::kKernel, 1, f.gemm), Activity(20, 60, GpuActivityKind::kKernel, 2, all_reduce),
      Activity(50, 70, GpuActivityKind::kMemcpy, 3), Activity(80, 90, GpuActivityKind::kKernel, 4, old_style)};
  const GpuAnalysis gpu = Analyse(process, {}, {{0, 100, f.backprop}}, f.names);
  CHECK(GpuRow(gpu, f.backprop, Category::kGpuKernel) == 30);           // [10,40)
  CHECK(GpuRow(gpu, f.backprop, Category::kCommunication) == 20 + 10);  // [40,60) + [80,90)
  CHECK(GpuRow(gpu, f.backprop, Category::kGpuMemcpy) == 10);           // [60,70)
  CHECK(gpu.kernels == 3);  // Every kernel is still a kernel in the counts and tables.
  CHECK(gpu.kernel_ns == 30 + 40 + 10);
}

TEST_CASE("GPU work is attributed by launch through correlation ids", "[gpu]") {
  Fixture f;
  ProcessTimeline process;
  process.gpu_activities = {Activity(100, 130, GpuActivityKind::kKernel, 7, f.gemm),
                            Activity(130, 140, GpuActivityKind::kKernel, 8, f.relu),
                            Activity(150, 160, GpuActivityKind::kMemcpy, 9),
                            Activity(5, 6, GpuActivityKind::kKernel, 99, f.relu)};  // Never launched by a seen call.
  const int32_t where = f.names.Intern("Agent.act (agent.py:10)");
  std::vector<ResolvedLaunch> launches = {
      {.correlation_id = 7, .time_ns = 90, .operation = f.inference, .location = where, .line = 12},
      {.correlation_id = 8, .time_ns = 95, .operation = f.backprop},
      // A copy carrying the nested driver call's id (an alias).
      {.correlation_id = 9, .time_ns = 97, .nested = true, .operation = f.backprop},
  };
  // Operations on the main timeline are elsewhere entirely: by-launch
  // attribution must not depend on them.
  const IntervalList main = {{0, 1000, f.backprop}};
  const GpuAnalysis gpu = Analyse(process, launches, main, f.names);
  REQUIRE(ByLaunch(gpu, "inference", Category::kGpuKernel) != nullptr);
  CHECK(ByLaunch(gpu, "inference", Category::kGpuKernel)->ns == 30);
  CHECK(ByLaunch(gpu, "backprop", Category::kGpuKernel)->ns == 10);
  CHECK(ByLaunch(gpu, "backprop", Category::kGpuMemcpy)->count == 1);
  CHECK(ByLaunch(gpu, "(launch not seen)", Category::kGpuKernel)->ns == 1);
  CHECK(gpu.unattributed == 1);
  CHECK(gpu.launch_calls == 2);  // The nested alias is not a call of its own.
  REQUIRE(gpu.lines.size() == 1);
  CHECK(gpu.lines[0].location == "Agent.act (agent.py:10)");
  CHECK(gpu.lines[0].line == 12);
  CHECK(gpu.lines[0].ns == 30);
  CHECK(gpu.before_launch == 0);  // Every attributed activity began after its call.
}

TEST_CASE("A GPU activity that starts before its launching call is counted as clock skew", "[gpu]") {
  Fixture f;
  ProcessTimeline process;
  process.gpu_activities = {Activity(80, 90, GpuActivityKind::kKernel, 1, f.gemm),
                            Activity(120, 130, GpuActivityKind::kKernel, 2, f.gemm)};
  std::vector<ResolvedLaunch> launches = {{.correlation_id = 1, .time_ns = 85, .operation = f.inference},
                                          {.correlation_id = 2, .time_ns = 100, .operation = f.inference}};
  const GpuAnalysis gpu = Analyse(process, launches, {}, f.names);
  CHECK(gpu.before_launch == 1);
  CHECK(gpu.unattributed == 0);
}

TEST_CASE("Per operation: wall time, GPU-busy part and kernels launched", "[gpu]") {
  Fixture f;
  ProcessTimeline process;
  process.gpu_activities = {Activity(10, 15, GpuActivityKind::kKernel, 1, f.gemm),
                            Activity(12, 18, GpuActivityKind::kKernel, 2, f.gemm, 1),
                            Activity(40, 41, GpuActivityKind::kMemset, 3)};
  std::vector<ResolvedLaunch> launches = {{.correlation_id = 1, .time_ns = 9, .operation = f.inference},
                                          {.correlation_id = 2, .time_ns = 9, .operation = f.inference}};
  const IntervalList main = {{0, 20, f.inference}, {30, 50, f.backprop}};
  const GpuAnalysis gpu = Analyse(process, launches, main, f.names);
  const OperationGpuRow* inference = OperationRow(gpu, "inference");
  REQUIRE(inference != nullptr);
  CHECK(inference->wall_ns == 20);
  CHECK(inference->gpu_busy_ns == 8);  // [10,18): union over the two devices.
  CHECK(inference->kernels == 2);
  CHECK(inference->kernel_ns == 11);
  const OperationGpuRow* backprop = OperationRow(gpu, "backprop");
  REQUIRE(backprop != nullptr);
  CHECK(backprop->wall_ns == 20);
  CHECK(backprop->gpu_busy_ns == 1);
  CHECK(backprop->kernels == 0);
}

TEST_CASE("The GPU capture state comes from the preload's notice, else from the run", "[gpu]") {
  Fixture f;
  ProcessTimeline process;
  CHECK(Analyse(process, {}, {}, f.names, "cupti", false).status == "unused");
  CHECK(Analyse(process, {}, {}, f.names).status == "not initialized");
  CHECK(Analyse(process, {}, {}, f.names, "off", true).status == "off");
  CHECK(Analyse(process, {}, {}, f.names, "preempted", true).status == "missing");
  process.notices.push_back({"gpu", "missing", "libcupti.so.13 was not found"});
  const GpuAnalysis gpu = Analyse(process, {}, {}, f.names);
  CHECK(gpu.status == "missing");
  CHECK(gpu.message == "libcupti.so.13 was not found");
}

TEST_CASE("Thread time while a GPU is busy is CPU+GPU; the rows still sum to the lifetime", "[gpu]") {
  ThreadTimeline thread;
  thread.begin_ns = 0;
  thread.end_ns = 100;
  thread.operations = {{0, 50, 1}};
  thread.cpu_events = {{10, 20, static_cast<int32_t>(Category::kCudaApi)}};
  const IntervalList busy = {{15, 30, 0}, {90, 120, 0}};  // Past the thread's end: clipped.
  const Breakdown breakdown = AnalyseThread(thread, 0, nullptr, &busy).breakdown;
  auto at = [&](int32_t operation, Resource resource, Category category) {
    const auto it = breakdown.find({operation, resource, category});
    return it == breakdown.end() ? 0 : it->second;
  };
  CHECK(at(1, Resource::kCpu, Category::kCudaApi) == 5);       // [10,15)
  CHECK(at(1, Resource::kCpuGpu, Category::kCudaApi) == 5);    // [15,20)
  CHECK(at(1, Resource::kCpuGpu, Category::kNative) == 10);    // [20,30)
  CHECK(at(1, Resource::kCpu, Category::kNative) == 10 + 20);  // [0,10) + [30,50)
  CHECK(at(0, Resource::kCpuGpu, Category::kNative) == 10);    // [90,100)
  CHECK(at(0, Resource::kCpu, Category::kNative) == 40);       // [50,90)
  int64_t total = 0;
  for (const auto& [key, ns] : breakdown) total += ns;
  CHECK(total == 100);
}

TEST_CASE("A CUDA call is placed at the innermost Python call around it", "[gpu]") {
  NameTable names;
  const int32_t none = names.Intern("(none)");
  const int32_t op = names.Intern("inference");
  const int32_t outer = names.Intern("outer");
  const int32_t inner = names.Intern("inner");
  const int32_t sibling = names.Intern("sibling");
  ThreadTimeline thread;
  thread.begin_ns = 0;
  thread.end_ns = 1000;
  thread.python = true;
  thread.operations = {{0, 500, op}};
  // outer [10,100) contains inner [20,50); a sibling [60,70) ends before
  // the launch at 80; a launch at 600 is outside every call.
  thread.native_calls = {{20, 50, Category::kBackend, inner, 21},
                         {10, 100, Category::kBackend, outer, 11},
                         {60, 70, Category::kBackend, sibling, 61}};
  thread.gpu_launches = {{80, 3}, {30, 1}, {600, 4}, {55, 2}};
  const ThreadAnalysis analysis = AnalyseThread(thread, none);
  REQUIRE(analysis.launches.size() == 4);
  auto find = [&](uint32_t id) {
    for (const ResolvedLaunch& launch : analysis.launches) {
      if (launch.correlation_id == id) return launch;
    }
    FAIL("no launch " << id);
    return ResolvedLaunch{};
  };
  CHECK(find(1).location == inner);
  CHECK(find(1).line == 21);
  CHECK(find(2).location == outer);  // Between inner's end and the sibling.
  CHECK(find(3).location == outer);  // After the sibling ended.
  CHECK(find(3).operation == op);
  CHECK(find(4).location == kNoLabel);
  CHECK(find(4).operation == none);
}

TEST_CASE("Per-operation rows sum to the totals: GPU work between operations and unseen launches have rows", "[gpu]") {
  Fixture f;
  ProcessTimeline process;
  process.begin_ns = 0;
  process.end_ns = 100;
  // One kernel inside inference, one running on after it (the main
  // timeline in no operation), one whose launch was not seen.
  process.gpu_activities = {Activity(10, 15, GpuActivityKind::kKernel, 1, f.gemm),
                            Activity(25, 35, GpuActivityKind::kKernel, 2, f.gemm),
                            Activity(60, 64, GpuActivityKind::kKernel, 99, f.relu)};
  std::vector<ResolvedLaunch> launches = {{.correlation_id = 1, .time_ns = 9, .operation = f.inference},
                                          {.correlation_id = 2, .time_ns = 19, .operation = f.inference}};
  const IntervalList main = {{0, 20, f.inference}, {50, 70, f.backprop}};
  const GpuAnalysis gpu = Analyse(process, launches, main, f.names);
  int64_t busy = 0, kernel_ns = 0;
  uint64_t kernels = 0;
  for (const OperationGpuRow& row : gpu.operations) {
    busy += row.gpu_busy_ns;
    kernels += row.kernels;
    kernel_ns += row.kernel_ns;
  }
  CHECK(busy == gpu.busy_ns);
  CHECK(kernels == gpu.kernels);
  CHECK(kernel_ns == gpu.kernel_ns);
  const OperationGpuRow* none = OperationRow(gpu, "(none)");
  REQUIRE(none != nullptr);
  CHECK(none->gpu_busy_ns == 10);  // [25,35)
  CHECK(none->wall_ns == 100 - 40);
  const OperationGpuRow* unseen = OperationRow(gpu, "(launch not seen)");
  REQUIRE(unseen != nullptr);
  CHECK(unseen->kernels == 1);
  CHECK(unseen->wall_ns == 0);
  CHECK(OperationRow(gpu, "backprop")->gpu_busy_fraction == Approx(4.0 / 20));
}

TEST_CASE("A corrected analysis keeps the measured overlap views and has wall times of its own", "[gpu]") {
  Fixture f;
  ProcessTimeline process;
  process.end_ns = 100;
  process.gpu_activities = {Activity(10, 30, GpuActivityKind::kKernel, 1, f.gemm)};
  std::vector<ResolvedLaunch> launches = {{.correlation_id = 1, .time_ns = 5, .operation = f.inference}};
  const GpuAnalysis measured = Analyse(process, launches, {{0, 20, f.inference}, {20, 40, f.backprop}}, f.names);
  // Corrected: the main timeline lost time, the kernel did not move.
  const IntervalList corrected_main = {{0, 12, f.inference}, {12, 24, f.backprop}};
  const GpuAnalysis corrected = AnalyseGpu(process, launches, corrected_main, GpuBusyIntervals(process.gpu_activities),
                                           "cupti", true, f.names, &measured);
  CHECK(corrected.rows == measured.rows);
  CHECK(corrected.busy_ns == measured.busy_ns);
  const OperationGpuRow* inference = OperationRow(corrected, "inference");
  REQUIRE(inference != nullptr);
  CHECK(inference->wall_ns == 12);
  CHECK(inference->gpu_busy_ns == 10);  // Measured: [10,20).
  CHECK(inference->gpu_busy_fraction == Approx(0.5));
  CHECK(inference->kernels == 1);
  CHECK(OperationRow(corrected, "backprop")->gpu_busy_ns == 10);
}
