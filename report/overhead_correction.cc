#include "overhead_correction.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "category.h"
#include "overlap_sweep.h"
#include "wire_format.h"

namespace rlscope::report {

namespace cal = rlscope::calibration;

TimeCorrection::TimeCorrection(std::vector<Removal> removals) {
  // Sweep the removal rate over time: +rate where a stretch begins, -rate
  // where it ends.
  std::vector<std::pair<double, double>> steps;
  steps.reserve(removals.size() * 2);
  for (const Removal& r : removals) {
    if (r.amount <= 0) continue;
    if (r.end <= r.begin) {
      unplaced_ns_ += r.amount;  // No room at all (zero-length stretch).
      continue;
    }
    const double rate = r.amount / (r.end - r.begin);
    steps.emplace_back(r.begin, rate);
    steps.emplace_back(r.end, -rate);
  }
  std::sort(steps.begin(), steps.end());
  double rate = 0, removed = 0;
  for (size_t i = 0; i < steps.size();) {
    const double time = steps[i].first;
    if (!knots_.empty()) {
      const Knot& last = knots_.back();
      const double span = time - last.time;
      removed = last.removed + last.rate * span;
      if (rate > 1) unplaced_ns_ += (rate - 1) * span;
    }
    for (; i < steps.size() && steps[i].first == time; ++i) rate += steps[i].second;
    if (rate < 1e-12) rate = 0;  // Rounding residue of +r -r.
    knots_.push_back({time, removed, std::min(rate, 1.0)});
  }
}

double TimeCorrection::Removed(double t) const {
  auto after = std::upper_bound(knots_.begin(), knots_.end(), t,
                                [](double time, const Knot& knot) { return time < knot.time; });
  if (after == knots_.begin()) return 0;
  const Knot& knot = *std::prev(after);
  return knot.removed + knot.rate * (t - knot.time);
}

int64_t TimeCorrection::Map(int64_t t) const {
  return t - static_cast<int64_t>(std::llround(Removed(static_cast<double>(t))));
}

namespace {

using Removal = TimeCorrection::Removal;

// Estimator: looks up costs, tallies estimates per site, emits removals.
class Estimator {
 public:
  Estimator(const cal::OverheadModel& model, std::string_view python_version, const NameTable& names,
            ProcessCorrection& out)
      : model_(model), python_version_(python_version), names_(names), out_(out) {}

  // Cost: the per-event cost of `site`, tallied; nullopt if uncalibrated.
  std::optional<double> Take(const std::string& site, std::optional<double> cost, uint64_t events = 1) {
    if (!cost) {
      out_.uncalibrated[site] += events;
      return std::nullopt;
    }
    SiteOverhead& tally = out_.by_site[site];
    tally.events += events;
    tally.ns += *cost * static_cast<double>(events);
    auto it = model_.costs.find(site);
    if (it != model_.costs.end()) tally.spread_ns += it->second.spread_ns * static_cast<double>(events);
    out_.estimated_ns += *cost * static_cast<double>(events);
    return *cost;
  }
  std::optional<double> Plain(std::string_view site, uint64_t events = 1) {
    return Take(std::string(site), model_.Cost(site), events);
  }
  std::optional<double> Python(std::string_view site, uint64_t events = 1) {
    if (python_version_.empty()) return Take(std::string(site), std::nullopt, events);
    const std::string key = cal::PythonSite(site, python_version_);
    return Take(key, model_.Cost(key), events);
  }
  std::optional<double> Cupti(int32_t api, bool driver) {
    const std::string name = api >= 0 ? names_.Name(api) : std::string("?");
    return Take(std::string(cal::kCuptiPrefix) + name, model_.CuptiCost(name, driver));
  }
  void Measured(double ns) {
    SiteOverhead& tally = out_.by_site["measured"];
    ++tally.events;
    tally.ns += ns;
    out_.estimated_ns += ns;
  }
  // Spread: the estimate of self-timed window work.
  void SelfTimed(std::string_view what, uint64_t count, double ns) {
    SiteOverhead& tally = out_.by_site[std::string(what)];
    tally.events += count;
    tally.ns += ns;
    out_.estimated_ns += ns;
  }

