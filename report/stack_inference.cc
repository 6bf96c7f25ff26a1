#include "report/stack_inference.h"

#include <algorithm>

#include "format/code_origin.h"
#include "report/category.h"

namespace rlscope::report {

void StackSamples::Begin(int64_t time_ns, uint32_t frame_count, uint64_t first_frame) {
  samples_.push_back({time_ns, static_cast<uint32_t>(frames_.size()), 0});
  expected_ = frame_count;
  More({first_frame});
}

void StackSamples::More(std::initializer_list<uint64_t> frames) {
  if (samples_.empty()) return;
  for (uint64_t frame : frames) {
    if (expected_ == 0) break;  // Padding of the last record.
    frames_.push_back(frame);
    ++samples_.back().frame_count;
    --expected_;
  }
}

int32_t StackInference::OperationOf(const StackSamples& samples, const StackSamples::Sample& sample) {
  // Outermost frame first, as the operations would have opened: a rule
  // whose unless-inside names an operation already open is skipped (a
  // network's forward inside an update is backprop); the innermost
  // operation left wins.
  std::vector<const std::string*> open;
  int32_t innermost = kNoLabel;
  for (uint32_t i = sample.frame_count; i-- > 0;) {
    // A return address points after its call: look up the byte before it.
    const uint64_t address = samples.frames()[sample.first_frame + i] - 1;
    const ModuleMap::Range* module = modules_.Find(address);
    if (module == nullptr) continue;
    // Operations are the program's structure, not its ML backend's: torch's
    // autograd engine runs torch::autograd::InputBuffer::add, which a
    // replay rule (*Buffer.add) would otherwise take for the program's.
    if (classifier_ != nullptr && classifier_->Classify(module->path) == Category::kBackend) continue;
    const std::string& name = symbolizer_.RuleName(module->path, module->load_bias, address);
    if (name.empty()) continue;
    std::string dotted_module;  // The shared object's (module=), computed when a rule asks.
    for (const OperationRule& rule : rules_) {
      // class= and user-code describe Python code: such rules never match native frames.
      if (!rule.class_glob.empty() || rule.user_code_only) continue;
      if (!rule.qualname_glob.Matches(name)) continue;
      if (!rule.module_glob.empty() && dotted_module.empty()) dotted_module = ModuleOfPath(module->path);
      if (!MatchesLocation(rule, module->path.c_str(), dotted_module.c_str())) continue;
      const bool suppressed = std::any_of(open.begin(), open.end(), [&](const std::string* operation) {
        return std::find(rule.unless_inside.begin(), rule.unless_inside.end(), *operation) != rule.unless_inside.end();
      });
      if (suppressed) continue;
      open.push_back(&rule.operation);
      innermost = names_.Intern(rule.operation);
      break;
    }
  }
  return innermost;
}

void StackInference::Infer(const StackSamples& samples, int64_t begin_ns, int64_t end_ns, IntervalList& inferred) {
  const std::vector<StackSamples::Sample>& all = samples.samples();
  std::vector<int32_t> operations;
  operations.reserve(all.size());
  for (const StackSamples::Sample& sample : all) operations.push_back(OperationOf(samples, sample));
  // Each sample speaks for the time around it: from the midpoint with the
  // previous sample to the midpoint with the next, at most
  // kMaxSampleHoldNs / 2 either side.
  for (size_t i = 0; i < all.size(); ++i) {
    if (operations[i] == kNoLabel) continue;
    const int64_t time = all[i].time_ns;
    const int64_t half_hold = kMaxSampleHoldNs / 2;
    const int64_t previous = i > 0 ? (all[i - 1].time_ns + time) / 2 : time - half_hold;
    const int64_t next = i + 1 < all.size() ? (time + all[i + 1].time_ns) / 2 : time + half_hold;
    const int64_t begin = std::max({previous, time - half_hold, begin_ns});
    const int64_t end = std::min({next, time + half_hold, end_ns});
    if (end <= begin) continue;
    // A run of samples in one operation is one instance of it.
    if (!inferred.empty() && inferred.back().label == operations[i] && inferred.back().end_ns == begin) {
      inferred.back().end_ns = end;
    } else {
      inferred.push_back({begin, end, operations[i]});  // Counted once resolved.
    }
  }
}

}  // namespace rlscope::report
