#include "report/overhead_correction.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "format/wire_format.h"
#include "report/category.h"
#include "report/cpu_contention.h"
#include "report/gpu_analysis.h"
#include "report/name_verdicts.h"
#include "report/nearly_sorted.h"
#include "report/operation_timeline.h"
#include "report/overlap_sweep.h"
#include "report/thread_analysis.h"

namespace rlscope::report {

namespace cal = rlscope::calibration;

TimeCorrection::TimeCorrection(const std::vector<Removal>& removals) {
  for (const Removal& r : removals) Add(r.begin, r.end, r.amount);
  Finish();
}

void TimeCorrection::Add(double begin, double end, double amount) {
  if (ordered_begin_ != kNoOrdered && amount > 0) interleaved_ = true;
  AddStep(begin, end, amount);
}

void TimeCorrection::AddOrdered(double begin, double end, double amount) {
  if (ordered_begin_ == kNoOrdered) ordered_begin_ = steps_.size();
  AddStep(begin, end, amount);
}

void TimeCorrection::AddStep(double begin, double end, double amount) {
  if (amount <= 0) return;
  if (end <= begin) {
    unplaced_ns_ += amount;  // No room at all (zero-length stretch).
    return;
  }
  const double rate = amount / (end - begin);
  steps_.push_back({begin, rate});
  steps_.push_back({end, -rate});
}

void TimeCorrection::Finish() {
  auto earlier = [](const Point& a, const Point& b) { return a.time < b.time; };
  if (interleaved_) {
    std::sort(steps_.begin(), steps_.end(), earlier);
  } else {
    // Each series sorted (the ordered one in one pass), then merged.
    const auto middle = steps_.begin() + static_cast<std::ptrdiff_t>(std::min(ordered_begin_, steps_.size()));
    SortNearlySorted(steps_.begin(), middle, earlier);
    SortNearlySorted(middle, steps_.end(), earlier);
    std::inplace_merge(steps_.begin(), middle, steps_.end(), earlier);
  }
  // Sweep the steps in time order: the rate between consecutive times is
  // the sum of the stretches covering them, capped at 1. Knot k is written
  // over step k, which the sweep has read by then (each knot takes at
  // least one step).
  size_t knots = 0;
  double rate = 0, removed = 0, last_time = 0;
  for (size_t i = 0; i < steps_.size();) {
    const double time = steps_[i].time;
    if (knots > 0) {
      const double span = time - last_time;
      removed += std::min(rate, 1.0) * span;
      if (rate > 1) unplaced_ns_ += (rate - 1) * span;
    }
    for (; i < steps_.size() && steps_[i].time == time; ++i) rate += steps_[i].value;
    if (rate < 1e-12) rate = 0;  // Rounding residue of +r -r.
    steps_[knots++] = {time, removed};
    last_time = time;
  }
  steps_.resize(knots);
  knots_ = std::move(steps_);
  steps_.clear();  // Moved from: empty, in a state to reuse.
  ordered_begin_ = kNoOrdered;
  interleaved_ = false;
}

void TimeCorrection::Restore(const std::vector<Removal>& spans) {
  if (spans.empty()) return;
  std::vector<Point> knots;
  knots.reserve(knots_.size() + 2 * spans.size());
  double given = 0;  // Given back by the spans before the current time.
  size_t k = 0;
  for (const Removal& span : spans) {
    for (; k < knots_.size() && knots_[k].time < span.begin; ++k) {
      knots.push_back({knots_[k].time, knots_[k].value - given});
    }
    knots.push_back({span.begin, Removed(span.begin) - given});
    for (; k < knots_.size() && knots_[k].time == span.begin; ++k) {
    }
    for (; k < knots_.size() && knots_[k].time < span.end; ++k) {
      const double part = span.amount * (knots_[k].time - span.begin) / (span.end - span.begin);
      knots.push_back({knots_[k].time, knots_[k].value - given - part});
    }
    const double at_end = Removed(span.end);
    for (; k < knots_.size() && knots_[k].time == span.end; ++k) {
    }
    given += span.amount;
    knots.push_back({span.end, at_end - given});
  }
  for (; k < knots_.size(); ++k) knots.push_back({knots_[k].time, knots_[k].value - given});
  knots_ = std::move(knots);
}

namespace {

// RoundToNs: `ns` rounded half away from zero, as std::llround, without
// its library call (two per mapped time, millions per report).
int64_t RoundToNs(double ns) { return ns >= 0 ? static_cast<int64_t>(ns + 0.5) : -static_cast<int64_t>(-ns + 0.5); }

}  // namespace

double TimeCorrection::RemovedAt(size_t knot, double t) const {
  const Point& at = knots_[knot];
  if (knot + 1 == knots_.size()) return at.value;
  const Point& next = knots_[knot + 1];
  const double span = next.time - at.time;
  return span > 0 ? at.value + (next.value - at.value) * (t - at.time) / span : at.value;
}

double TimeCorrection::Removed(double t) const {
  auto after = std::upper_bound(knots_.begin(), knots_.end(), t,
                                [](double time, const Point& knot) { return time < knot.time; });
  if (after == knots_.begin()) return 0;
  return RemovedAt(static_cast<size_t>(after - knots_.begin()) - 1, t);
}

int64_t TimeCorrection::Mapper::operator()(int64_t t) {
  const std::vector<Point>& knots = correction_.knots_;
  if (knots.empty()) return t - RoundToNs(correction_.base_);
  const double time = correction_.Rel(t);
  const auto at_or_before = [&knots, time](size_t knot) { return knots[knot].time <= time; };
  const auto first_after = [&knots, time](size_t from, size_t to) {
    return static_cast<size_t>(std::upper_bound(knots.begin() + static_cast<std::ptrdiff_t>(from),
                                                knots.begin() + static_cast<std::ptrdiff_t>(to), time,
                                                [](double value, const Point& knot) { return value < knot.time; }) -
                               knots.begin());
  };
  // Galloping from the previous answer, both ways: an event list's times
  // are mostly increasing, and a nested event's begin lies a little before
  // the previous event's. A binary search over all the knots missed the
  // cache at every level (most of the correction's time).
  size_t i = hint_;
  if (at_or_before(i)) {
    size_t step = 1;
    while (i + step < knots.size() && at_or_before(i + step)) {
      i += step;
      step *= 2;
    }
    i = first_after(i + 1, std::min(i + step, knots.size())) - 1;
  } else {
    size_t after = i, step = 1;  // knots[after] is past `time`.
    while (step <= after && !at_or_before(after - step)) {
      after -= step;
      step *= 2;
    }
    const size_t from = step <= after ? after - step + 1 : 0;
    const size_t found = first_after(from, after);
    if (found == 0) return t - RoundToNs(correction_.base_);  // Before any removal.
    i = found - 1;
  }
  hint_ = i;
  return t - RoundToNs(correction_.base_ + correction_.RemovedAt(i, time));
}

int64_t TimeCorrection::Map(int64_t t) const { return t - RoundToNs(base_ + Removed(Rel(t))); }

namespace {

// CuptiCallKey: one key per CUDA function and API (runtime or driver), as
// a CUPTI site's price depends on both.
int64_t CuptiCallKey(int32_t api, bool driver) { return (int64_t{api} << 1) | (driver ? 1 : 0); }

// Estimator: looks up each site's cost once, tallies estimates per site
// (written to the result by Flush).
class Estimator {
 public:
  Estimator(const cal::OverheadModel& model, std::string_view python_version, const NameTable& names,
            ProcessCorrection& out)
      : model_(model), python_version_(python_version), names_(names), out_(out) {}

