#include "report/operation_inference.h"

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "format/code_origin.h"
#include "report/category.h"
#include "report/flatten.h"
#include "report/overlap_sweep.h"
#include "report/source_lines.h"

namespace rlscope::report {

namespace {

struct Labels {
  int32_t forward;
  int32_t reset;  // An env reset (kResetCandidate): simulation, and an episode's start.
  int32_t backprop;
  int32_t inference;
  int32_t simulation;
  int32_t replay;
  int32_t startup;
  int32_t teardown;
  int32_t compile;

  // IsEnvStep: an env step or an env reset a rule found.
  bool IsEnvStep(int32_t label) const { return label == simulation || label == reset; }
};

// RlscopeCalls: the calling locations (sorted) of rlscope's own Python
// module (`with rlscope.operation(...)`'s enter and exit), whose native
// calls are rlscope's, not the program's.
using RlscopeCalls = std::vector<int32_t>;

// ResolveByNesting: a forward pass that contains a backprop operation, or
// runs inside one, is backprop. Intervals from one thread's call stack
// nest properly; a sweep in start order keeps the open ones.
void ResolveByNesting(IntervalList& intervals, const Labels& labels) {
  std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) {
    return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.end_ns > b.end_ns;
  });
  // Containing: a forward with a backprop starting inside it.
  std::vector<size_t> open;
  for (size_t i = 0; i < intervals.size(); ++i) {
    while (!open.empty() && intervals[open.back()].end_ns <= intervals[i].begin_ns) open.pop_back();
    if (intervals[i].label == labels.backprop) {
      for (size_t index : open) {
        if (intervals[index].label == labels.forward) intervals[index].label = labels.backprop;
      }
    }
    open.push_back(i);
  }
  // Inside: a forward with a backprop open around it.
  open.clear();
  int open_backprop = 0;
  for (Interval& interval : intervals) {
    while (!open.empty() && intervals[open.back()].end_ns <= interval.begin_ns) {
      if (intervals[open.back()].label == labels.backprop) --open_backprop;
      open.pop_back();
    }
    if (interval.label == labels.forward && open_backprop > 0) interval.label = labels.backprop;
    if (interval.label == labels.backprop) ++open_backprop;
    open.push_back(static_cast<size_t>(&interval - intervals.data()));
  }
}

// ResolveBySegment: on the flat timeline, a forward pass before the last
// backprop of its segment (the stretch between two other operations) is
// backprop; any other forward pass is inference.
void ResolveBySegment(IntervalList& flat, const Labels& labels) {
  size_t begin = 0;
  while (begin < flat.size()) {
    size_t end = begin;
    int64_t last_backprop_end = INT64_MIN;
    while (end < flat.size() && (flat[end].label == labels.forward || flat[end].label == labels.backprop)) {
      if (flat[end].label == labels.backprop) last_backprop_end = flat[end].end_ns;
      ++end;
    }
    for (size_t i = begin; i < end; ++i) {
      if (flat[i].label != labels.forward) continue;
      flat[i].label = flat[i].begin_ns < last_backprop_end ? labels.backprop : labels.inference;
    }
    begin = end == begin ? end + 1 : end;
  }
}

// MergeTouching: adjacent intervals with one label become one.
IntervalList MergeTouching(const IntervalList& intervals) {
  IntervalList merged;
  for (const Interval& interval : intervals) {
    if (!merged.empty() && merged.back().label == interval.label && merged.back().end_ns == interval.begin_ns) {
      merged.back().end_ns = interval.end_ns;
    } else {
      merged.push_back(interval);
    }
  }
  return merged;
}

// GlueOwner: whose the glue between operations `before` and `after` is:
// a training step's tail stays backprop; right after an env step, its
// outputs being converted, simulation; around a policy's forward pass
// (observations converted for it, its output turned into an action),
// acting; anything else prepares the operation that follows.
int32_t GlueOwner(int32_t before, int32_t after, const Labels& labels) {
  if (before == labels.reset) return labels.simulation;
  if (before == labels.backprop || before == labels.simulation) return before;
  if (before == labels.inference || after == labels.inference) return labels.inference;
  return after;
}

