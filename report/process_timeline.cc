#include "report/process_timeline.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace rlscope::report {

namespace {

// NestedInReturnOrder: NestedCalls in one pass, for calls in the order they
// returned (a call after the calls inside it, each call after the earlier
// ones): read backwards, the calls holding the current one are a stack.
// False, with `nested` partly set, where the calls are not in that order or
// do not nest (a merged stream, damaged data: a call ending before it began).
bool NestedInReturnOrder(const std::vector<NativeCall>& calls, std::vector<bool>& nested) {
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].end_ns < calls[i].begin_ns || (i > 0 && calls[i].end_ns < calls[i - 1].end_ns)) return false;
  }
  std::vector<size_t> holding;  // Later calls, each inside the one below it.
  for (size_t i = calls.size(); i-- > 0;) {
    const NativeCall& call = calls[i];
    while (!holding.empty()) {
      const NativeCall& outer = calls[holding.back()];
      if (outer.begin_ns <= call.begin_ns && call.begin_ns < outer.end_ns) break;  // It ends no later: inside.
      if (outer.begin_ns < call.end_ns) return false;                              // Overlaps without holding it.
      holding.pop_back();  // Wholly after it: holds no earlier call either.
    }
    nested[i] = !holding.empty();
    holding.push_back(i);
  }
  return true;
}

}  // namespace

// NestedCalls: per native call (they nest properly), whether it lies
// inside another one. They are recorded as they return, inner ones first,
// which one pass reads; any other order is sorted first.
std::vector<bool> NestedCalls(const std::vector<NativeCall>& calls) {
  std::vector<bool> nested(calls.size(), false);
  if (NestedInReturnOrder(calls, nested)) return nested;
  nested.assign(calls.size(), false);
  std::vector<size_t> order(calls.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (calls[a].begin_ns != calls[b].begin_ns) return calls[a].begin_ns < calls[b].begin_ns;
    return calls[a].end_ns > calls[b].end_ns;  // The outer of two that start together first.
  });
  int64_t outer_end = INT64_MIN;
  for (const size_t i : order) {
    if (calls[i].begin_ns < outer_end) {
      nested[i] = true;
    } else {
      outer_end = calls[i].end_ns;
    }
  }
  return nested;
}

int32_t NameTable::Intern(std::string_view name) {
  auto it =
      labels_.find(absl::string_view(name.data(), name.size()));  // Debian's absl::string_view is not std::string_view.
  if (it != labels_.end()) return it->second;
  const auto label = static_cast<int32_t>(names_.size());
  names_.emplace_back(name);
  labels_.emplace(names_.back(), label);
  return label;
}

bool SameProcess(const ProcessTimeline& a, const ProcessTimeline& b) {
  // Streams without a start time (older preloads) can only match by pid.
  const bool start_known = a.proc_start_ticks != 0 && b.proc_start_ticks != 0;
  return a.pid == b.pid && (!start_known || a.proc_start_ticks == b.proc_start_ticks);
}

void MergeExecChain(ProcessTimeline& earlier, ProcessTimeline&& later) {
  // A reconnection's stream continues the same image: every thread goes
  // on, and CUPTI's correlation ids do not start over.
  const bool continuation = later.continues_stream;
  earlier.reconnections += later.reconnections;
  earlier.reconnection_lost_events += later.reconnection_lost_events;
  earlier.executable = std::move(later.executable);
  earlier.argv = std::move(later.argv);
  // The clock pair goes with the begin time it was read at.
  if (later.begin_ns < earlier.begin_ns) earlier.begin_unix_ns = later.begin_unix_ns;
  earlier.begin_ns = std::min(earlier.begin_ns, later.begin_ns);
  earlier.end_ns = std::max(earlier.end_ns, later.end_ns);
  earlier.ended_cleanly = later.ended_cleanly;
  earlier.recorded_events += later.recorded_events;
  earlier.dropped_events += later.dropped_events;
  // CUPTI's correlation ids start over in the new image: move the later
  // image's past the earlier one's so GPU work matches its own launches.
  uint32_t shift = 0;
  for (const ThreadTimeline& thread : earlier.threads) {
    for (const GpuLaunchPoint& launch : thread.gpu_launches) shift = std::max(shift, launch.correlation_id);
  }
  for (const GpuActivity& activity : earlier.gpu_activities) shift = std::max(shift, activity.correlation_id);
  if (continuation) shift = 0;
  for (ThreadTimeline& thread : later.threads) {
    for (GpuLaunchPoint& launch : thread.gpu_launches) launch.correlation_id += shift;
  }
  for (GpuActivity& activity : later.gpu_activities) {
    if (activity.correlation_id != 0) activity.correlation_id += shift;
  }
  earlier.gpu_activities.insert(earlier.gpu_activities.end(), later.gpu_activities.begin(), later.gpu_activities.end());
  earlier.gpu_dropped += later.gpu_dropped;
  earlier.cupti_overhead_ns += later.cupti_overhead_ns;
  earlier.notices.insert(earlier.notices.end(), later.notices.begin(), later.notices.end());
  earlier.capture_edges.insert(earlier.capture_edges.end(), later.capture_edges.begin(), later.capture_edges.end());
  for (ThreadTimeline& thread : later.threads) {
    // exec runs on in the calling thread, which becomes the pid's thread.
    auto continued = std::find_if(earlier.threads.begin(), earlier.threads.end(), [&](const ThreadTimeline& t) {
      return t.tid == thread.tid && (continuation || thread.tid == static_cast<uint32_t>(later.pid)) &&
             t.end_ns <= thread.begin_ns;
    });
    if (continued == earlier.threads.end()) {
      earlier.threads.push_back(std::move(thread));
      continue;
    }
    ThreadTimeline& into = *continued;
    into.end_ns = std::max(into.end_ns, thread.end_ns);
    if (!thread.name.empty()) into.name = thread.name;
    into.python = into.python || thread.python;
    into.operations.insert(into.operations.end(), thread.operations.begin(), thread.operations.end());
    into.inferred_operations.insert(into.inferred_operations.end(), thread.inferred_operations.begin(),
                                    thread.inferred_operations.end());
    into.cpu_events.insert(into.cpu_events.end(), thread.cpu_events.begin(), thread.cpu_events.end());
    into.native_calls.insert(into.native_calls.end(), thread.native_calls.begin(), thread.native_calls.end());
    into.overhead_sites.insert(into.overhead_sites.end(), thread.overhead_sites.begin(), thread.overhead_sites.end());
    into.overhead_windows.insert(into.overhead_windows.end(), thread.overhead_windows.begin(),
                                 thread.overhead_windows.end());
    into.cpu_waits.insert(into.cpu_waits.end(), thread.cpu_waits.begin(), thread.cpu_waits.end());
    for (const auto& [label, count] : thread.operation_instances) into.operation_instances[label] += count;
    into.instance_starts.insert(into.instance_starts.end(), thread.instance_starts.begin(),
                                thread.instance_starts.end());
    into.events += thread.events;
    into.dropped += thread.dropped;
    into.cuda_api_calls += thread.cuda_api_calls;
    into.gpu_launches.insert(into.gpu_launches.end(), thread.gpu_launches.begin(), thread.gpu_launches.end());
  }
  for (std::string& problem : later.problems) earlier.problems.push_back(std::move(problem));
  for (ChildStart& child : later.children) earlier.children.push_back(std::move(child));
}

}  // namespace rlscope::report
