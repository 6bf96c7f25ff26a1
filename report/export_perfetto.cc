#include "report/export_perfetto.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "report/export_tracks.h"
#include "report/protobuf_writer.h"

namespace rlscope::report {

namespace {

// Field numbers of Perfetto's trace schema (protos/perfetto/trace/...),
// only those we write; test/report/perfetto_trace_subset.proto mirrors them.
namespace trace_field {
constexpr uint32_t kPacket = 1;
}
namespace packet_field {
constexpr uint32_t kTimestamp = 8;
constexpr uint32_t kTrustedPacketSequenceId = 10;
constexpr uint32_t kTrackEvent = 11;
constexpr uint32_t kInternedData = 12;
constexpr uint32_t kSequenceFlags = 13;
constexpr uint32_t kTrackDescriptor = 60;
}  // namespace packet_field
namespace sequence_flag {
constexpr uint64_t kIncrementalStateCleared = 1;
constexpr uint64_t kNeedsIncrementalState = 2;
}  // namespace sequence_flag
namespace track_descriptor_field {
constexpr uint32_t kUuid = 1;
constexpr uint32_t kName = 2;
constexpr uint32_t kProcess = 3;
constexpr uint32_t kThread = 4;
constexpr uint32_t kParentUuid = 5;
}  // namespace track_descriptor_field
namespace process_descriptor_field {
constexpr uint32_t kPid = 1;
constexpr uint32_t kCmdline = 2;
constexpr uint32_t kProcessName = 6;
}  // namespace process_descriptor_field
namespace thread_descriptor_field {
constexpr uint32_t kPid = 1;
constexpr uint32_t kTid = 2;
constexpr uint32_t kThreadName = 5;
}  // namespace thread_descriptor_field
namespace track_event_field {
constexpr uint32_t kCategoryIids = 3;
constexpr uint32_t kDebugAnnotations = 4;
constexpr uint32_t kType = 9;
constexpr uint32_t kNameIid = 10;
constexpr uint32_t kTrackUuid = 11;
constexpr uint32_t kFlowIds = 47;             // fixed64
constexpr uint32_t kTerminatingFlowIds = 48;  // fixed64
}  // namespace track_event_field
namespace track_event_type {
constexpr int64_t kSliceBegin = 1;
constexpr int64_t kSliceEnd = 2;
constexpr int64_t kInstant = 3;
}  // namespace track_event_type
namespace debug_annotation_field {
constexpr uint32_t kNameIid = 1;
constexpr uint32_t kBoolValue = 2;
constexpr uint32_t kIntValue = 4;
constexpr uint32_t kStringValue = 6;
}  // namespace debug_annotation_field
namespace interned_data_field {
constexpr uint32_t kEventCategories = 1;
constexpr uint32_t kEventNames = 2;
constexpr uint32_t kDebugAnnotationNames = 3;
// EventCategory, EventName and DebugAnnotationName all are {iid = 1, name = 2}.
constexpr uint32_t kEntryIid = 1;
constexpr uint32_t kEntryName = 2;
}  // namespace interned_data_field

constexpr uint32_t kSequenceId = 1;

// One table of interned strings (an InternedData field): iids from 1.
class InternTable {
 public:
  explicit InternTable(uint32_t field) : field_(field) {}

  // Id: `value`'s iid; a new one is also added to `interned` (the packet's
  // InternedData), so it is defined before (with) its first use.
  uint64_t Id(std::string_view value, ProtobufWriter& interned) {
    auto [it, inserted] = iids_.try_emplace(std::string(value), iids_.size() + 1);
    if (inserted) {
      ProtobufWriter entry;
      entry.Uint64(interned_data_field::kEntryIid, it->second);
      entry.String(interned_data_field::kEntryName, value);
      interned.Message(field_, entry);
    }
    return it->second;
  }

 private:
  uint32_t field_;
  absl::flat_hash_map<std::string, uint64_t> iids_;
};

// SortOuterFirst: by begin, an enclosing slice before those it holds (at
// one begin the longer first); stable, so ties keep their order.
void SortOuterFirst(std::vector<TrackSlice>& slices) {
  std::stable_sort(slices.begin(), slices.end(), [](const TrackSlice& a, const TrackSlice& b) {
    return a.begin_ns < b.begin_ns || (a.begin_ns == b.begin_ns && a.end_ns > b.end_ns);
  });
}

// EventFields: what a BEGIN or instant event says, looked up from its
// slice's record just before the event is written. One is reused for every
// event of a trace, so writing allocates nothing per event.
struct EventFields {
  struct Arg {
    std::string_view name;
    std::variant<int64_t, bool, std::string_view> value;
  };
  std::string_view name;
  std::string_view category;
  std::vector<Arg> args;
  std::vector<uint64_t> flow_ids;
  std::vector<uint64_t> terminating_flow_ids;

