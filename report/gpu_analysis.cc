#include "report/gpu_analysis.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "report/name_verdicts.h"
#include "report/overlap_sweep.h"

namespace rlscope::report {

namespace {

Category CategoryOf(GpuActivityKind kind) {
  switch (kind) {
    case GpuActivityKind::kKernel: return Category::kGpuKernel;
    case GpuActivityKind::kMemcpy: return Category::kGpuMemcpy;
    case GpuActivityKind::kMemset: return Category::kGpuMemset;
  }
  return Category::kGpuKernel;
}

struct Cost {
  uint64_t count = 0;
  int64_t ns = 0;
  void Add(int64_t duration) {
    ++count;
    ns += duration;
  }
};

// The capture state the report shows: what the preload said, else what
// the run's setting and the process's CUDA use imply.
void SetStatus(const ProcessTimeline& process, const std::string& gpu_capture, bool used_cuda, GpuAnalysis& gpu) {
  for (const CaptureNotice& notice : process.notices) {
    if (notice.topic != "gpu") continue;
    gpu.status = notice.status;
    gpu.message = notice.message;
  }
  if (!gpu.status.empty()) return;
  if (gpu_capture == "off") {
    gpu.status = "off";
    gpu.message = "GPU capture was turned off (rlscope run --no-cupti)";
  } else if (gpu_capture == "preempted") {
    gpu.status = "missing";
    gpu.message = "another tool's CUDA injection library (CUDA_INJECTION64_PATH) was set, so rlscope's was not loaded";
  } else if (used_cuda) {
    gpu.status = "not initialized";
    gpu.message =
        "the process made CUDA calls but the CUDA driver never loaded rlscope's injection (no driver, "
        "or the calls went to a runtime that does not initialize one): GPU activity is missing";
  } else {
    gpu.status = "unused";
  }
}

// IsCommunicationKernel: whether a kernel's name is a collective
// library's (NCCL's ncclKernel_* / ncclDevKernel_*, RCCL's the same).
bool IsCommunicationKernel(std::string_view name) { return name.starts_with("nccl"); }

// Where communication kernels go among a device's streams (after the
// operations and the three activity kinds).
constexpr size_t kCommunicationStream = 4;

}  // namespace

IntervalList GpuBusyIntervals(const std::vector<GpuActivity>& activities) {
  IntervalList all;
  all.reserve(activities.size());
  for (const GpuActivity& activity : activities) all.push_back({activity.begin_ns, activity.end_ns, 0});
  return UnionIntervals(std::move(all));
}

GpuAnalysis AnalyseGpu(const ProcessTimeline& process, const std::vector<ResolvedLaunch>& launches,
                       const IntervalList& main_operations, const IntervalList& busy, const std::string& gpu_capture,
                       bool used_cuda, NameTable& names, const GpuAnalysis* measured) {
  GpuAnalysis gpu;
  SetStatus(process, gpu_capture, used_cuda, gpu);
  gpu.dropped = process.gpu_dropped;
  gpu.cupti_overhead_ns = process.cupti_overhead_ns;
  const int32_t none = names.Intern("(none)");
  const int32_t unseen = names.Intern("(launch not seen)");

  absl::flat_hash_map<uint32_t, const ResolvedLaunch*> by_id;
  by_id.reserve(launches.size());
  std::map<int32_t, ApiGpuRow> apis;
  for (const ResolvedLaunch& launch : launches) {
    if (!launch.nested) {
      ++gpu.launch_calls;
      ++apis[launch.api].calls;
    }
    // The timed call wins over its nested alias (its time is the entry).
    auto [it, inserted] = by_id.try_emplace(launch.correlation_id, &launch);
    if (!inserted && it->second->nested && !launch.nested) it->second = &launch;
  }

  // By launch.
  std::map<std::pair<int32_t, Category>, Cost> by_launch;
  std::map<std::pair<int32_t, int32_t>, Cost> by_kernel;
  std::map<std::tuple<int32_t, int32_t, uint32_t>, Cost> by_line;
  std::set<uint32_t> devices;
  for (const GpuActivity& activity : process.gpu_activities) {
    const int64_t duration = activity.end_ns - activity.begin_ns;
    devices.insert(activity.device);
    switch (activity.kind) {
      case GpuActivityKind::kKernel:
        ++gpu.kernels;
        gpu.kernel_ns += duration;
        break;
      case GpuActivityKind::kMemcpy:
        ++gpu.memcpys;
        gpu.memcpy_ns += duration;
        break;
      case GpuActivityKind::kMemset:
        ++gpu.memsets;
        gpu.memset_ns += duration;
        break;
    }
    const auto found = by_id.find(activity.correlation_id);
    const ResolvedLaunch* launch = found != by_id.end() ? found->second : nullptr;
    int32_t operation = unseen;
    if (launch == nullptr) {
      ++gpu.unattributed;
    } else {
      operation = launch->operation;
      ApiGpuRow& api = apis[launch->api];
      switch (activity.kind) {
        case GpuActivityKind::kKernel: ++api.kernels; break;
        case GpuActivityKind::kMemcpy: ++api.memcpys; break;
        case GpuActivityKind::kMemset: ++api.memsets; break;
      }
      if (!launch->nested && activity.begin_ns < launch->time_ns) ++gpu.before_launch;
      if (launch->location != kNoLabel) by_line[{operation, launch->location, launch->line}].Add(duration);
    }
    by_launch[{operation, CategoryOf(activity.kind)}].Add(duration);
    if (activity.kind == GpuActivityKind::kKernel) by_kernel[{operation, activity.name}].Add(duration);
  }
  gpu.devices = static_cast<uint32_t>(devices.size());
  for (const auto& [key, cost] : by_launch) {
    gpu.by_launch.push_back({names.Name(key.first), key.second, cost.count, cost.ns});
  }
  {
    std::map<int32_t, std::vector<GpuKernelRow>> per_operation;
    for (const auto& [key, cost] : by_kernel) {
      per_operation[key.first].push_back({names.Name(key.first), names.Name(key.second), cost.count, cost.ns});
    }
    for (auto& [operation, rows] : per_operation) {
      std::sort(rows.begin(), rows.end(), [](const GpuKernelRow& a, const GpuKernelRow& b) { return a.ns > b.ns; });
      if (rows.size() > kMaxKernelsPerOperation) rows.resize(kMaxKernelsPerOperation);
      gpu.kernels_by_launch.insert(gpu.kernels_by_launch.end(), rows.begin(), rows.end());
    }
  }
  {
    std::map<int32_t, std::vector<GpuLineRow>> per_operation;
    for (const auto& [key, cost] : by_line) {
      const auto& [operation, location, line] = key;
      per_operation[operation].push_back({names.Name(operation), names.Name(location), line, cost.count, cost.ns});
    }
    for (auto& [operation, rows] : per_operation) {
      std::sort(rows.begin(), rows.end(), [](const GpuLineRow& a, const GpuLineRow& b) { return a.ns > b.ns; });
      if (rows.size() > kMaxLinesPerOperation) rows.resize(kMaxLinesPerOperation);
      gpu.lines.insert(gpu.lines.end(), rows.begin(), rows.end());
    }
  }

  std::map<int32_t, OperationGpuRow> operations;
  if (measured != nullptr) {
    // GPU time is not corrected, and who it overlapped was decided on the
    // measured timeline: the measured overlap views stand; wall times are
    // this view's own.
    gpu.rows = measured->rows;
    gpu.busy_ns = measured->busy_ns;
    for (const OperationGpuRow& row : measured->operations) {
      OperationGpuRow& kept = operations[names.Intern(row.operation)];
      kept.gpu_busy_ns = row.gpu_busy_ns;
      kept.gpu_busy_fraction = row.gpu_busy_fraction;
    }
  } else {
    // By overlap, per device: the main timeline's operation at each
    // instant a device was busy.
    // Streams: the operations, then per activity kind (compute kernels,
    // copies, memsets), then communication kernels (kCommunicationStream).
    NameVerdicts communication(names, IsCommunicationKernel);
    for (uint32_t device : devices) {
      std::array<IntervalList, 5> streams;
      streams[0] = main_operations;
      for (const GpuActivity& activity : process.gpu_activities) {
        if (activity.device != device) continue;
        const bool talks = activity.kind == GpuActivityKind::kKernel && communication.Of(activity.name);
        streams[talks ? kCommunicationStream : static_cast<size_t>(activity.kind)].push_back(
            {activity.begin_ns, activity.end_ns, 0});
      }
      for (size_t kind = 1; kind < streams.size(); ++kind) streams[kind] = UnionIntervals(std::move(streams[kind]));
      SweepStreams(streams, [&](int64_t begin_ns, int64_t end_ns, std::span<const int32_t> labels) {
        Category category;
        if (labels[1] != kNoLabel) {
          category = Category::kGpuKernel;
        } else if (labels[kCommunicationStream] != kNoLabel) {
          category = Category::kCommunication;
        } else if (labels[2] != kNoLabel) {
          category = Category::kGpuMemcpy;
        } else if (labels[3] != kNoLabel) {
          category = Category::kGpuMemset;
        } else {
          return;  // An operation with every GPU idle.
        }
        const int32_t operation = labels[0] == kNoLabel ? none : labels[0];
        gpu.rows[{operation, Resource::kGpu, category}] += end_ns - begin_ns;
      });
    }
    for (const Interval& interval : busy) gpu.busy_ns += interval.duration_ns();
  }

  // Per operation: its time on the main timeline and how much of it some
  // GPU was busy. GPU work while the main timeline is in no operation
  // (asynchronous work running on after its operation, work between
  // operations) is "(none)"'s, so the rows' busy times sum to busy_ns.
  const IntervalList lifetime = {{process.begin_ns, process.end_ns, 0}};
  const std::array<IntervalList, 3> streams = {main_operations, busy, lifetime};
  SweepStreams(streams, [&](int64_t begin_ns, int64_t end_ns, std::span<const int32_t> labels) {
    const bool gpu_busy = labels[1] != kNoLabel;
    if (labels[0] == kNoLabel && !gpu_busy && labels[2] == kNoLabel) return;
    OperationGpuRow& row = operations[labels[0] == kNoLabel ? none : labels[0]];
    if (labels[0] != kNoLabel || labels[2] != kNoLabel) row.wall_ns += end_ns - begin_ns;
    if (gpu_busy && measured == nullptr) row.gpu_busy_ns += end_ns - begin_ns;
  });
  // Kernels by launch, those whose launch was not seen included (a row of
  // their own), so the rows' kernels sum to the totals.
  for (const auto& [key, cost] : by_launch) {
    if (key.second != Category::kGpuKernel) continue;
    OperationGpuRow& row = operations[key.first];
    row.kernels += cost.count;
    row.kernel_ns += cost.ns;
  }
  for (auto& [label, row] : operations) {
    row.operation = names.Name(label);
    if (measured == nullptr) {
      row.gpu_busy_fraction =
          row.wall_ns > 0 ? std::min(1.0, static_cast<double>(row.gpu_busy_ns) / static_cast<double>(row.wall_ns)) : 0;
    }
    gpu.operations.push_back(row);
  }
  for (auto& [label, row] : apis) {
    row.api = names.Name(label);
    gpu.apis.push_back(row);
  }
  return gpu;
}

}  // namespace rlscope::report
