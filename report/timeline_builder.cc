#include "report/timeline_builder.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_format.h"
#include "format/code_origin.h"
#include "report/category.h"
#include "report/demangle.h"
#include "report/flatten.h"
#include "report/hooked_communication.h"
#include "report/idle_waits.h"
#include "report/operation_inference.h"
#include "report/source_lines.h"

namespace rlscope::report {

void TimelineBuilder::AddFrame(const wire::Frame& frame) {
  switch (frame.message_type()) {
    case wire::Message::Hello: AddHello(*frame.message_as_Hello()); break;
    case wire::Message::Batch: AddBatch(*frame.message_as_Batch()); break;
    case wire::Message::Goodbye: {
      const wire::Goodbye& goodbye = *frame.message_as_Goodbye();
      goodbye_ns_ = goodbye.end_ns();
      process_.ended_cleanly = true;
      process_.recorded_events = goodbye.recorded_events();
      process_.dropped_events = goodbye.dropped_events();
      break;
    }
    default: break;
  }
}

namespace {

// Plausible: whether an interval can be real. Timestamps of damaged data
// can be anything; beyond these bounds (146 years since the clock's epoch,
// a 13-day record) the sums and differences of the analysis would overflow.
bool Plausible(int64_t begin_ns, int64_t end_ns) {
  constexpr int64_t kMaxTimestampNs = int64_t{1} << 62, kMaxDurationNs = int64_t{1} << 50;
  return begin_ns >= 0 && begin_ns < kMaxTimestampNs && end_ns >= 0 && end_ns < kMaxTimestampNs &&
         end_ns - begin_ns <= kMaxDurationNs;
}

}  // namespace

void TimelineBuilder::AddHello(const wire::Hello& hello) {
  saw_hello_ = true;
  process_.pid = hello.pid();
  process_.ppid = hello.ppid();
  process_.forked_from = hello.forked_from();
  process_.begin_ns = hello.start_ns();
  process_.begin_unix_ns = hello.start_unix_ns();
  process_.proc_start_ticks = hello.proc_start_ticks();
  if (hello.continues_stream()) {
    process_.continues_stream = true;
    process_.reconnections = 1;
    process_.reconnection_lost_events = hello.lost_before_events();
  }
  if (hello.capture_closed_at_start()) process_.capture_edges.push_back({hello.start_ns(), hello.start_ns(), 0});
  if (hello.executable() != nullptr) process_.executable = hello.executable()->str();
  if (hello.launcher() != nullptr && hello.launcher()->size() > 0) {
    process_.rank = {hello.launcher()->str(), hello.launcher_rank(), hello.launcher_world_size(),
                     hello.launcher_local_rank()};
  }
  if (hello.argv() != nullptr) {
    for (const auto* arg : *hello.argv()) process_.argv.push_back(arg->str());
  }
}

void TimelineBuilder::AddBatch(const wire::Batch& batch) {
  // The batch's window: hook work counted in it happened since the last
  // cut. The frames of one flush share its cut (a flush larger than a
  // frame is sent as several), and so its window.
  if (batch.flushed_ns() != window_end_ns_ || last_flush_ns_ == INT64_MIN) {
    window_begin_ns_ = last_flush_ns_ != INT64_MIN ? last_flush_ns_ : process_.begin_ns;
    window_end_ns_ = batch.flushed_ns();
  }
  last_flush_ns_ = std::max(last_flush_ns_, batch.flushed_ns());
  if (batch.strings() != nullptr) {
    for (const wire::StringDef* def : *batch.strings()) {
      strings_[def->id()] = def->text() != nullptr ? def->text()->str() : std::string();
    }
  }
  if (batch.modules() != nullptr) {
    // Each list is every module loaded then. One the previous list had
    // (loaded modules do not overlap) would change no lookup: only the
    // new ones are added, so the map grows with the modules, not with
    // the lists.
    std::set<ModuleKey> listed;
    for (const wire::Module* module : *batch.modules()) {
      ModuleKey key{module->path() != nullptr ? module->path()->str() : "?", module->begin(), module->end(),
                    module->load_bias()};
      if (!last_modules_.contains(key))
        modules_.Add(std::get<0>(key), module->begin(), module->end(), module->load_bias());
      listed.insert(std::move(key));
    }
    last_modules_ = std::move(listed);
  }
  if (batch.thread_infos() != nullptr) {
    for (const wire::ThreadInfo* info : *batch.thread_infos()) {
      if (info->name() != nullptr) process_.threads[Thread(info->tid(), info->instance())].name = info->name()->str();
    }
  }
  if (batch.threads() != nullptr) {
    for (const wire::ThreadEvents* events : *batch.threads()) AddEvents(*events);
  }
  if (batch.gpu_activities() != nullptr) {
    for (const wire::GpuActivity* activity : *batch.gpu_activities()) AddGpuActivity(*activity);
  }
  // Calls that waited for a string or module may find it in this batch.
  const bool news = (batch.modules() != nullptr && batch.modules()->size() > 0) ||
                    (batch.strings() != nullptr && batch.strings()->size() > 0);
  for (size_t index = 0; index < thread_states_.size(); ++index) {
    ThreadState& state = thread_states_[index];
    if (news && !state.deferred_calls.empty()) PlaceDeferredCalls(process_.threads[index], state, /*final=*/false);
    if (!state.native_calls.empty()) ClassifyNativeCalls(process_.threads[index], state);
  }
  process_.gpu_dropped += batch.gpu_dropped();
  if (batch.capture_edges() != nullptr) {
    for (const wire::CaptureEdge* edge : *batch.capture_edges()) {
      if (!Plausible(edge->time_ns(), edge->time_ns())) continue;
      process_.capture_edges.push_back({edge->time_ns(), edge->time_ns(), edge->open() != 0 ? 1 : 0});
    }
  }
  if (batch.notices() != nullptr) {
    for (const wire::Notice* notice : *batch.notices()) {
      auto text = [](const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); };
      process_.notices.push_back({text(notice->topic()), text(notice->status()), text(notice->message())});
    }
  }
}