  std::optional<double> Plain(std::string_view site, uint64_t events = 1) {
    return Take(SlotFor(site, [&] { return Slot{std::string(site), model_.Cost(site)}; }), events);
  }
  std::optional<double> Python(std::string_view site, uint64_t events = 1) {
    return Take(SlotFor(site,
                        [&] {
                          if (python_version_.empty()) return Slot{std::string(site), std::nullopt};
                          const std::string key = cal::PythonSite(site, python_version_);
                          return Slot{key, model_.Cost(key)};
                        }),
                events);
  }
  std::optional<double> Cupti(int32_t api, bool driver) {
    auto [it, inserted] = cupti_slots_.try_emplace(CuptiCallKey(api, driver), 0);
    if (inserted) {
      const std::string name = api >= 0 ? names_.Name(api) : std::string("?");
      it->second = slots_.size();
      std::optional<double> cost = model_.CuptiCost(name, driver);
      if (cost && ScalesWithCallSpeed(name)) {
        auto speed = out_.cupti_call_speed.find(model_.CuptiSite(name, driver));
        if (speed != out_.cupti_call_speed.end()) *cost *= speed->second.scale;
      }
      slots_.push_back({std::string(cal::kCuptiPrefix) + name, cost});
    }
    return Take(slots_[it->second], 1);
  }
  void Measured(double ns) { SelfTimed("measured", 1, ns); }
  // PythonCost: a Python site's cost, looked up without counting an event.
  std::optional<double> PythonCost(std::string_view site) { return Python(site, 0); }
  void HookSample(uint64_t count, double ns) {
    out_.python_hook_samples += count;
    out_.python_hook_sample_ns += ns;
  }
  // SelfTimed: work rlscope timed itself (no calibrated cost involved).
  void SelfTimed(std::string_view what, uint64_t count, double ns) {
    SiteOverhead& tally = out_.by_site[std::string(what)];
    tally.events += count;
    tally.ns += ns;
    out_.estimated_ns += ns;
  }
  // Flush: the tallies into the result.
  void Flush() {
    for (const Slot& slot : slots_) {
      if (slot.events == 0) continue;
      if (!slot.cost) {
        out_.uncalibrated[slot.site] += slot.events;
        continue;
      }
      SiteOverhead& tally = out_.by_site[slot.site];
      tally.events += slot.events;
      tally.ns += *slot.cost * static_cast<double>(slot.events);
      auto it = model_.costs.find(slot.site);
      if (it != model_.costs.end()) tally.spread_ns += it->second.spread_ns * static_cast<double>(slot.events);
    }
    slots_.clear();
    by_name_.clear();
    cupti_slots_.clear();
  }

 private:
  struct Slot {
    std::string site;
    std::optional<double> cost;
    uint64_t events = 0;
  };
  // SlotFor: the slot of a site constant (keyed by its address), made once.
  template <typename Make>
  Slot& SlotFor(std::string_view site, Make make) {
    auto [it, inserted] = by_name_.try_emplace(site.data(), 0);
    if (inserted) {
      it->second = slots_.size();
      slots_.push_back(make());
    }
    return slots_[it->second];
  }
  std::optional<double> Take(Slot& slot, uint64_t events) {
    slot.events += events;
    if (slot.cost) out_.estimated_ns += *slot.cost * static_cast<double>(events);
    return slot.cost;
  }