  void Clear() {
    name = category = {};
    args.clear();
    flow_ids.clear();
    terminating_flow_ids.clear();
  }
};

// PacketStream: writes TracePackets as they are made, on one sequence.
class PacketStream {
 public:
  explicit PacketStream(std::ostream& out) : out_(out) {}

  uint64_t NewUuid() { return next_uuid_++; }

  void ProcessTrack(uint64_t uuid, const ProcessTimeline& process, std::string_view name) {
    ProtobufWriter descriptor;
    descriptor.Int64(process_descriptor_field::kPid, process.pid);
    for (const std::string& arg : process.argv) descriptor.String(process_descriptor_field::kCmdline, arg);
    descriptor.String(process_descriptor_field::kProcessName, name);
    ProtobufWriter track;
    track.Uint64(track_descriptor_field::kUuid, uuid);
    track.Message(track_descriptor_field::kProcess, descriptor);
    Descriptor(track, process.begin_ns);
  }

  // A thread track; Perfetto ties it to its process by pid (parent_uuid
  // is ignored for thread tracks but says the same).
  void ThreadTrack(uint64_t uuid, uint64_t process_uuid, int pid, int64_t tid, std::string_view name,
                   int64_t begin_ns) {
    ProtobufWriter descriptor;
    descriptor.Int64(thread_descriptor_field::kPid, pid);
    descriptor.Int64(thread_descriptor_field::kTid, tid);
    descriptor.String(thread_descriptor_field::kThreadName, name);
    ProtobufWriter track;
    track.Uint64(track_descriptor_field::kUuid, uuid);
    track.Uint64(track_descriptor_field::kParentUuid, process_uuid);
    track.Message(track_descriptor_field::kThread, descriptor);
    Descriptor(track, begin_ns);
  }

  void ChildTrack(uint64_t uuid, uint64_t parent_uuid, std::string_view name, int64_t begin_ns) {
    ProtobufWriter track;
    track.Uint64(track_descriptor_field::kUuid, uuid);
    track.String(track_descriptor_field::kName, name);
    track.Uint64(track_descriptor_field::kParentUuid, parent_uuid);
    Descriptor(track, begin_ns);
  }

  // WriteSlices: `slices` as NestSlices left them (instant events among
  // them, outside every slice, in SortOuterFirst order too), as events on
  // track `uuid`; describe(slice, fields) fills each BEGIN's or instant's
  // fields from its record. At equal timestamps trace_processor keeps file
  // order, so an END written before a BEGIN of the same instant closes the
  // right slice.
  template <typename Describe>
  void WriteSlices(uint64_t uuid, const std::vector<TrackSlice>& slices, const Describe& describe) {
    std::vector<int64_t> open_ends;
    for (const TrackSlice& slice : slices) {
      while (!open_ends.empty() && open_ends.back() <= slice.begin_ns) {
        Event(uuid, track_event_type::kSliceEnd, open_ends.back(), nullptr);
        open_ends.pop_back();
      }
      fields_.Clear();
      describe(slice, fields_);
      if (slice.clipped) fields_.args.push_back({"clipped", true});
      if (slice.instant) {
        Event(uuid, track_event_type::kInstant, slice.begin_ns, &fields_);
      } else {
        Event(uuid, track_event_type::kSliceBegin, slice.begin_ns, &fields_);
        open_ends.push_back(slice.end_ns);
      }
    }
    while (!open_ends.empty()) {
      Event(uuid, track_event_type::kSliceEnd, open_ends.back(), nullptr);
      open_ends.pop_back();
    }
  }

 private:
  void Descriptor(const ProtobufWriter& track, int64_t timestamp_ns) {
    ProtobufWriter packet;
    packet.Uint64(packet_field::kTimestamp, static_cast<uint64_t>(timestamp_ns));
    packet.Message(packet_field::kTrackDescriptor, track);
    Emit(packet, /*needs_interning=*/false);
  }