void TimelineBuilder::AddGpuActivity(const wire::GpuActivity& activity) {
  const int64_t begin = activity.begin_ns();
  const int64_t end = std::max(activity.end_ns(), begin);
  if (!Plausible(begin, end)) {
    ++implausible_events_;
    return;
  }
  switch (static_cast<wire::GpuActivityKind>(activity.kind())) {
    case wire::GpuActivityKind::kKernel:
    case wire::GpuActivityKind::kMemcpy:
    case wire::GpuActivityKind::kMemset: {
      GpuActivity decoded;
      decoded.begin_ns = begin;
      decoded.end_ns = end;
      decoded.kind = static_cast<GpuActivityKind>(activity.kind());
      decoded.device = activity.device_id();
      decoded.stream = activity.stream_id();
      decoded.correlation_id = activity.correlation_id();
      decoded.bytes = activity.bytes();
      process_.gpu_activities.push_back(decoded);
      gpu_raw_names_.emplace_back(activity.name_id(), activity.detail());
      break;
    }
    case wire::GpuActivityKind::kCuptiOverhead: process_.cupti_overhead_ns += end - begin; break;
    default: ++unknown_events_; break;
  }
}

namespace {

// CUpti_ActivityMemcpyKind's values (cupti_activity.h; the report is built
// without CUDA headers): HtoD = host to device, A = CUDA array, P = peer.
const char* MemcpyKindName(uint8_t kind) {
  static constexpr const char* kNames[] = {"?",    "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                           "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
  return kind < std::size(kNames) ? kNames[kind] : "?";
}

}  // namespace

int32_t TimelineBuilder::GpuActivityName(GpuActivityKind kind, uint32_t name_id, uint8_t detail) {
  const uint64_t key = (uint64_t{static_cast<uint8_t>(kind)} << 40) | (uint64_t{detail} << 32) | name_id;
  auto [it, inserted] = gpu_activity_labels_.try_emplace(key, 0);
  if (inserted) it->second = NewGpuActivityName(kind, name_id, detail);
  return it->second;
}

int32_t TimelineBuilder::NewGpuActivityName(GpuActivityKind kind, uint32_t name_id, uint8_t detail) {
  switch (kind) {
    case GpuActivityKind::kKernel:
      return names_.Intern(name_id != 0 ? Demangle(StringOf(name_id)) : "(unnamed kernel)");
    case GpuActivityKind::kMemcpy: return names_.Intern(absl::StrFormat("Memcpy %s", MemcpyKindName(detail)));
    case GpuActivityKind::kMemset: return names_.Intern("Memset");
  }
  return names_.Intern("?");
}

size_t TimelineBuilder::Thread(uint32_t tid, uint64_t instance) {
  // Streams without instances (instance 0) can only tell threads by tid.
  const uint64_t key = instance != 0 ? instance : (uint64_t{1} << 63) | tid;
  auto [it, inserted] = thread_index_.try_emplace(key, process_.threads.size());
  if (inserted) {
    process_.threads.push_back({});
    process_.threads.back().tid = tid;
    process_.threads.back().instance = instance;
    thread_states_.emplace_back();
  }
  return it->second;
}

void TimelineBuilder::AddEvents(const wire::ThreadEvents& events) {
  const size_t index = Thread(events.tid(), events.instance());
  ThreadTimeline& thread = process_.threads[index];
  ThreadState& state = thread_states_[index];
  thread.dropped += events.dropped();
  if (collect_overhead_ && events.overhead() != nullptr) {
    for (const wire::HookOverhead* overhead : *events.overhead()) {
      thread.overhead_windows.push_back({window_begin_ns_, std::max(window_end_ns_, window_begin_ns_), overhead->kind(),
                                         overhead->count(), static_cast<int64_t>(overhead->self_ns())});
    }
  }
  if (events.events() == nullptr) return;
  thread.events += events.events()->size();
  for (const wire::Event* event : *events.events()) {
    const int64_t begin = event->begin_ns();
    const int64_t end = std::max(event->end_ns(), begin);  // Never trust a reversed interval.
    if (!Plausible(begin, end)) {
      ++implausible_events_;
      continue;
    }
    if (event->kind() == static_cast<uint16_t>(wire::EventKind::kThreadIdle)) {
      // Seen from outside the thread (the flusher): no sign of its own
      // life, and no record it made (thread.events counts those).
      state.idle_spans.push_back({begin, end, 0});
      --thread.events;
      continue;
    }
    if (event->kind() == static_cast<uint16_t>(wire::EventKind::kThreadCpuWait)) {
      // Seen from outside the thread too (the flusher's schedstat reading).
      thread.cpu_waits.push_back({begin, end, wire::CpuWaitRanNs(event->payload()),
                                  wire::CpuWaitWaitedNs(event->payload()), event->name_id()});
      --thread.events;
      continue;
    }
    if (event->kind() == static_cast<uint16_t>(wire::EventKind::kRecordsLost)) {
      // Made by the ring, not the thread: no record it made, and the hole
      // begins at the thread's last event before it.
      OnRecordsLost(thread, state, state.last_ns != INT64_MIN ? state.last_ns : begin);
      state.lost_marked += event->payload();
      --thread.events;
      continue;
    }
    if (event->kind() != static_cast<uint16_t>(wire::EventKind::kNativeStackFrames)) {
      state.first_ns = std::min(state.first_ns, begin);
      state.last_ns = std::max(state.last_ns, end);
    }
    switch (static_cast<wire::EventKind>(event->kind())) {
      case wire::EventKind::kCudaApi:
      case wire::EventKind::kCuptiApi: OnCudaCall(thread, *event, begin, end); break;
      case wire::EventKind::kOperationPush: OnOperationPush(thread, state, *event, begin); break;
      case wire::EventKind::kOperationPop: OnOperationPop(thread, state, *event, begin); break;
      case wire::EventKind::kRangeStart:
      case wire::EventKind::kRangeEnd: OnRange(index, state, *event, begin); break;
      case wire::EventKind::kPythonCall:
      case wire::EventKind::kPythonUserLine:
      case wire::EventKind::kPythonWait:
      case wire::EventKind::kPythonFrame:
      case wire::EventKind::kPythonThread:
      case wire::EventKind::kPythonHookReplaced: OnPython(thread, state, *event, begin, end); break;
      case wire::EventKind::kSimulatorCall:
      case wire::EventKind::kBackendCall:
      case wire::EventKind::kCommunicationCall:
      case wire::EventKind::kProfilerOverhead: OnTimedCall(thread, *event, begin, end); break;
      case wire::EventKind::kNativeStack:
      case wire::EventKind::kNativeStackFrames: OnStackSample(thread, state, *event, begin, end); break;
      case wire::EventKind::kThreadBegin:
      case wire::EventKind::kThreadEnd:
      case wire::EventKind::kChildProcess: OnLifecycle(thread, state, *event, begin); break;
      default:
        ++unknown_events_;  // From a newer minor version: skipped, not fatal.
        break;
    }
  }
  last_event_ns_ = std::max(last_event_ns_, state.last_ns);
}

void TimelineBuilder::OnCudaCall(ThreadTimeline& thread, const wire::Event& event, int64_t begin, int64_t end) {
  if (static_cast<wire::EventKind>(event.kind()) == wire::EventKind::kCudaApi) {
    thread.cpu_events.push_back({begin, end, static_cast<int32_t>(Category::kCudaApi)});
    // Named (a raw string id until Finish), so the correction can tell the
    // calls that wait for the GPU (RestoreWaits, overhead_correction.cc).
    AddSite(thread, {begin, end, OverheadSiteKind::kCudaHook, false, static_cast<int32_t>(event.name_id())});
    ++thread.cuda_api_calls;
    return;
  }
  // CUPTI's view. Calls a runtime hook timed already, and driver calls
  // nested in a runtime call, add no CPU time; all of them lead to their
  // GPU work.
  if ((event.flags() & (wire::kCuptiSeenByInterposer | wire::kCuptiNested)) == 0) {
    thread.cpu_events.push_back({begin, end, static_cast<int32_t>(Category::kCudaApi)});
    ++thread.cuda_api_calls;
  }
  // The api name is a raw string id until Finish names it.
  thread.gpu_launches.push_back({begin, static_cast<uint32_t>(event.payload()),
                                 (event.flags() & wire::kCuptiNested) != 0, static_cast<int32_t>(event.name_id()),
                                 kOperationUndecided, end});
  // CUPTI's callbacks inflate the call; a nested driver call's share is
  // part of its runtime call's (calibrated together).
  if ((event.flags() & wire::kCuptiNested) == 0) {
    AddSite(thread, {begin, end, OverheadSiteKind::kCupti, (event.flags() & wire::kCuptiDriverApi) != 0,
                     static_cast<int32_t>(event.name_id())});
  }
}

void TimelineBuilder::OnOperationPush(ThreadTimeline& thread, ThreadState& state, const wire::Event& event,
                                      int64_t begin) {
  // An instance begins unless the same operation is already open.
  // Inferred operations are counted once resolved (operation_inference.h).
  const uint32_t name = event.name_id();
  const auto source = static_cast<wire::OperationSource>(event.flags());
  if (source != wire::OperationSource::kInferred &&
      std::none_of(state.open.begin(), state.open.end(),
                   [&](const OpenOperation& open) { return open.name_id == name; })) {
    state.instance_starts.push_back({begin, name});
  }
  state.open.push_back({begin, name, source == wire::OperationSource::kInferred,
                        source == wire::OperationSource::kPythonApi ? event.payload() : 0, source});
  AddOperationSite(thread, source, begin);
}

void TimelineBuilder::OnOperationPop(ThreadTimeline& thread, ThreadState& state, const wire::Event& event,
                                     int64_t begin) {
  // A token names the operation to close; without one, the innermost
  // without a token (an inferred or NVTX pop never closes an
  // rlscope.operation: those do not nest with them, e.g. in interleaved
  // asyncio tasks, and after lost records its own push may be gone).
  auto open = state.open.end();
  if (event.payload() != 0) {
    open = std::find_if(state.open.begin(), state.open.end(),
                        [&](const OpenOperation& o) { return o.token == event.payload(); });
  } else {
    auto untokened =
        std::find_if(state.open.rbegin(), state.open.rend(), [](const OpenOperation& o) { return o.token == 0; });
    if (untokened != state.open.rend()) open = std::prev(untokened.base());
  }
  if (open == state.open.end()) {
    if (!state.lost_records) ++unbalanced_pops_;  // Else its push was lost: said as dropped events.
    return;
  }
  AddOperationSite(thread, open->source, begin);
  CloseOperation(thread, *open, begin);
  state.open.erase(open);
}

void TimelineBuilder::CloseOperation(ThreadTimeline& thread, const OpenOperation& open, int64_t end_ns) {
  (open.inferred ? thread.inferred_operations : thread.operations)
      .push_back({open.begin_ns, end_ns, static_cast<int32_t>(open.name_id)});
}

void TimelineBuilder::OnRecordsLost(ThreadTimeline& thread, ThreadState& state, int64_t hole_ns) {
  state.lost_records = true;
  state.stacks.Interrupt();
  std::vector<OpenOperation> kept;
  for (OpenOperation& open : state.open) {
    if (open.token != 0) {
      if (!open.before_hole) open.before_hole = true, open.hole_ns = hole_ns;
      kept.push_back(open);
      continue;
    }
    CloseOperation(thread, open, std::max(open.begin_ns, hole_ns));
  }
  state.open = std::move(kept);
}

void TimelineBuilder::OnRange(size_t index, ThreadState& state, const wire::Event& event, int64_t begin) {
  ThreadTimeline& thread = process_.threads[index];
  AddSite(thread, {begin, begin, OverheadSiteKind::kNvtxRange});
  if (static_cast<wire::EventKind>(event.kind()) == wire::EventKind::kRangeStart) {
    open_ranges_[event.payload()] = {index, begin, event.name_id()};
    state.instance_starts.push_back({begin, event.name_id()});
    return;
  }
  auto it = open_ranges_.find(event.payload());
  if (it == open_ranges_.end()) {
    ++unmatched_range_ends_;
    return;
  }
  // A range belongs to the thread that started it.
  process_.threads[it->second.thread].operations.push_back(
      {it->second.begin_ns, begin, static_cast<int32_t>(it->second.name_id)});
  open_ranges_.erase(it);
}

void TimelineBuilder::OnPython(ThreadTimeline& thread, ThreadState& state, const wire::Event& event, int64_t begin,
                               int64_t end) {
  switch (static_cast<wire::EventKind>(event.kind())) {
    case wire::EventKind::kPythonCall:
      state.native_calls.push_back({begin, end, event.payload(), event.name_id(), event.flags()});
      AddSite(thread, {begin, end, OverheadSiteKind::kPythonTransition});
      break;
    case wire::EventKind::kPythonUserLine:
      state.user_lines.push_back({begin, event.name_id(), event.flags()});
      // An instant record like an inferred operation's push: its cost too.
      AddSite(thread, {begin, begin, OverheadSiteKind::kPythonOperation});
      break;
    case wire::EventKind::kPythonWait:
      // Blocked, not working: its own category, not a native call (the
      // lines table and launch placement are about work).
      thread.cpu_events.push_back({begin, end, static_cast<int32_t>(Category::kWait)});
      AddSite(thread, {begin, end, OverheadSiteKind::kPythonTransition});
      break;
    case wire::EventKind::kPythonFrame:
      thread.cpu_events.push_back({begin, end, static_cast<int32_t>(Category::kPython)});
      break;
    case wire::EventKind::kPythonThread: thread.python = true; break;
    default: ++hook_replacements_; break;  // kPythonHookReplaced.
  }
}

void TimelineBuilder::OnTimedCall(ThreadTimeline& thread, const wire::Event& event, int64_t begin, int64_t end) {
  switch (static_cast<wire::EventKind>(event.kind())) {
    case wire::EventKind::kSimulatorCall:
      thread.cpu_events.push_back({begin, end, static_cast<int32_t>(Category::kSimulator)});
      AddSite(thread, {begin, end, OverheadSiteKind::kTrampoline});
      break;
    case wire::EventKind::kBackendCall:
      thread.cpu_events.push_back({begin, end, static_cast<int32_t>(Category::kBackend)});
      AddSite(thread, {begin, end, OverheadSiteKind::kTrampoline});
      break;
    case wire::EventKind::kCommunicationCall:
      thread.cpu_events.push_back({begin, end, static_cast<int32_t>(Category::kCommunication)});
      AddSite(thread, {begin, end, OverheadSiteKind::kTrampoline});
      // Its function's string may come later: sorted out at the end.
      thread.hooked_collectives.push_back({begin, end, static_cast<int32_t>(event.name_id())});
      break;
    default:  // kProfilerOverhead: rlscope's own time, timed by itself.
      thread.cpu_events.push_back({begin, end, static_cast<int32_t>(Category::kProfiler)});
      AddSite(thread, {begin, end, OverheadSiteKind::kMeasured});
      break;
  }
}

void TimelineBuilder::OnStackSample(ThreadTimeline& thread, ThreadState& state, const wire::Event& event, int64_t begin,
                                    int64_t end) {
  if (static_cast<wire::EventKind>(event.kind()) == wire::EventKind::kNativeStack) {
    if (end > begin) AddSite(thread, {begin, end, OverheadSiteKind::kMeasured});
    state.stacks.Begin(begin, event.name_id(), event.payload());
    return;
  }
  // kNativeStackFrames: raw addresses, not times (unclamped).
  state.stacks.More({static_cast<uint64_t>(event.begin_ns()), static_cast<uint64_t>(event.end_ns()), event.payload()});
}

void TimelineBuilder::OnLifecycle(ThreadTimeline& thread, ThreadState& state, const wire::Event& event, int64_t begin) {
  switch (static_cast<wire::EventKind>(event.kind())) {
    case wire::EventKind::kThreadBegin:
      state.saw_begin = true;
      thread.begin_ns = begin;
      break;
    case wire::EventKind::kThreadEnd:
      state.saw_end = true;
      thread.end_ns = begin;
      break;
    default: {  // kChildProcess. Finish names the program (its string may come in a later batch).
      const uint16_t how = std::min<uint16_t>(event.flags(), static_cast<uint16_t>(wire::ChildStart::kExecFailed));
      process_.children.push_back({static_cast<int>(event.payload()), static_cast<ChildStartKind>(how), "", begin});
      child_program_ids_.push_back(event.name_id());
      break;
    }
  }
}

void TimelineBuilder::AddOperationSite(ThreadTimeline& thread, wire::OperationSource source, int64_t time_ns) {
  if (!collect_overhead_) return;
  // rlscope.operation() costs the program about what its own Python does;
  // only the hook-made boundaries are rlscope's.
  if (source == wire::OperationSource::kInferred) {
    AddSite(thread, {time_ns, time_ns, OverheadSiteKind::kPythonOperation});
  } else if (source == wire::OperationSource::kNvtx) {
    AddSite(thread, {time_ns, time_ns, OverheadSiteKind::kNvtxRange});
  }
}

int32_t TimelineBuilder::OperationLabel(uint32_t name_id) {
  auto it = strings_.find(name_id);
  if (it == strings_.end()) return names_.Intern(absl::StrFormat("(unnamed operation #%d)", name_id));
  return names_.Intern(it->second);
}

int32_t TimelineBuilder::StringLabel(uint32_t id) {
  auto [it, inserted] = string_labels_.try_emplace(id, 0);
  if (inserted) it->second = names_.Intern(StringOf(id));
  return it->second;
}

std::string TimelineBuilder::StringOf(uint32_t id) const {
  auto it = strings_.find(id);
  return it != strings_.end() ? it->second : absl::StrFormat("(unknown #%d)", id);
}

void TimelineBuilder::InferFromStacks(ThreadTimeline& thread, const ThreadState& state) {
  if (state.stacks.samples().empty() || symbolizer_ == nullptr || operation_rules_ == nullptr || thread.python) return;
  StackInference(modules_, classifier_, *symbolizer_, *operation_rules_, names_)
      .Infer(state.stacks, thread.begin_ns, thread.end_ns, thread.inferred_operations);
}

void TimelineBuilder::ClassifyNativeCalls(ThreadTimeline& thread, ThreadState& state, bool final) {
  for (const RawNativeCall& raw : state.native_calls) {
    const std::string* path = classifier_ != nullptr ? modules_.PathOf(raw.address) : nullptr;
    // A string or a module the batches have not given yet (a string table
    // entry still being filled, a library loaded while the flush ran) is
    // waited for, to the end at most: the call keeps its place.
    if (!final && !Resolvable(raw, path)) {
      state.deferred_calls.push_back({thread.native_calls.size(), raw});
      thread.native_calls.emplace_back();
      state.native_events.emplace_back();
      continue;
    }
    PlaceNativeCall(state, raw, path, thread.native_calls.emplace_back(), state.native_events.emplace_back());
  }
  state.native_calls.clear();
}

void TimelineBuilder::PlaceNativeCall(const ThreadState& state, const RawNativeCall& raw, const std::string* path,
                                      NativeCall& call, Interval& event) {
  const Category category = path != nullptr ? ClassifyCall(*path, raw.code_id) : Category::kNative;
  event = {raw.begin_ns, raw.end_ns, static_cast<int32_t>(category)};
  // Locations are raw string ids until FinishNativeCalls labels them.
  call = {raw.begin_ns, raw.end_ns, category, static_cast<int32_t>(raw.code_id), raw.line};
  if (IsUserCode(raw.code_id)) {
    call.user_location = call.location;
    call.user_line = call.line;
  } else {
    // Called from library code: the user's line is the latest mark at or
    // before the call began (a mark made inside it, by a callback, is
    // another call's).
    auto mark = std::upper_bound(state.user_lines.begin(), state.user_lines.end(), raw.begin_ns,
                                 [](int64_t time, const UserLineMark& m) { return time < m.time_ns; });
    if (mark != state.user_lines.begin() && std::prev(mark)->code_id != 0) {  // Id 0: no user frame.
      --mark;
      call.user_location = static_cast<int32_t>(mark->code_id);
      call.user_line = mark->line;
    }
  }
}

bool TimelineBuilder::Resolvable(const RawNativeCall& raw, const std::string* path) const {
  return (classifier_ == nullptr || path != nullptr) && strings_.contains(raw.code_id);
}

void TimelineBuilder::PlaceDeferredCalls(ThreadTimeline& thread, ThreadState& state, bool final) {
  std::erase_if(state.deferred_calls, [&](const std::pair<size_t, RawNativeCall>& deferred) {
    const auto& [index, raw] = deferred;
    const std::string* path = classifier_ != nullptr ? modules_.PathOf(raw.address) : nullptr;
    if (!final && !Resolvable(raw, path)) return false;
    PlaceNativeCall(state, raw, path, thread.native_calls[index], state.native_events[index]);
    return true;
  });
}

void TimelineBuilder::FinishNativeCalls(ThreadTimeline& thread, ThreadState& state) {
  ClassifyNativeCalls(thread, state, /*final=*/true);  // Calls added outside a batch (tests).
  PlaceDeferredCalls(thread, state, /*final=*/true);
  // Labelled here, in record order, so that names are numbered as when
  // the stream is read whole, whichever way it was read (run_decoding.h).
  for (NativeCall& call : thread.native_calls) {
    call.location = StringLabel(static_cast<uint32_t>(call.location));
    if (call.user_location != kNoLabel) call.user_location = StringLabel(static_cast<uint32_t>(call.user_location));
  }
  thread.cpu_events.insert(thread.cpu_events.end(), state.native_events.begin(), state.native_events.end());
  IntervalList().swap(state.native_events);
  std::vector<UserLineMark>().swap(state.user_lines);
}

void TimelineBuilder::ResolveHookedCollectives(ThreadTimeline& thread) {
  absl::flat_hash_map<uint32_t, HookedCommunicationKind> kinds;  // A few functions, called many times.
  std::erase_if(thread.hooked_collectives, [&](HookedCollective& call) {
    const auto id = static_cast<uint32_t>(call.function);
    auto [known, inserted] = kinds.try_emplace(id, HookedCommunicationKind::kCollective);
    if (inserted) known->second = KindOfHookedCommunication(StringOf(id));
    const HookedCommunicationKind kind = known->second;
    call.function = StringLabel(id);
    call.queued = kind == HookedCommunicationKind::kQueuedCollective;
    return kind == HookedCommunicationKind::kNotCollective;
  });
}

Category TimelineBuilder::ClassifyCall(const std::string& path, uint32_t code_id) {
  if (!classifier_->HasCallerRules()) return classifier_->Classify(path);
  auto [it, inserted] = call_categories_[path].try_emplace(code_id, Category::kNative);
  if (inserted) {
    // Module-level code is the module's import, not a call of its API:
    // it has no caller for caller= rules (torch.distributed's import-time
    // set-up is not communication).
    const CodeLocation where = SplitCodeLocation(StringOf(code_id));
    const bool import_time = where.function == "<module>";
    it->second =
        classifier_->Classify(path, where.file.empty() || import_time ? std::string() : ModuleOfPath(where.file));
  }
  return it->second;
}

bool TimelineBuilder::IsUserCode(uint32_t code_id) {
  auto [it, inserted] = user_code_.try_emplace(code_id, false);
  if (inserted) {
    const CodeLocation where = SplitCodeLocation(StringOf(code_id));
    it->second = !where.file.empty() && OriginOfPath(where.file).kind == CodeOrigin::Kind::kUser;
  }
  return it->second;
}

ProcessTimeline TimelineBuilder::Finish() {
  // The process ends at its Goodbye; without one (it died, or exec'd or
  // _exit'ed without flushing) at the last sign of life: its last event or
  // the moment its last batch was cut.
  process_.end_ns = goodbye_ns_ != 0 ? goodbye_ns_ : std::max({last_event_ns_, last_flush_ns_, process_.begin_ns});
  uint64_t unclosed = 0;
  for (size_t index = 0; index < process_.threads.size(); ++index) {
    ThreadTimeline& thread = process_.threads[index];
    ThreadState& state = thread_states_[index];
    if (!state.saw_begin && state.first_ns == INT64_MAX) {
      // Not one event of this thread arrived, only a count of dropped ones
      // (its ring was reclaimed while the collector stalled): its lifetime
      // is unknown, so it covers no time rather than the process's.
      thread.begin_ns = thread.end_ns = process_.end_ns;
      continue;
    }
    if (!state.saw_begin) thread.begin_ns = state.first_ns;
    if (!state.saw_end) thread.end_ns = process_.end_ns;
    thread.end_ns = std::max(thread.end_ns, std::max(thread.begin_ns, state.last_ns));
    // Drops no marker told of lost the stream's end (no record was kept
    // after them): what was open at its last event may have closed there.
    if (thread.dropped > state.lost_marked && state.last_ns != INT64_MIN) OnRecordsLost(thread, state, state.last_ns);
    for (const OpenOperation& open : state.open) {
      // One open since before lost records whose pop never came: its pop
      // was lost with them, so it ends where they did.
      const int64_t end_ns = open.before_hole ? std::max(open.begin_ns, open.hole_ns) : thread.end_ns;
      CloseOperation(thread, open, end_ns);
      // Inferred operations open at the end are the program's outer
      // functions (its main loop): expected, not a problem to report.
      if (!open.inferred && !open.before_hole) ++unclosed;
    }
    FinishNativeCalls(thread, state);
    // Recorded as they ended, inner events first; every pass after this
    // one wants them outer first (flatten.h).
    SortOuterFirst(thread.cpu_events);
    // After the native calls are categorised: a blocked span inside one
    // stays its library's time. Clipped to the thread's life.
    for (Interval& span : state.idle_spans) {
      span.begin_ns = std::max(span.begin_ns, thread.begin_ns);
      span.end_ns = std::min(span.end_ns, thread.end_ns);
    }
    std::erase_if(state.idle_spans, [](const Interval& span) { return span.end_ns <= span.begin_ns; });
    const IntervalList waits = IdleWaits(std::move(state.idle_spans), thread.cpu_events);
    const auto middle = thread.cpu_events.insert(thread.cpu_events.end(), waits.begin(), waits.end());
    std::inplace_merge(thread.cpu_events.begin(), middle, thread.cpu_events.end(), OuterFirst);  // Both sorted.
    state.idle_spans.clear();
  }
  for (const auto& [id, range] : open_ranges_) {
    ThreadTimeline& thread = process_.threads[range.thread];
    thread.operations.push_back({range.begin_ns, thread.end_ns, static_cast<int32_t>(range.name_id)});
    ++unclosed;
  }
  for (size_t index = 0; index < process_.threads.size(); ++index) {
    ThreadTimeline& thread = process_.threads[index];
    for (GpuLaunchPoint& launch : thread.gpu_launches) launch.api = StringLabel(static_cast<uint32_t>(launch.api));
    for (OverheadSite& site : thread.overhead_sites) {
      if (site.kind == OverheadSiteKind::kCupti || site.kind == OverheadSiteKind::kCudaHook) {
        site.api = StringLabel(static_cast<uint32_t>(site.api));
      }
    }
    ResolveHookedCollectives(thread);
    for (Interval& op : thread.operations) op.label = OperationLabel(static_cast<uint32_t>(op.label));
    for (Interval& op : thread.inferred_operations) op.label = OperationLabel(static_cast<uint32_t>(op.label));
    for (const RawInstanceStart& start : thread_states_[index].instance_starts) {
      AddInstance(thread, OperationLabel(start.name_id), start.time_ns);
    }
    // After relabelling: stack-inferred operations carry NameTable labels.
    InferFromStacks(thread, thread_states_[index]);
  }
  for (size_t i = 0; i < process_.children.size(); ++i) {
    if (child_program_ids_[i] != 0) process_.children[i].program = StringOf(child_program_ids_[i]);
  }
  for (size_t i = 0; i < process_.gpu_activities.size(); ++i) {
    process_.gpu_activities[i].name =
        GpuActivityName(process_.gpu_activities[i].kind, gpu_raw_names_[i].first, gpu_raw_names_[i].second);
  }
  if (unbalanced_pops_ > 0) {
    process_.problems.push_back(
        absl::StrFormat("%d operation pop(s) without a matching push were ignored", unbalanced_pops_));
  }
  if (unclosed > 0) {
    process_.problems.push_back(
        absl::StrFormat("%d operation(s) were still open when their thread or process ended; closed there", unclosed));
  }
  if (unmatched_range_ends_ > 0) {
    process_.problems.push_back(
        absl::StrFormat("%d range end(s) without a matching start were ignored", unmatched_range_ends_));
  }
  if (hook_replacements_ > 0) {
    process_.problems.push_back(absl::StrFormat(
        "another profiler (cProfile, sys.setprofile, torch.profiler with stacks) replaced rlscope's Python hook "
        "%d time(s): Python-level transitions and inferred operations after that are missing",
        hook_replacements_));
  }
  if (implausible_events_ > 0) {
    process_.problems.push_back(absl::StrFormat(
        "%d event(s) with impossible timestamps were skipped (damaged trace data)", implausible_events_));
  }
  if (unknown_events_ > 0) {
    process_.problems.push_back(
        absl::StrFormat("%d event(s) of kinds this rlscope does not know were skipped", unknown_events_));
  }
  if (!saw_hello_) process_.problems.push_back("stream without a Hello frame");
  ResolveInferredOperations(process_, names_);
  return std::move(process_);
}

}  // namespace rlscope::report