 private:
  const cal::OverheadModel& model_;
  std::string python_version_;
  const NameTable& names_;
  ProcessCorrection& out_;
};

void Around(std::vector<Removal>& removals, double begin, double end, double cost) {
  removals.push_back({begin - cost / 2, begin, cost / 2});
  removals.push_back({end, end + cost / 2, cost / 2});
}

// SiteRemovals: the removals of the thread's recorded overhead sites.
void SiteRemovals(const ThreadTimeline& thread, Estimator& estimator, std::vector<Removal>& removals) {
  for (const OverheadSite& site : thread.overhead_sites) {
    const auto begin = static_cast<double>(site.begin_ns), end = static_cast<double>(site.end_ns);
    switch (site.kind) {
      case OverheadSiteKind::kCudaHook:
        if (auto cost = estimator.Plain(cal::kCudaHook)) Around(removals, begin, end, *cost);
        break;
      case OverheadSiteKind::kCupti:
        // Spread over CUPTI's view of the call (its callbacks run at both
        // ends), widened evenly when the inflation is longer than that.
        if (auto cost = estimator.Cupti(site.api, site.driver)) {
          const double widen = std::max(0.0, *cost - (end - begin)) / 2;
          removals.push_back({begin - widen, end + widen, *cost});
        }
        break;
      case OverheadSiteKind::kPythonTransition:
        if (auto cost = estimator.Python(cal::kPythonTransition)) Around(removals, begin, end, *cost);
        break;
      case OverheadSiteKind::kTrampoline:
        if (auto cost = estimator.Plain(cal::kTrampoline)) Around(removals, begin, end, *cost);
        break;
      case OverheadSiteKind::kPythonOperation:
        if (auto cost = estimator.Python(cal::kPythonOperation)) removals.push_back({begin - *cost, begin, *cost});
        break;
      case OverheadSiteKind::kNvtxRange:
        if (auto cost = estimator.Plain(cal::kNvtxRange)) removals.push_back({begin - *cost, begin, *cost});
        break;
      case OverheadSiteKind::kMeasured:
        estimator.Measured(end - begin);
        removals.push_back({begin, end, end - begin});
        break;
    }
  }
}

// BusyIntervals: the union of the thread's recorded calls (not Python).
IntervalList BusyIntervals(const ThreadTimeline& thread) {
  IntervalList busy;
  busy.reserve(thread.cpu_events.size() + thread.native_calls.size());
  for (const Interval& event : thread.cpu_events) {
    if (event.label != static_cast<int32_t>(Category::kPython)) busy.push_back(event);
  }
  for (const NativeCall& call : thread.native_calls) busy.push_back({call.begin_ns, call.end_ns, 0});
  return UnionIntervals(std::move(busy));
}

// Spread: removes `amount` evenly over the parts of [begin, end] inside
// (`inside`) or outside the busy intervals; over all of it when there are
// none.
void Spread(const IntervalList& busy, int64_t begin, int64_t end, double amount, bool inside,
            std::vector<Removal>& removals) {
  if (amount <= 0) return;
  std::vector<std::pair<int64_t, int64_t>> pieces;
  auto first = std::lower_bound(busy.begin(), busy.end(), begin,
                                [](const Interval& interval, int64_t t) { return interval.end_ns <= t; });
  int64_t cursor = begin;
  for (auto it = first; it != busy.end() && it->begin_ns < end; ++it) {
    const int64_t b = std::max(it->begin_ns, begin), e = std::min(it->end_ns, end);
    if (inside) {
      if (e > b) pieces.emplace_back(b, e);
    } else if (b > cursor) {
      pieces.emplace_back(cursor, b);
    }
    cursor = std::max(cursor, e);
  }
  if (!inside && end > cursor) pieces.emplace_back(cursor, end);
  int64_t total = 0;
  for (const auto& [b, e] : pieces) total += e - b;
  if (total <= 0) {
    removals.push_back({static_cast<double>(begin), static_cast<double>(end), amount});
    return;
  }
  for (const auto& [b, e] : pieces) {
    removals.push_back({static_cast<double>(b), static_cast<double>(e),
                        amount * static_cast<double>(e - b) / static_cast<double>(total)});
  }
}

void WindowRemovals(const ThreadTimeline& thread, Estimator& estimator, std::vector<Removal>& removals) {
  if (thread.overhead_windows.empty()) return;
  const IntervalList busy = BusyIntervals(thread);
  for (const OverheadWindow& window : thread.overhead_windows) {
    // Clipped to the thread's life (a window starts at the previous cut,
    // possibly before the thread did).
    const int64_t begin = std::max(window.begin_ns, thread.begin_ns);
    const int64_t end = std::max(begin, std::min(window.end_ns, thread.end_ns));
    double amount = 0;
    bool inside = false;
    switch (static_cast<wire::OverheadKind>(window.kind)) {
      case wire::OverheadKind::kPythonCall:
        amount = estimator.Python(cal::kPythonCall, window.count).value_or(0) * static_cast<double>(window.count);
        break;
      case wire::OverheadKind::kPythonBuiltin:
        amount = estimator.Python(cal::kPythonBuiltin, window.count).value_or(0) * static_cast<double>(window.count);
        break;
      case wire::OverheadKind::kNestedHook:
        amount = estimator.Plain(cal::kNestedHook, window.count).value_or(0) * static_cast<double>(window.count);
        inside = true;
        break;
      case wire::OverheadKind::kThreadSetup:
        amount = static_cast<double>(window.self_ns);
        estimator.SelfTimed("thread_setup", window.count, amount);
        break;
      case wire::OverheadKind::kCodeSetup:
        amount = static_cast<double>(window.self_ns);
        estimator.SelfTimed("code_setup", window.count, amount);
        break;
      case wire::OverheadKind::kFlusherWake:
        amount = static_cast<double>(window.self_ns);
        estimator.SelfTimed("flusher_wake", window.count, amount);
        break;
      default:
        break;  // A kind from a newer rlscope: not known, not removed.
    }
    Spread(busy, begin, end, amount, inside, removals);
  }
}

void MapIntervals(const TimeCorrection& correction, IntervalList& intervals) {
  for (Interval& interval : intervals) {
    interval.begin_ns = correction.Map(interval.begin_ns);
    interval.end_ns = correction.Map(interval.end_ns);
  }
}

}  // namespace

ProcessCorrection CorrectProcess(ProcessTimeline& process, const cal::OverheadModel& model,
                                 std::string_view python_version, const NameTable& names) {
  ProcessCorrection result;
  Estimator estimator(model, python_version, names, result);
  // Launch shifts by correlation id, taken before any time moves.
  absl::flat_hash_map<uint32_t, int64_t> launch_shift;
  size_t main_thread = 0;
  for (size_t i = 0; i < process.threads.size(); ++i) {
    if (process.threads[i].begin_ns < process.threads[main_thread].begin_ns) main_thread = i;
  }
  for (size_t index = 0; index < process.threads.size(); ++index) {
    ThreadTimeline& thread = process.threads[index];
    std::vector<Removal> removals;
    SiteRemovals(thread, estimator, removals);
    WindowRemovals(thread, estimator, removals);
    const TimeCorrection correction(std::move(removals));
    result.removed_ns += correction.Removed(static_cast<double>(thread.end_ns));
    result.unplaced_ns += correction.unplaced_ns();
    if (index == main_thread) {
      const int64_t end = std::max(process.end_ns, thread.end_ns);
      result.main_thread_removed_ns = end - correction.Map(end);
      process.end_ns = correction.Map(process.end_ns);
    }
    for (const GpuLaunchPoint& launch : thread.gpu_launches) {
      launch_shift[launch.correlation_id] = launch.time_ns - correction.Map(launch.time_ns);
    }
    thread.begin_ns = correction.Map(thread.begin_ns);
    thread.end_ns = correction.Map(thread.end_ns);
    MapIntervals(correction, thread.operations);
    MapIntervals(correction, thread.inferred_operations);
    // rlscope's own time is gone from the corrected view.
    std::erase_if(thread.cpu_events,
                  [](const Interval& event) { return event.label == static_cast<int32_t>(Category::kProfiler); });
    MapIntervals(correction, thread.cpu_events);
    for (NativeCall& call : thread.native_calls) {
      call.begin_ns = correction.Map(call.begin_ns);
      call.end_ns = correction.Map(call.end_ns);
    }
    for (GpuLaunchPoint& launch : thread.gpu_launches) launch.time_ns = correction.Map(launch.time_ns);
    thread.overhead_sites.clear();
    thread.overhead_windows.clear();
  }
  // The spread of the main thread's estimate: per-site spreads scale with
  // the estimate; approximate the main thread's share by its removal.
  double spread = 0;
  for (const auto& [site, tally] : result.by_site) spread += tally.spread_ns;
  if (result.estimated_ns > 0) {
    result.main_thread_spread_ns = spread * static_cast<double>(result.main_thread_removed_ns) / result.estimated_ns;
  }

  // GPU work: shifted with its launch, in stream order, lengths kept.
  std::vector<size_t> order(process.gpu_activities.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const GpuActivity &x = process.gpu_activities[a], &y = process.gpu_activities[b];
    return std::tie(x.device, x.stream, x.begin_ns) < std::tie(y.device, y.stream, y.begin_ns);
  });
  struct StreamState {
    int64_t end = INT64_MIN;
    int64_t shift = 0;
  };
  absl::flat_hash_map<uint64_t, StreamState> streams;
  for (size_t i : order) {
    GpuActivity& activity = process.gpu_activities[i];
    StreamState& stream = streams[(uint64_t{activity.device} << 32) | activity.stream];
    if (auto it = launch_shift.find(activity.correlation_id); activity.correlation_id != 0 && it != launch_shift.end()) {
      stream.shift = it->second;
    }
    const int64_t length = activity.end_ns - activity.begin_ns;
    activity.begin_ns = std::max(activity.begin_ns - stream.shift, stream.end);
    activity.end_ns = activity.begin_ns + length;
    stream.end = activity.end_ns;
  }
  return result;
}

}  // namespace rlscope::report