// OuterCalls: the program's native calls inside no other (NestedCalls), in
// start order. Not those of rlscope's own module: an annotation's calls
// (recorded under sys.monitoring, which sees every callable) must not split
// a run of statements, so what is inferred does not depend on it.
std::vector<const NativeCall*> OuterCalls(const std::vector<NativeCall>& calls, const RlscopeCalls& rlscope) {
  const std::vector<bool> nested = NestedCalls(calls);
  std::vector<const NativeCall*> outer;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (nested[i] || std::binary_search(rlscope.begin(), rlscope.end(), calls[i].location)) continue;
    outer.push_back(&calls[i]);
  }
  // Calls inside no other, recorded as they returned, are mostly in start
  // order already.
  const auto earlier = [](const NativeCall* a, const NativeCall* b) {
    return a->begin_ns != b->begin_ns ? a->begin_ns < b->begin_ns : a->end_ns > b->end_ns;
  };
  if (!std::is_sorted(outer.begin(), outer.end(), earlier)) std::sort(outer.begin(), outer.end(), earlier);
  return outer;
}

// OneRun: whether `a` and then `b` are calls of one statement, the
// line NativeCall::shown_line names; with `max_line_gap` > 0, of
// statements that follow one another in one body (`b` at most that many
// lines after `a`: blank lines and comments between them).
bool OneRun(const NativeCall& a, const NativeCall& b, uint32_t max_line_gap) {
  return a.shown_location() == b.shown_location() && a.shown_line() <= b.shown_line() &&
         b.shown_line() - a.shown_line() <= max_line_gap;
}

// ArgumentsStart: where, in the glue [begin_ns, end_ns), the statement that
// then enters the next operation began: the first of the glue's last native
// calls (outer ones, in start order) made for one and the same line
// (NativeCall::shown_line: `q_network(torch.Tensor(obs).to(device))`
// converts its argument, then calls the network), or with `max_line_gap`
// for consecutive statements (OneRun). end_ns when the glue made no native
// call.
int64_t ArgumentsStart(const std::vector<const NativeCall*>& calls, int64_t begin_ns, int64_t end_ns,
                       uint32_t max_line_gap = 0) {
  auto last = std::lower_bound(calls.begin(), calls.end(), end_ns,
                               [](const NativeCall* call, int64_t time) { return call->begin_ns < time; });
  while (last != calls.begin() && (*std::prev(last))->end_ns > end_ns) --last;  // Spans into the operation.
  if (last == calls.begin() || (*std::prev(last))->begin_ns < begin_ns) return end_ns;
  auto first = std::prev(last);
  while (first != calls.begin() && (*std::prev(first))->begin_ns >= begin_ns &&
         OneRun(**std::prev(first), **first, max_line_gap)) {
    --first;
  }
  return (*first)->begin_ns;
}

// kBatchLineGap: how far apart (in lines) the statements assembling a
// sampled batch may be and still count as one run: one statement a line,
// with a blank line or comment between some.
constexpr uint32_t kBatchLineGap = 3;

// kMaxEnvStepsPerUpdate: the most env steps (per thread, median) between two
// training phases of an off-policy loop. Off-policy loops train every 1-10
// steps (CleanRL's DQN every 10, its TD3 and SAC every step, SB3's DQN every
// 4); PPO collects a rollout of 128-2048 steps first (CleanRL's, SB3's).
// A2C's 5-step rollouts pass: their value bootstrap is a forward pass of
// the training step (ResolveBySegment), so training follows the last env
// step, and the rollout's last stores before it are replay too.
constexpr size_t kMaxEnvStepsPerUpdate = 16;