  const cal::OverheadModel& model_;
  std::string python_version_;
  const NameTable& names_;
  ProcessCorrection& out_;
  std::vector<Slot> slots_;
  absl::flat_hash_map<const char*, size_t> by_name_;
  absl::flat_hash_map<int64_t, size_t> cupti_slots_;
};

// MeasureCuptiCallSpeeds: the process's launches by the CUPTI site that
// prices them, and the scale their price gets (cupti_call_speed.h). Read
// before any thread's sites are used and freed.
std::map<std::string, CuptiCallSpeed> MeasureCuptiCallSpeeds(const ProcessTimeline& process,
                                                             const cal::OverheadModel& model, const NameTable& names) {
  std::map<std::string, std::vector<double>> durations;
  absl::flat_hash_map<int64_t, std::string> site_of;  // (api, driver) -> priced site, "" when not scaled.
  for (const ThreadTimeline& thread : process.threads) {
    for (const OverheadSite& site : thread.overhead_sites) {
      if (site.kind != OverheadSiteKind::kCupti || site.api < 0) continue;
      auto [it, inserted] = site_of.try_emplace(CuptiCallKey(site.api, site.driver));
      if (inserted && ScalesWithCallSpeed(names.Name(site.api))) {
        it->second = model.CuptiSite(names.Name(site.api), site.driver);
      }
      if (!it->second.empty()) durations[it->second].push_back(static_cast<double>(site.end_ns - site.begin_ns));
    }
  }
  std::map<std::string, CuptiCallSpeed> speeds;
  for (auto& [site, times] : durations) {
    auto cost = model.costs.find(site);
    speeds[site] = MeasureCallSpeed(times, cost != model.costs.end() ? cost->second.loop_ns : 0);
  }
  return speeds;
}

// After: a hook's cost, just after the call it recorded (where its
// bookkeeping runs; the part before the call is a few instructions).
void After(TimeCorrection& removals, double end, double cost) { removals.Add(end, end + cost, cost); }

// Contended: a thread's CpuContention, and what scaling by it added to
// the prices (ProcessCorrection::cpu_wait_ns).
struct Contended {
  const CpuContention& contention;
  double added_ns = 0;
  double added_python_ns = 0;  // Of it, to the Python hook's priced work.
  // Scaled: a price paid at t_ns, grown by the waits for a CPU it caused.
  double Scaled(double cost, int64_t t_ns, bool python = false) {
    const double scaled = cost * contention.Scale(t_ns);
    added_ns += scaled - cost;
    if (python) added_python_ns += scaled - cost;
    return scaled;
  }
};

// SiteRemovals: the removals of the thread's recorded overhead sites, each
// price scaled by the thread's waits for a CPU where it was paid (what
// rlscope timed itself is wall time already); the part priced for the
// Python hook's work (PythonHookFloor) is returned.
double SiteRemovals(const ThreadTimeline& thread, Estimator& estimator, Contended& contended,
                    TimeCorrection& removals) {
  double python_priced = 0;
  for (const OverheadSite& site : thread.overhead_sites) {
    const double begin = removals.Rel(site.begin_ns), end = removals.Rel(site.end_ns);
    auto scaled = [&](std::optional<double> cost, bool python = false) {
      return cost ? std::optional<double>(contended.Scaled(*cost, site.end_ns, python)) : std::nullopt;
    };
    switch (site.kind) {
      case OverheadSiteKind::kCudaHook:
        if (auto cost = scaled(estimator.Plain(cal::kCudaHook))) After(removals, end, *cost);
        break;
      case OverheadSiteKind::kCupti:
        // Spread over CUPTI's view of the call (its callbacks run at both
        // ends), widened evenly when the inflation is longer than that.
        if (auto cost = scaled(estimator.Cupti(site.api, site.driver))) {
          const double widen = std::max(0.0, *cost - (end - begin)) / 2;
          removals.Add(begin - widen, end + widen, *cost);
        }
        break;
      case OverheadSiteKind::kPythonTransition:
        if (auto cost = scaled(estimator.Python(cal::kPythonTransition), true)) {
          After(removals, end, *cost);
          python_priced += *cost;
        }
        break;
      case OverheadSiteKind::kTrampoline:
        if (auto cost = scaled(estimator.Plain(cal::kTrampoline))) After(removals, end, *cost);
        break;
      case OverheadSiteKind::kPythonOperation:
        if (auto cost = scaled(estimator.Python(cal::kPythonOperation), true)) {
          removals.Add(begin - *cost, begin, *cost);
          python_priced += *cost;
        }
        break;
      case OverheadSiteKind::kNvtxRange:
        if (auto cost = scaled(estimator.Plain(cal::kNvtxRange))) removals.Add(begin - *cost, begin, *cost);
        break;
      case OverheadSiteKind::kMeasured:
        estimator.Measured(end - begin);
        removals.Add(begin, end, end - begin);
        break;
    }
  }
  return python_priced;
}

// BusyIntervals: the union of the thread's recorded calls (not Python),
// Wait included: the hook's Python-side costs are never spread into time
// the thread spent blocked (it ran no Python there). The native calls are
// among the CPU events already (TimelineBuilder::ClassifyNativeCalls, never
// as Python). Held while every batch window is spread, so sized exactly
// and shrunk to the union: as many as the thread's events otherwise.
IntervalList BusyIntervals(const ThreadTimeline& thread) {
  auto not_python = [](const Interval& event) { return event.label != static_cast<int32_t>(Category::kPython); };
  IntervalList busy;
  busy.reserve(static_cast<size_t>(std::count_if(thread.cpu_events.begin(), thread.cpu_events.end(), not_python)));
  std::copy_if(thread.cpu_events.begin(), thread.cpu_events.end(), std::back_inserter(busy), not_python);
  busy = UnionIntervals(std::move(busy));
  busy.shrink_to_fit();
  return busy;
}

// WindowPiece: a stretch of a batch window inside or outside the busy
// intervals.
struct WindowPiece {
  int64_t begin, end;
  bool inside;
};

// WindowPieces: [begin, end] as alternating pieces, cut where the busy
// intervals begin and end (into `pieces`, reused from window to window).
void WindowPieces(const IntervalList& busy, int64_t begin, int64_t end, std::vector<WindowPiece>& pieces) {
  pieces.clear();
  auto first = std::lower_bound(busy.begin(), busy.end(), begin,
                                [](const Interval& interval, int64_t t) { return interval.end_ns <= t; });
  int64_t cursor = begin;
  for (auto it = first; it != busy.end() && it->begin_ns < end; ++it) {
    const int64_t b = std::max(it->begin_ns, begin), e = std::min(it->end_ns, end);
    if (b > cursor) pieces.push_back({cursor, b, false});
    if (e > std::max(b, cursor)) pieces.push_back({std::max(b, cursor), e, true});
    cursor = std::max(cursor, e);
  }
  if (end > cursor) pieces.push_back({cursor, end, false});
}

// SpreadWindow: removes `outside` evenly over the parts of [begin, end]
// outside the busy intervals and `inside` over the parts inside them (over
// all of [begin, end] when there are none of the kind), in time order.
void SpreadWindow(const IntervalList& busy, int64_t begin, int64_t end, double outside, double inside,
                  std::vector<WindowPiece>& pieces, TimeCorrection& removals) {
  if (outside <= 0 && inside <= 0) return;
  WindowPieces(busy, begin, end, pieces);
  int64_t total[2] = {0, 0};
  for (const WindowPiece& piece : pieces) total[piece.inside] += piece.end - piece.begin;
  const double amount[2] = {outside, inside};
  // A kind with no time of its own is spread over the whole window.
  double whole = 0;
  for (int kind = 0; kind < 2; ++kind) {
    if (total[kind] <= 0) whole += amount[kind];
  }
  const int64_t length = end - begin;
  if (whole > 0 && length <= 0) {
    removals.AddOrdered(removals.Rel(begin), removals.Rel(end), whole);  // Unplaced.
    whole = 0;
  }
  for (const WindowPiece& piece : pieces) {
    const double span = static_cast<double>(piece.end - piece.begin);
    double share = whole * span / static_cast<double>(std::max<int64_t>(length, 1));
    if (total[piece.inside] > 0) share += amount[piece.inside] * span / static_cast<double>(total[piece.inside]);
    if (share > 0) removals.AddOrdered(removals.Rel(piece.begin), removals.Rel(piece.end), share);
  }
}

// BatchWindowEnd: the index past the entries of the batch window that
// begins at `first` (entries of one batch share its window).
size_t BatchWindowEnd(const std::vector<OverheadWindow>& windows, size_t first) {
  size_t i = first;
  while (i < windows.size() && windows[i].begin_ns == windows[first].begin_ns &&
         windows[i].end_ns == windows[first].end_ns) {
    ++i;
  }
  return i;
}

// ClippedWindow: a batch window clipped to the thread's life (a window
// starts at the previous cut, possibly before the thread did).
std::pair<int64_t, int64_t> ClippedWindow(const ThreadTimeline& thread, const OverheadWindow& window) {
  const int64_t begin = std::max(window.begin_ns, thread.begin_ns);
  return {begin, std::max(begin, std::min(window.end_ns, thread.end_ns))};
}

// WindowMiddle: the middle of a batch window clipped to the thread's life
// (where its waits for a CPU are read).
int64_t WindowMiddle(const ThreadTimeline& thread, const OverheadWindow& window) {
  const auto [begin, end] = ClippedWindow(thread, window);
  return begin + (end - begin) / 2;
}

// WindowPieceCount: how many pieces WindowRemovals may spread the thread's
// batch windows over (an upper bound on its AddOrdered calls), so that the
// correction's steps are reserved once: grown by doubling they held up to
// twice the room they used, at the report's memory peak.
size_t WindowPieceCount(const ThreadTimeline& thread, const IntervalList& busy) {
  std::vector<WindowPiece> pieces;
  size_t count = 0;
  for (size_t i = 0; i < thread.overhead_windows.size();) {
    const auto [begin, end] = ClippedWindow(thread, thread.overhead_windows[i]);
    WindowPieces(busy, begin, end, pieces);
    count += std::max<size_t>(pieces.size(), 1);  // 1: a window with no length, unplaced.
    i = BatchWindowEnd(thread.overhead_windows, i);
  }
  return count;
}

// SelfTimedSite: the site of a kind the hook times itself; nullptr for
// the kinds that are priced or not known.
const char* SelfTimedSite(wire::OverheadKind kind) {
  switch (kind) {
    case wire::OverheadKind::kThreadSetup: return kThreadSetupSite;
    case wire::OverheadKind::kCodeSetup: return kCodeSetupSite;
    case wire::OverheadKind::kFlusherWake: return kFlusherWakeSite;
    default: return nullptr;
  }
}

// PricedPythonSite: the calibration's site of a Python kind priced per
// count; empty for the others.
std::string_view PricedPythonSite(wire::OverheadKind kind) {
  switch (kind) {
    case wire::OverheadKind::kPythonCall: return cal::kPythonCall;
    case wire::OverheadKind::kPythonBuiltin: return cal::kPythonBuiltin;
    case wire::OverheadKind::kPythonCallSite: return cal::kPythonCallSite;
    default: return {};
  }
}

// The Python hook's timed time on a thread, set beside its price.
struct HookFloor {
  double sampled_ns = 0;  // The timed callbacks' own time (one in the stride).
  double excess_ns = 0;   // How much more than the price the scaled-up time is; 0 when covered.
};

// PythonHookFloor: the thread's Python hook time as timed, and how much
// more than its price it is. The hook timed one callback in
// wire::kPythonHookSampleStride (PythonHookSample); that time, scaled up,
// is a floor of what the hook cost the thread, since it leaves out the
// interpreter's side of each callback (measured with RLSCOPE_PYTHON_HOOK=
// noop: about 12 ns a callback in CleanRL's td3 on an H100, under 1 % of
// its run, so not added). The calibration's prices come from
// tight loops where the hook's code and data are hot and its slow paths
// never run; where a real run's hook time alone exceeds them (seen on
// Python 3.12 on the GPU machine: 234 ns a callback in CleanRL's DQN, 2.7x
// the price), the price is known too low and the floor is removed instead.
// `python_priced`: the thread's Python sites priced by SiteRemovals.
// Prices are scaled by the thread's waits for a CPU (`contention`), as the
// timed callbacks' wall time holds them.
HookFloor PythonHookFloor(const ThreadTimeline& thread, Estimator& estimator, const CpuContention& contention,
                          double python_priced) {
  HookFloor floor;
  for (const OverheadWindow& window : thread.overhead_windows) {
    const auto kind = static_cast<wire::OverheadKind>(window.kind);
    if (kind == wire::OverheadKind::kPythonHookSample) {
      floor.sampled_ns += static_cast<double>(window.self_ns);
    } else if (const std::string_view site = PricedPythonSite(kind); !site.empty()) {
      python_priced += estimator.PythonCost(site).value_or(0) * static_cast<double>(window.count) *
                       contention.Scale(WindowMiddle(thread, window));
    } else if (const char* self_timed = SelfTimedSite(kind); self_timed && PricedInsideCallbacks(self_timed)) {
      python_priced += static_cast<double>(window.self_ns);
    }
  }
  floor.excess_ns =
      std::max(0.0, floor.sampled_ns * static_cast<double>(wire::kPythonHookSampleStride) - python_priced);
  return floor;
}

// WindowRemovals: the removals of the thread's counted and self-timed
// work, batch window by batch window (in time order); `python_priced`:
// see PythonHookFloor; `busy`: the thread's BusyIntervals.
void WindowRemovals(const ThreadTimeline& thread, const IntervalList& busy, Estimator& estimator, double python_priced,
                    Contended& contended, TimeCorrection& removals) {
  if (thread.overhead_windows.empty()) return;
  // The floor's excess goes where the hook was timed, in proportion.
  const HookFloor floor = PythonHookFloor(thread, estimator, contended.contention, python_priced);
  std::vector<WindowPiece> pieces;
  // Entries of one batch share its window: summed, then spread once.
  for (size_t i = 0; i < thread.overhead_windows.size();) {
    const OverheadWindow& first = thread.overhead_windows[i];
    // Priced work only: the self-timed kinds are wall time already.
    double outside = 0, inside = 0, priced_outside = 0, priced_inside = 0;
    for (const size_t window_end = BatchWindowEnd(thread.overhead_windows, i); i < window_end; ++i) {
      const OverheadWindow& window = thread.overhead_windows[i];
      const auto count = static_cast<double>(window.count);
      const auto self = static_cast<double>(window.self_ns);
      switch (static_cast<wire::OverheadKind>(window.kind)) {
        case wire::OverheadKind::kPythonCall:
        case wire::OverheadKind::kPythonBuiltin:
        case wire::OverheadKind::kPythonCallSite:
          priced_outside +=
              estimator.Python(PricedPythonSite(static_cast<wire::OverheadKind>(window.kind)), window.count)
                  .value_or(0) *
              count;
          break;
        case wire::OverheadKind::kNestedHook:
          priced_inside += estimator.Plain(cal::kNestedHook, window.count).value_or(0) * count;  // Inside hooked calls.
          break;
        case wire::OverheadKind::kThreadSetup:
        case wire::OverheadKind::kCodeSetup:
        case wire::OverheadKind::kFlusherWake:
          estimator.SelfTimed(SelfTimedSite(static_cast<wire::OverheadKind>(window.kind)), window.count, self);
          outside += self;
          break;
        case wire::OverheadKind::kPythonHookSample:  // Priced above already: noted; only the floor's excess.
          estimator.HookSample(window.count, self);
          if (floor.excess_ns > 0 && floor.sampled_ns > 0) {
            const double share = floor.excess_ns * self / floor.sampled_ns;
            estimator.SelfTimed(kPythonHookFloorSite, window.count * wire::kPythonHookSampleStride, share);
            outside += share;
          }
          break;
        default: break;  // A kind from a newer rlscope: not known, not removed.
      }
    }
    const int64_t middle = WindowMiddle(thread, first);
    outside += contended.Scaled(priced_outside, middle, /*python=*/true);
    inside += contended.Scaled(priced_inside, middle);
    const auto [begin, end] = ClippedWindow(thread, first);
    SpreadWindow(busy, begin, end, outside, inside, pieces, removals);
  }
}

// DecideLaunchOwners: each CUDA call's operation, on the measured
// timeline: the thread's own, or for a helper the inherited one.
// `primary_operations`: the timeline of the thread others inherit from.
void DecideLaunchOwners(ThreadTimeline& thread, bool is_primary, const IntervalList& primary_operations) {
  if (thread.gpu_launches.empty()) return;
  IntervalList own;
  const IntervalList* operations = &primary_operations;
  if (!InheritsOperations(thread) && !is_primary) {
    own = OperationTimeline(thread.operations, thread.inferred_operations);
    operations = &own;  // Empty for a Python thread without operations: "(none)".
  }
  for (GpuLaunchPoint& launch : thread.gpu_launches) {
    launch.operation = OperationAt(*operations, launch.time_ns, kNoLabel);
  }
}

// Queued GPU work follows the work before it within this. Measured on an
// H100 (CUDA 13) in a loop the GPU bounds: 1.1-2.4 us between kernels
// (p10-p99), and of 24,020 gaps none over 5 us but where the GPU went
// idle (scripts/device/RESULTS.md, 2026-12-06).
constexpr int64_t kQueuedGapNs = 5'000;

// QueuedStreaks: the process's GPU work in streaks the GPU ran from its
// queue (sorted, disjoint): an activity joins the streak before it when it
// began within kQueuedGapNs of the streak's end and its launch, where
// known (`launch_times` by correlation id: when the call returned, its
// work queued), returned before that end. One queued later kept the GPU
// waiting for the CPU, however short the gap: a loop of short launches
// that the CPU bounds is not queued, although its kernels follow closely.
IntervalList QueuedStreaks(const std::vector<GpuActivity>& activities,
                           const absl::flat_hash_map<uint32_t, int64_t>& launch_times) {
  struct Work {
    int64_t begin_ns, end_ns, launch_ns;
  };
  std::vector<Work> work;
  work.reserve(activities.size());
  for (const GpuActivity& activity : activities) {
    auto it = activity.correlation_id != 0 ? launch_times.find(activity.correlation_id) : launch_times.end();
    work.push_back({activity.begin_ns, activity.end_ns, it != launch_times.end() ? it->second : INT64_MIN});
  }
  std::sort(work.begin(), work.end(), [](const Work& a, const Work& b) { return a.begin_ns < b.begin_ns; });
  IntervalList streaks;
  for (const Work& next : work) {
    if (!streaks.empty() && next.begin_ns - streaks.back().end_ns <= kQueuedGapNs &&
        next.launch_ns <= streaks.back().end_ns) {
      streaks.back().end_ns = std::max(streaks.back().end_ns, next.end_ns);
    } else {
      streaks.push_back({next.begin_ns, std::max(next.begin_ns, next.end_ns), 0});
    }
  }
  return streaks;
}

// WaitsForGpu: whether a CUDA function can block until the GPU's queued
// work is done: the synchronizations, copies (a copy waits for the work
// before it in its stream; to pageable memory, the copy returns only once
// done) and frees (which synchronize the device). Launches and the rest
// return once the work is queued; a GPU that finishes during one did not
// make it wait.
bool WaitsForGpu(std::string_view api) {
  std::string lower(api);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (std::string_view fragment : {"synchronize", "memcpy", "free"}) {
    if (lower.find(fragment) != std::string::npos) return true;
  }
  return false;
}

// GpuWaitCalls: the thread's CUDA calls of functions that wait for the GPU
// (WaitsForGpu; named on its overhead sites), sorted, nested ones dropped.
IntervalList GpuWaitCalls(const ThreadTimeline& thread, const NameTable& names) {
  IntervalList calls;
  NameVerdicts waits(names, WaitsForGpu);
  for (const OverheadSite& site : thread.overhead_sites) {
    if (site.kind != OverheadSiteKind::kCudaHook && site.kind != OverheadSiteKind::kCupti) continue;
    if (site.end_ns <= site.begin_ns) continue;
    if (waits.Of(site.api)) calls.push_back({site.begin_ns, site.end_ns, 0});
  }
  return UnionIntervals(std::move(calls));
}

// RestoreWaits: gives back to the thread's waits for the GPU the time the
// correction took off them that the GPU would have made them wait anyway;
// returns how much. A call that can wait (`calls`: GpuWaitCalls) during
// which a streak of queued GPU work ended (QueuedStreaks) ends, corrected,
// no earlier than that streak: unprofiled, the streak would have begun
// earlier by what was removed before its start, and no earlier by what was
// removed after, however fast the CPU, the GPU having its work queued.
// Where the call's own corrected end is later, it did not wait (its own
// work took longer) and nothing is given back. The wait's return after the
// GPU goes idle is taken as instant, so this gives back at most what it
// should. (Measured on an H100: a loop the GPU bounds took the same time
// with and without rlscope, and without this the correction took 4 % off
// it.) The streak is the process's, over all GPUs, and its start is priced
// on this thread's clock: exact for one thread driving one GPU, the usual
// RL learner.
double RestoreWaits(const IntervalList& calls, const IntervalList& streaks, TimeCorrection& correction) {
  std::vector<TimeCorrection::Removal> spans;
  std::vector<std::pair<double, double>> given_by;  // (span end, given back up to it), in time order.
  double given = 0;
  const auto given_before = [&given_by](double t) {
    auto it = std::upper_bound(given_by.begin(), given_by.end(), t,
                               [](double time, const std::pair<double, double>& entry) { return time < entry.first; });
    return it == given_by.begin() ? 0.0 : std::prev(it)->second;
  };
  for (const Interval& call : calls) {
    // The streak that ended during the call, if any.
    auto streak = std::upper_bound(streaks.begin(), streaks.end(), call.begin_ns,
                                   [](int64_t t, const Interval& s) { return t < s.end_ns; });
    if (streak == streaks.end() || streak->end_ns > call.end_ns) continue;
    const double end = correction.Rel(call.end_ns), start = correction.Rel(streak->begin_ns);
    const double own_end = end - (correction.Removed(end) - given);
    const double gpu_idle = correction.Rel(streak->end_ns) - (correction.Removed(start) - given_before(start));
    const double amount = gpu_idle - own_end;
    if (amount <= 0) continue;
    spans.push_back({correction.Rel(call.begin_ns), end, amount});
    given += amount;
    given_by.emplace_back(end, given);
  }
  correction.Restore(spans);
  return given;
}

// InThreadClock: the parts of `intervals` (measured: sorted, disjoint)
// inside `within` (sorted, disjoint), mapped by the thread's own
// correction: the thread's time keeps what it overlapped when measured.
IntervalList InThreadClock(const TimeCorrection& correction, const IntervalList& intervals,
                           const IntervalList& within) {
  IntervalList mapped;
  TimeCorrection::Mapper begins(correction), ends(correction);
  auto it = intervals.begin();
  for (const Interval& window : within) {
    it = std::upper_bound(it, intervals.end(), window.begin_ns,
                          [](int64_t t, const Interval& interval) { return t < interval.end_ns; });
    for (auto piece = it; piece != intervals.end() && piece->begin_ns < window.end_ns; ++piece) {
      const Interval clipped{begins(std::max(piece->begin_ns, window.begin_ns)),
                             ends(std::min(piece->end_ns, window.end_ns)), piece->label};
      if (clipped.end_ns > clipped.begin_ns) mapped.push_back(clipped);
    }
  }
  mapped.shrink_to_fit();  // Kept until the analysis: no slack.
  return mapped;
}

void MapIntervals(const TimeCorrection& correction, IntervalList& intervals) {
  TimeCorrection::Mapper begins(correction), ends(correction);
  for (Interval& interval : intervals) {
    interval.begin_ns = begins(interval.begin_ns);
    interval.end_ns = ends(interval.end_ns);
  }
}

}  // namespace

bool PricedInsideCallbacks(std::string_view site) {
  auto starts_with = [site](std::string_view prefix) { return site.substr(0, prefix.size()) == prefix; };
  if (starts_with(cal::kPythonProcess)) return false;  // Start-up and exit: no callback.
  if (site == kPythonHookFloorSite) return false;      // Beyond the price, not priced.
  return starts_with("python_") || site == kThreadSetupSite || site == kCodeSetupSite || site == kFlusherWakeSite;
}

ProcessCorrection CorrectProcess(ProcessTimeline& process, const cal::OverheadModel& model,
                                 std::string_view python_version, const NameTable& names) {
  ProcessCorrection result;
  result.cupti_call_speed = MeasureCuptiCallSpeeds(process, model, names);
  Estimator estimator(model, python_version, names, result);
  // Launch shifts by correlation id, taken before any time moves.
  absl::flat_hash_map<uint32_t, int64_t> launch_shift;
  size_t main_thread = 0;
  for (size_t i = 0; i < process.threads.size(); ++i) {
    if (process.threads[i].begin_ns < process.threads[main_thread].begin_ns) main_thread = i;
  }
  // The main thread first: a thread it started would, unprofiled, have
  // started earlier by what the main thread lost until then.
  std::vector<size_t> thread_order;
  if (!process.threads.empty()) thread_order.push_back(main_thread);
  for (size_t i = 0; i < process.threads.size(); ++i) {
    if (i != main_thread) thread_order.push_back(i);
  }
  // Who owns what is decided here, on the measured timeline, before any
  // time moves; the rest of the correction changes amounts only. Each
  // thread moves by its own overhead, so matching one thread's times
  // against another's operations after the move would misplace them.
  const int primary = PrimaryOperationThread(process.threads);
  result.primary_thread = primary;
  const IntervalList primary_operations = InheritedOperations(process.threads, primary);
  const IntervalList measured_busy = GpuBusyIntervals(process.gpu_activities);
  absl::flat_hash_map<uint32_t, int64_t> launch_times;
  for (const ThreadTimeline& thread : process.threads) {
    for (const GpuLaunchPoint& launch : thread.gpu_launches) {
      launch_times[launch.correlation_id] = std::max(launch.time_ns, launch.return_ns);  // Entry if return unknown.
    }
  }
  const IntervalList gpu_streaks = QueuedStreaks(process.gpu_activities, launch_times);
  absl::flat_hash_map<uint32_t, int64_t>().swap(launch_times);
  std::optional<TimeCorrection> main_correction;
  for (size_t index : thread_order) {
    ThreadTimeline& thread = process.threads[index];
    double base = 0;
    if (main_correction) base = main_correction->Removed(main_correction->Rel(thread.begin_ns));
    TimeCorrection correction(thread.begin_ns, base);
    IntervalList busy;
    if (!thread.overhead_windows.empty()) busy = BusyIntervals(thread);
    correction.Reserve(thread.overhead_sites.size() + WindowPieceCount(thread, busy));
    const CpuContention contention(thread.cpu_waits);
    Contended contended{contention};
    const double python_priced = SiteRemovals(thread, estimator, contended, correction);
    IntervalList waits;
    if (!gpu_streaks.empty()) waits = GpuWaitCalls(thread, names);
    // Read once: freed now (as many as the events), not held through the
    // rest of the correction and the analysis.
    std::vector<OverheadSite>().swap(thread.overhead_sites);
    WindowRemovals(thread, busy, estimator, python_priced, contended, correction);
    result.cpu_wait_ns += contended.added_ns;
    result.python_cpu_wait_ns += contended.added_python_ns;
    result.estimated_ns += contended.added_ns;
    std::vector<OverheadWindow>().swap(thread.overhead_windows);
    IntervalList().swap(busy);
    correction.Finish();
    result.removed_ns += correction.Removed(correction.Rel(thread.end_ns));
    result.unplaced_ns += correction.unplaced_ns();
    if (!waits.empty()) result.wait_restored_ns += RestoreWaits(waits, gpu_streaks, correction);
    IntervalList().swap(waits);
    if (index == main_thread) {
      result.main_thread_start_scale = contention.Scale(thread.begin_ns);
      const int64_t end = std::max(process.end_ns, thread.end_ns);
      result.main_thread_removed_ns = end - correction.Map(end);
      process.end_ns = correction.Map(process.end_ns);
    }
    DecideLaunchOwners(thread, static_cast<int>(index) == primary, primary_operations);
    // Only a thread that counts any time gets copies, clipped to the time
    // it counts: its life, or for a helper its recorded calls (what
    // AnalyseThread counts of it; its calls' owners are decided above).
    if (!(InheritsOperations(thread) && thread.cpu_events.empty())) {
      const IntervalList counted = InheritsOperations(thread) ? UnionIntervals(thread.cpu_events)
                                                              : IntervalList{{thread.begin_ns, thread.end_ns, 0}};
      if (InheritsOperations(thread) && !primary_operations.empty()) {
        thread.inherited_operations = InThreadClock(correction, primary_operations, counted);
      }
      if (!measured_busy.empty()) thread.gpu_busy = InThreadClock(correction, measured_busy, counted);
    }
    TimeCorrection::Mapper launches(correction);
    for (const GpuLaunchPoint& launch : thread.gpu_launches) {
      launch_shift[launch.correlation_id] = launch.time_ns - launches(launch.time_ns);
    }
    thread.begin_ns = correction.Map(thread.begin_ns);
    thread.end_ns = correction.Map(thread.end_ns);
    MapIntervals(correction, thread.operations);
    MapIntervals(correction, thread.inferred_operations);
    MapIntervals(correction, thread.instance_starts);
    if (thread.captured) MapIntervals(correction, *thread.captured);
    // rlscope's own time is gone from the corrected view.
    std::erase_if(thread.cpu_events,
                  [](const Interval& event) { return event.label == static_cast<int32_t>(Category::kProfiler); });
    MapIntervals(correction, thread.cpu_events);
    TimeCorrection::Mapper call_begins(correction), call_ends(correction), launch_times(correction);
    for (NativeCall& call : thread.native_calls) {
      call.begin_ns = call_begins(call.begin_ns);
      call.end_ns = call_ends(call.end_ns);
    }
    for (GpuLaunchPoint& launch : thread.gpu_launches) launch.time_ns = launch_times(launch.time_ns);
    TimeCorrection::Mapper collective_begins(correction), collective_ends(correction);
    for (HookedCollective& call : thread.hooked_collectives) {
      call.begin_ns = collective_begins(call.begin_ns);
      call.end_ns = collective_ends(call.end_ns);
    }
    if (index == main_thread) main_correction = std::move(correction);
  }
  estimator.Flush();
  // The spread of the main thread's estimate: per-site spreads scale with
  // the estimate; approximate the main thread's share by its removal.
  double spread = 0;
  for (const auto& [site, tally] : result.by_site) spread += tally.spread_ns;
  // Spreads are of the calibrated prices: set against the estimate
  // before the waits for a CPU scaled it (scaled alike, they cancel).
  if (const double priced = result.estimated_ns - result.cpu_wait_ns; priced > 0) {
    result.main_thread_spread_ns = spread * static_cast<double>(result.main_thread_removed_ns) / priced;
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
    if (auto it = launch_shift.find(activity.correlation_id);
        activity.correlation_id != 0 && it != launch_shift.end()) {
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