  // Event: a TrackEvent; `slice` is null for an END.
  void Event(uint64_t uuid, int64_t type, int64_t time_ns, const EventFields* slice) {
    ProtobufWriter interned;
    ProtobufWriter event;
    event.Int64(track_event_field::kType, type);
    event.Uint64(track_event_field::kTrackUuid, uuid);
    if (slice != nullptr) {
      event.Uint64(track_event_field::kCategoryIids, categories_.Id(slice->category, interned));
      event.Uint64(track_event_field::kNameIid, names_.Id(slice->name, interned));
      for (const EventFields::Arg& arg : slice->args) {
        ProtobufWriter annotation;
        annotation.Uint64(debug_annotation_field::kNameIid, arg_names_.Id(arg.name, interned));
        if (const auto* number = std::get_if<int64_t>(&arg.value)) {
          annotation.Int64(debug_annotation_field::kIntValue, *number);
        } else if (const auto* flag = std::get_if<bool>(&arg.value)) {
          annotation.Bool(debug_annotation_field::kBoolValue, *flag);
        } else {
          annotation.String(debug_annotation_field::kStringValue, std::get<std::string_view>(arg.value));
        }
        event.Message(track_event_field::kDebugAnnotations, annotation);
      }
      for (uint64_t id : slice->flow_ids) event.Fixed64(track_event_field::kFlowIds, id);
      for (uint64_t id : slice->terminating_flow_ids) event.Fixed64(track_event_field::kTerminatingFlowIds, id);
    }
    ProtobufWriter packet;
    packet.Uint64(packet_field::kTimestamp, static_cast<uint64_t>(time_ns));
    packet.Message(packet_field::kTrackEvent, event);
    if (!interned.empty()) packet.Message(packet_field::kInternedData, interned);
    Emit(packet, /*needs_interning=*/true);
  }

  void Emit(ProtobufWriter& packet, bool needs_interning) {
    packet.Uint64(packet_field::kTrustedPacketSequenceId, kSequenceId);
    if (first_) {
      packet.Uint64(packet_field::kSequenceFlags, sequence_flag::kIncrementalStateCleared);
      first_ = false;
    } else if (needs_interning) {
      packet.Uint64(packet_field::kSequenceFlags, sequence_flag::kNeedsIncrementalState);
    }
    std::string framed;
    framed += static_cast<char>((trace_field::kPacket << 3) | 2);  // Trace.packet, length-delimited.
    AppendVarint(packet.bytes().size(), framed);
    out_ << framed << packet.bytes();
  }

  std::ostream& out_;
  uint64_t next_uuid_ = 1;
  bool first_ = true;
  InternTable names_{interned_data_field::kEventNames};
  InternTable categories_{interned_data_field::kEventCategories};
  InternTable arg_names_{interned_data_field::kDebugAnnotationNames};
  EventFields fields_;
};

TrackSlice Slice(int64_t begin_ns, int64_t end_ns, size_t source) {
  TrackSlice slice;
  slice.begin_ns = begin_ns;
  slice.end_ns = std::max(begin_ns, end_ns);  // A damaged end never precedes its begin.
  slice.source = static_cast<uint32_t>(source);
  return slice;
}

// A launching CUDA call seen by CUPTI: where its flows start.
struct LaunchSite {
  LaunchingCall launch;
  std::vector<uint64_t> flow_ids;
};

// FlowStarts: the flow ids that slices of one CPU track start, by slice
// (its source and whether it is an instant). Only slices around a launch
// have an entry.
class FlowStarts {
 public:
  void Add(const TrackSlice& slice, const std::vector<uint64_t>& ids) {
    std::vector<uint64_t>& starts = by_slice_[Key(slice)];
    starts.insert(starts.end(), ids.begin(), ids.end());
  }
  void AppendTo(const TrackSlice& slice, std::vector<uint64_t>& ids) const {
    if (by_slice_.empty()) return;
    const auto found = by_slice_.find(Key(slice));
    if (found != by_slice_.end()) ids.insert(ids.end(), found->second.begin(), found->second.end());
  }