// TrainsAfterEnvSteps: whether the thread is an off-policy loop written
// inline: its training phases (runs of backprop with only glue between)
// mostly follow an env step directly, with no replay operation a rule found
// between them, every few env steps (kMaxEnvStepsPerUpdate; the upper
// median; simulator calls a rule did not find count as steps too, which
// only makes a frame-skip loop less likely to pass). Its batches
// are then sampled in the glue before each training phase. Not an on-policy
// loop, whose training phase follows a whole rollout.
bool TrainsAfterEnvSteps(const IntervalList& flat, const Labels& labels) {
  size_t phases = 0, steps_since_phase = 0;
  std::vector<size_t> steps_between;  // Env steps before each phase that follows one.
  for (size_t i = 0; i < flat.size(); ++i) {
    const int32_t label = flat[i].label;
    if (labels.IsEnvStep(label)) ++steps_since_phase;
    if (label != labels.backprop || (i > 0 && flat[i - 1].label == labels.backprop)) continue;
    ++phases;
    if (i > 0 && labels.IsEnvStep(flat[i - 1].label)) {
      steps_between.push_back(steps_since_phase);
    }
    steps_since_phase = 0;
  }
  if (steps_between.size() < 2 || 2 * steps_between.size() < phases) return false;
  auto median = steps_between.begin() + static_cast<std::ptrdiff_t>(steps_between.size() / 2);
  std::nth_element(steps_between.begin(), median, steps_between.end());
  return *median <= kMaxEnvStepsPerUpdate;
}

// HandWrittenAgent: what a thread that steps an env has no rule for. A
// thread whose env steps a rule found (not only simulator calls: the
// mj_step calls of one env step are not steps) and that never acts through
// a policy rlscope knows (no inference: a numpy policy, a random one)
// still chooses every action, between its env steps. One that neither
// acts nor trains through anything known (no inference and no backprop:
// numpy by hand) trains between episodes, after one's last step and
// before the next reset; not a thread that acts through a known policy
// and trains nowhere (an evaluation loop, a rollout worker), whose time
// between episodes is no training. Neither for a thread whose glue between
// env steps is mostly waiting, summed over the run: an env worker
// process, blocked on its next command, acts for no one (its learner
// does). Decided for the whole thread, as one glue's share of waiting
// depends on how soon its command came (waits under ~2 us are not
// recorded). A random agent's glue between episodes is taken for
// training: the price of telling a numpy learner by structure alone.
struct HandWrittenAgent {
  bool acts = false;    // Rule-found env steps, no inference anywhere on the thread.
  bool trains = false;  // ... and no backprop either.

  // BetweenEnvSteps: glue from an env step or reset to the next env step.
  static bool BetweenEnvSteps(int32_t before, int32_t after, const Labels& labels) {
    return labels.IsEnvStep(before) && after == labels.simulation;
  }

  // Of: the agent of `thread`, whose resolved operations are `flat`;
  // `rule_steps`: whether a rule found env steps or resets on it.
  static HandWrittenAgent Of(const ThreadTimeline& thread, const IntervalList& flat, bool rule_steps,
                             const Labels& labels) {
    bool acting = false, training = false;
    for (const Interval& interval : flat) {
      acting |= interval.label == labels.inference;
      training |= interval.label == labels.backprop;
    }
    HandWrittenAgent agent{rule_steps && !acting, rule_steps && !acting && !training};
    if (!agent.acts && !agent.trains) return agent;
    IntervalList waits;
    for (const Interval& event : thread.cpu_events) {
      if (event.label == static_cast<int32_t>(Category::kWait)) waits.push_back(event);
    }
    waits = FlattenInnermost(std::move(waits));
    int64_t glue = 0, waited = 0;
    auto wait = waits.begin();
    for (size_t i = 1; i < flat.size(); ++i) {
      if (!BetweenEnvSteps(flat[i - 1].label, flat[i].label, labels)) continue;
      const int64_t begin = flat[i - 1].end_ns, end = flat[i].begin_ns;
      glue += end - begin;
      while (wait != waits.end() && wait->end_ns <= begin) ++wait;
      for (auto in = wait; in != waits.end() && in->begin_ns < end; ++in) {
        waited += std::min(in->end_ns, end) - std::max(in->begin_ns, begin);
      }
    }
    if (2 * waited >= glue && waited > 0) return {};
    return agent;
  }

  // Owner: the operation of the glue between `before` and `after`, or
  // kNoLabel where this agent decides nothing.
  int32_t Owner(int32_t before, int32_t after, const Labels& labels) const {
    if (acts && BetweenEnvSteps(before, after, labels)) return labels.inference;
    if (trains && before == labels.simulation && after == labels.reset) return labels.backprop;
    return kNoLabel;
  }
};

// FillGlue: startup before the first operation, teardown after the last;
// glue between two operations as GlueOwner says, except that where acting
// follows a training step or an env step, the statement that acts is
// acting's from its first native call on (its argument converted:
// ArgumentsStart), not the step's, and that a hand-written agent's acting
// and training are its own (HandWrittenAgent). Not for the other pairs:
// measured on the accuracy corpus, the same split before env steps, replay
// and training cost up to 23 points (own_hierarchy_algo), where before
// acting it gained on 9 of 13 programs and cost none. Decided on the
// inferred operations alone: explicit ones are not looked at, so what is
// inferred for a program does not depend on whether parts of it are
// annotated (they win where open, in the report). Glue a hand-written agent
// owns is one instance of its operation. In an off-policy loop written
// inline (TrainsAfterEnvSteps), the statements that end the glue from an
// env step to a training step, from their first native call on, sample the
// training step's batch (`idx = np.random.randint(...)`, a tensor of each
// field): replay, one instance each time.
IntervalList FillGlue(const IntervalList& flat, ThreadTimeline& thread, bool rule_steps, const Labels& labels,
                      const RlscopeCalls& rlscope) {
  std::optional<std::vector<const NativeCall*>> outer_calls;  // Made when first needed.
  const HandWrittenAgent agent = HandWrittenAgent::Of(thread, flat, rule_steps, labels);
  const bool samples_inline = TrainsAfterEnvSteps(flat, labels);
  IntervalList filled;
  filled.reserve(flat.size() * 2 + 2);
  if (flat.front().begin_ns > thread.begin_ns)
    filled.push_back({thread.begin_ns, flat.front().begin_ns, labels.startup});
  for (size_t i = 0; i < flat.size(); ++i) {
    if (i > 0 && flat[i - 1].end_ns < flat[i].begin_ns) {
      const int64_t begin = flat[i - 1].end_ns, end = flat[i].begin_ns;
      const int32_t before = flat[i - 1].label, after = flat[i].label;
      if (const int32_t owner = agent.Owner(before, after, labels); owner != kNoLabel) {
        filled.push_back({begin, end, owner});
        AddInstance(thread, owner, begin);
        filled.push_back(flat[i]);
        continue;
      }
      const bool after_env_step = labels.IsEnvStep(before);
      int64_t split = end;
      int32_t tail = after;
      if ((before == labels.backprop || after_env_step) && after == labels.inference) {
        if (!outer_calls) outer_calls = OuterCalls(thread.native_calls, rlscope);
        split = ArgumentsStart(*outer_calls, begin, end);
      } else if (samples_inline && after_env_step && after == labels.backprop) {
        if (!outer_calls) outer_calls = OuterCalls(thread.native_calls, rlscope);
        split = ArgumentsStart(*outer_calls, begin, end, kBatchLineGap);
        tail = labels.replay;
        if (split < end) AddInstance(thread, labels.replay, split);
      }
      if (split > begin) filled.push_back({begin, split, GlueOwner(before, after, labels)});
      if (split < end) filled.push_back({split, end, tail});
    }
    filled.push_back(flat[i]);
  }
  if (flat.back().end_ns < thread.end_ns) filled.push_back({flat.back().end_ns, thread.end_ns, labels.teardown});
  // A reset is simulation from here on.
  for (Interval& interval : filled) {
    if (interval.label == labels.reset) interval.label = labels.simulation;
  }
  return MergeTouching(filled);
}