 private:
  static uint64_t Key(const TrackSlice& slice) { return (uint64_t{slice.instant} << 32) | slice.source; }
  absl::flat_hash_map<uint64_t, std::vector<uint64_t>> by_slice_;
};

// AttachLaunches: sorts `launches` (by time, then flow id) and gives each
// launch's flow ids to the innermost of the nested `slices` around its
// time, or to a new instant event whose source is the launch's index in
// `launches`.
void AttachLaunches(std::vector<const LaunchSite*>& launches, std::vector<TrackSlice>& slices, FlowStarts& flows) {
  // By time, then by flow id: the output does not depend on hash order.
  std::sort(launches.begin(), launches.end(), [](const LaunchSite* a, const LaunchSite* b) {
    return std::pair(a->launch.call->time_ns, a->flow_ids.front()) <
           std::pair(b->launch.call->time_ns, b->flow_ids.front());
  });
  std::vector<size_t> open;
  size_t next = 0;
  const size_t count = slices.size();  // Instants appended below are not candidates.
  for (size_t l = 0; l < launches.size(); ++l) {
    const int64_t t = launches[l]->launch.call->time_ns;
    for (; next < count && slices[next].begin_ns <= t; ++next) {
      while (!open.empty() && slices[open.back()].end_ns <= slices[next].begin_ns) open.pop_back();
      open.push_back(next);
    }
    while (!open.empty() && slices[open.back()].end_ns < t) open.pop_back();
    if (!open.empty()) {
      flows.Add(slices[open.back()], launches[l]->flow_ids);
    } else {
      TrackSlice instant = Slice(t, t, l);
      instant.instant = true;
      flows.Add(instant, launches[l]->flow_ids);
      slices.push_back(instant);
    }
  }
  if (slices.size() > count) SortOuterFirst(slices);  // The instants among the slices.
}

// A thread's operations (or inferred operations) as one track's slices.
std::vector<TrackSlice> OperationSlices(const std::vector<Interval>& operations) {
  std::vector<TrackSlice> slices;
  slices.reserve(operations.size());
  for (size_t i = 0; i < operations.size(); ++i) {
    slices.push_back(Slice(operations[i].begin_ns, operations[i].end_ns, i));
  }
  NestSlices(slices);
  return slices;
}

void WriteThread(const ThreadTimeline& thread, const ThreadTrackIds::Track& track, uint64_t process_uuid, int pid,
                 std::vector<const LaunchSite*>& launches, const NameTable& names, PacketStream& stream) {
  const uint64_t thread_uuid = stream.NewUuid();
  stream.ThreadTrack(thread_uuid, process_uuid, pid, track.tid, track.name, thread.begin_ns);
  // Child tracks show up beside the thread, so their names say whose they are.
  const std::string owner = absl::StrFormat("%s %d", thread.name.empty() ? "thread" : thread.name, track.tid);

  stream.WriteSlices(thread_uuid, OperationSlices(thread.operations),
                     [&](const TrackSlice& slice, EventFields& fields) {
                       fields.name = names.Name(thread.operations[slice.source].label);
                       fields.category = "operation";
                     });

  if (!thread.inferred_operations.empty()) {
    const uint64_t uuid = stream.NewUuid();
    stream.ChildTrack(uuid, thread_uuid, owner + " inferred operations", thread.begin_ns);
    stream.WriteSlices(uuid, OperationSlices(thread.inferred_operations),
                       [&](const TrackSlice& slice, EventFields& fields) {
                         fields.name = names.Name(thread.inferred_operations[slice.source].label);
                         fields.category = "operation";
                         fields.args.push_back({"inferred", true});
                       });
  }

  if (thread.cpu_events.empty() && launches.empty()) return;
  std::vector<TrackSlice> slices;
  slices.reserve(thread.cpu_events.size());
  for (size_t e = 0; e < thread.cpu_events.size(); ++e) {
    slices.push_back(Slice(thread.cpu_events[e].begin_ns, thread.cpu_events[e].end_ns, e));
  }
  const uint64_t uuid = stream.NewUuid();
  stream.ChildTrack(uuid, thread_uuid, owner + " CPU categories", thread.begin_ns);
  NestSlices(slices);
  FlowStarts flows;
  AttachLaunches(launches, slices, flows);
  const NativeCallIndex native(thread);
  stream.WriteSlices(uuid, slices, [&](const TrackSlice& slice, EventFields& fields) {
    flows.AppendTo(slice, fields.flow_ids);
    if (slice.instant) {
      const int32_t api = launches[slice.source]->launch.call->api;
      fields.name = api > 0 ? std::string_view(names.Name(api)) : "launch";
      fields.category = "launch";
      return;
    }
    const Interval& event = thread.cpu_events[slice.source];
    fields.name = fields.category = CategoryName(static_cast<Category>(event.label));
    if (const NativeCall* call = native.Of(event)) {
      const std::string& location = names.Name(call->location);
      if (!location.empty()) fields.name = location;
      fields.args.push_back({"location", std::string_view(location)});
      fields.args.push_back({"line", int64_t{call->line}});
    }
  });
}

void WriteProcess(const ProcessTimeline& process, const NameTable& names, PacketStream& stream, uint64_t& next_flow) {
  const uint64_t process_uuid = stream.NewUuid();
  stream.ProcessTrack(process_uuid, process, ProgramName(process.argv, process.executable, process.pid));

  // Flow ids first: a launch's slice is written before its GPU work.
  absl::flat_hash_map<uint32_t, LaunchSite> launches;
  for (const auto& [correlation_id, call] : LaunchingCalls(process))
    launches.emplace(correlation_id, LaunchSite{call, {}});
  std::vector<uint64_t> activity_flow(process.gpu_activities.size(), 0);
  for (size_t a = 0; a < process.gpu_activities.size(); ++a) {
    const auto launch = launches.find(process.gpu_activities[a].correlation_id);
    if (launch == launches.end()) continue;
    activity_flow[a] = next_flow++;
    launch->second.flow_ids.push_back(activity_flow[a]);
  }
  std::vector<std::vector<const LaunchSite*>> launches_by_thread(process.threads.size());
  for (const auto& [correlation_id, site] : launches) {
    if (!site.flow_ids.empty()) launches_by_thread[site.launch.thread].push_back(&site);
  }

  ThreadTrackIds track_ids;
  for (size_t t = 0; t < process.threads.size(); ++t) {
    const ThreadTimeline& thread = process.threads[t];
    WriteThread(thread, track_ids.Next(thread), process_uuid, process.pid, launches_by_thread[t], names, stream);
  }

  // One GPU track at a time: only its slices are held while it is written.
  std::map<std::pair<uint32_t, uint32_t>, std::vector<size_t>> gpu_tracks;  // (device, stream) -> activities.
  for (size_t a = 0; a < process.gpu_activities.size(); ++a) {
    gpu_tracks[{process.gpu_activities[a].device, process.gpu_activities[a].stream}].push_back(a);
  }
  std::vector<TrackSlice> slices;
  for (const auto& [key, activities] : gpu_tracks) {
    slices.clear();
    for (const size_t a : activities) {
      slices.push_back(Slice(process.gpu_activities[a].begin_ns, process.gpu_activities[a].end_ns, a));
    }
    const uint64_t uuid = stream.NewUuid();
    stream.ChildTrack(uuid, process_uuid, absl::StrFormat("GPU %d stream %d", key.first, key.second), process.begin_ns);
    NestSlices(slices);
    stream.WriteSlices(uuid, slices, [&](const TrackSlice& slice, EventFields& fields) {
      const GpuActivity& activity = process.gpu_activities[slice.source];
      fields.name = names.Name(activity.name);
      fields.category = GpuActivityCategoryName(activity.kind);
      fields.args.push_back({"correlation_id", int64_t{activity.correlation_id}});
      fields.args.push_back({"bytes", static_cast<int64_t>(activity.bytes)});
      if (activity_flow[slice.source] != 0) fields.terminating_flow_ids.push_back(activity_flow[slice.source]);
    });
  }
}

}  // namespace

size_t NestSlices(std::vector<TrackSlice>& slices) {
  // Clipping below only shortens a slice to the end of one sorted before
  // it, so the order holds afterwards too.
  SortOuterFirst(slices);
  size_t clipped = 0;
  std::vector<int64_t> open_ends;
  for (TrackSlice& slice : slices) {
    while (!open_ends.empty() && open_ends.back() <= slice.begin_ns) open_ends.pop_back();
    if (!open_ends.empty() && slice.end_ns > open_ends.back()) {
      slice.end_ns = open_ends.back();
      slice.clipped = true;
      ++clipped;
    }
    open_ends.push_back(slice.end_ns);
  }
  return clipped;
}

void WritePerfettoTrace(const std::vector<ProcessTimeline>& processes, const NameTable& names, std::ostream& out) {
  PacketStream stream(out);
  uint64_t next_flow = 1;
  for (const ProcessTimeline& process : processes) WriteProcess(process, names, stream, next_flow);
}

}  // namespace rlscope::report