// SimulatorTime: where the thread ran simulator code (hooked simulator
// calls, native calls into simulator libraries), as simulation intervals.
IntervalList SimulatorTime(const ThreadTimeline& thread, const Labels& labels) {
  IntervalList simulator;
  for (const Interval& event : thread.cpu_events) {
    if (event.label == static_cast<int32_t>(Category::kSimulator)) {
      simulator.push_back({event.begin_ns, event.end_ns, labels.simulation});
    }
  }
  for (const NativeCall& call : thread.native_calls) {
    if (call.category == Category::kSimulator) simulator.push_back({call.begin_ns, call.end_ns, labels.simulation});
  }
  return simulator;
}

// AddWhereUncovered: `flat` (sorted, disjoint) plus the parts of `extra`
// no interval of it covers.
IntervalList AddWhereUncovered(const IntervalList& flat, IntervalList extra) {
  if (extra.empty()) return flat;
  constexpr int32_t kCovered = -2;
  IntervalList covered = flat;
  for (Interval& interval : covered) interval.label = kCovered;
  const std::array<IntervalList, 2> streams = {std::move(covered), FlattenInnermost(std::move(extra))};
  IntervalList result = flat;
  SweepStreams(streams, [&](int64_t begin_ns, int64_t end_ns, std::span<const int32_t> open) {
    if (open[0] == kNoLabel && open[1] != kNoLabel) result.push_back({begin_ns, end_ns, open[1]});
  });
  std::sort(result.begin(), result.end(), [](const Interval& a, const Interval& b) { return a.begin_ns < b.begin_ns; });
  return result;
}

// TopLevel: the intervals of `nested` inside no other, in time order
// (disjoint): each is one call of a rule's function with what it called.
IntervalList TopLevel(IntervalList nested) {
  std::sort(nested.begin(), nested.end(), [](const Interval& a, const Interval& b) {
    return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.end_ns > b.end_ns;
  });
  IntervalList top;
  for (const Interval& interval : nested) {
    if (top.empty() || interval.begin_ns >= top.back().end_ns) {
      top.push_back(interval);
    } else {
      top.back().end_ns = std::max(top.back().end_ns, interval.end_ns);  // Overlapping, not nested: one call.
    }
  }
  return top;
}

// AncestorOf: the index in `top` (TopLevel) of the interval holding
// `time_ns`, or -1 (time no rule's call covers: simulator code).
int AncestorOf(const IntervalList& top, int64_t time_ns) { return static_cast<int>(IndexAt(top, time_ns)); }

// DropHiddenInstances: the inferred instances from `first` on that begin
// where an explicit operation is open are not counted: the explicit one
// wins the timeline there (operation_timeline.h), and counts itself, so an
// annotated `with rlscope.operation("simulation"): env.step(a)` is one
// instance, not two.
void DropHiddenInstances(ThreadTimeline& thread, size_t first) {
  if (thread.operations.empty() || first >= thread.instance_starts.size()) return;
  const IntervalList cover = UnionIntervals(thread.operations);
  thread.instance_starts.erase(
      std::remove_if(thread.instance_starts.begin() + static_cast<std::ptrdiff_t>(first), thread.instance_starts.end(),
                     [&](const Interval& start) { return Covers(cover, start.begin_ns); }),
      thread.instance_starts.end());
  // The counts are the starts' (AddInstance keeps both).
  thread.operation_instances.clear();
  for (const Interval& start : thread.instance_starts) ++thread.operation_instances[start.label];
}

void ResolveThread(ThreadTimeline& thread, const Labels& labels, const RlscopeCalls& rlscope) {
  const size_t first_inferred = thread.instance_starts.size();  // Explicit ones come counted from decoding.
  IntervalList& inferred = thread.inferred_operations;
  ResolveByNesting(inferred, labels);
  const IntervalList top = TopLevel(inferred);
  IntervalList flat = FlattenInnermost(std::move(inferred));
  ResolveBySegment(flat, labels);
  const bool rule_steps =
      std::any_of(flat.begin(), flat.end(), [&](const Interval& interval) { return labels.IsEnvStep(interval.label); });
  // Simulator code is simulation wherever no rule said otherwise (a
  // MuJoCo loop whose env class no rule knows).
  flat = MergeTouching(AddWhereUncovered(flat, SimulatorTime(thread, labels)));
  if (flat.empty()) {
    inferred.clear();
    return;
  }
  // One instance per entry. A piece continues the instance of the last
  // piece of its operation when both are inside one call of that
  // operation's function (an update() that samples a buffer, then trains,
  // is one training step, not two; env steps inside a train() that runs
  // the whole loop stay one each); and a training step's pieces (its
  // forward passes, backward, optimizer step) separated only by glue are
  // one.
  const auto as_instance = [&](int32_t label) { return label == labels.reset ? labels.simulation : label; };
  std::map<int32_t, int> last_ancestor;  // Operation -> the ancestor of its last piece.
  for (size_t i = 0; i < flat.size(); ++i) {
    const int32_t operation = as_instance(flat[i].label);
    int ancestor = AncestorOf(top, flat[i].begin_ns);
    if (ancestor >= 0 && as_instance(top[static_cast<size_t>(ancestor)].label) != operation) ancestor = -1;
    const auto last = last_ancestor.find(operation);
    const bool same_call = ancestor >= 0 && last != last_ancestor.end() && last->second == ancestor;
    last_ancestor[operation] = ancestor;
    if (same_call) continue;
    if (i > 0 && flat[i].label == labels.backprop && flat[i - 1].label == labels.backprop) continue;
    AddInstance(thread, operation, flat[i].begin_ns);
  }
  inferred = FillGlue(flat, thread, rule_steps, labels, rlscope);
  DropHiddenInstances(thread, first_inferred);
}

// RlscopeCallsOf: the calling locations of the process's native calls
// that are in rlscope's own Python module (CodeOrigin's package "rlscope").
RlscopeCalls RlscopeCallsOf(const ProcessTimeline& process, const NameTable& names) {
  // Labels are dense: one flag per name, not a sort of every call's label.
  std::vector<bool> seen(names.size(), false);
  RlscopeCalls locations;
  for (const ThreadTimeline& thread : process.threads) {
    for (const NativeCall& call : thread.native_calls) {
      if (call.location < 0 || static_cast<size_t>(call.location) >= names.size() || seen[call.location]) continue;
      seen[call.location] = true;
      const CodeOrigin origin = OriginOfPath(SplitCodeLocation(names.Name(call.location)).file);
      if (origin.kind == CodeOrigin::Kind::kPackage && origin.package == "rlscope") locations.push_back(call.location);
    }
  }
  std::sort(locations.begin(), locations.end());  // Searched with binary_search.
  return locations;
}

}  // namespace

bool IsCompilerHelper(const std::string& executable) {
  std::string_view name = executable;
  if (size_t slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
  for (std::string_view helper : {"ptxas", "nvlink", "fatbinary", "cicc", "nvcc", "cudafe++", "nvdisasm"}) {
    if (name == helper) return true;
  }
  return false;
}

void ResolveInferredOperations(ProcessTimeline& process, NameTable& names) {
  const Labels labels{names.Intern(kForwardCandidate), names.Intern(kResetCandidate), names.Intern("backprop"),
                      names.Intern("inference"),       names.Intern("simulation"),    names.Intern("replay"),
                      names.Intern("startup"),         names.Intern("teardown"),      names.Intern("compile")};
  if (IsCompilerHelper(process.executable)) {
    for (ThreadTimeline& thread : process.threads) {
      thread.inferred_operations.clear();
      if (thread.end_ns <= thread.begin_ns) continue;
      thread.inferred_operations.push_back({thread.begin_ns, thread.end_ns, labels.compile});
      AddInstance(thread, labels.compile, thread.begin_ns);
    }
    return;
  }
  const RlscopeCalls rlscope = RlscopeCallsOf(process, names);
  for (ThreadTimeline& thread : process.threads) ResolveThread(thread, labels, rlscope);
}

}  // namespace rlscope::report
