#include "report/export_perfetto.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

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
void SortOuterFirst(std::vector<PerfettoSlice>& slices) {
  std::stable_sort(slices.begin(), slices.end(), [](const PerfettoSlice& a, const PerfettoSlice& b) {
    return a.begin_ns < b.begin_ns || (a.begin_ns == b.begin_ns && a.end_ns > b.end_ns);
  });
}

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
  // track `uuid`. At equal timestamps trace_processor keeps file order, so
  // an END written before a BEGIN of the same instant closes the right
  // slice.
  void WriteSlices(uint64_t uuid, const std::vector<PerfettoSlice>& slices) {
    std::vector<int64_t> open_ends;
    for (const PerfettoSlice& slice : slices) {
      while (!open_ends.empty() && open_ends.back() <= slice.begin_ns) {
        Event(uuid, track_event_type::kSliceEnd, open_ends.back(), nullptr);
        open_ends.pop_back();
      }
      if (slice.instant) {
        Event(uuid, track_event_type::kInstant, slice.begin_ns, &slice);
      } else {
        Event(uuid, track_event_type::kSliceBegin, slice.begin_ns, &slice);
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
  void Event(uint64_t uuid, int64_t type, int64_t time_ns, const PerfettoSlice* slice) {
    ProtobufWriter interned;
    ProtobufWriter event;
    event.Int64(track_event_field::kType, type);
    event.Uint64(track_event_field::kTrackUuid, uuid);
    if (slice != nullptr) {
      event.Uint64(track_event_field::kCategoryIids, categories_.Id(slice->category, interned));
      event.Uint64(track_event_field::kNameIid, names_.Id(slice->name, interned));
      for (const PerfettoSlice::Arg& arg : slice->args) {
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
};

PerfettoSlice Slice(int64_t begin_ns, int64_t end_ns, std::string_view name, std::string_view category) {
  PerfettoSlice slice;
  slice.begin_ns = begin_ns;
  slice.end_ns = std::max(begin_ns, end_ns);  // A damaged end never precedes its begin.
  slice.name = name;
  slice.category = category;
  return slice;
}

// A launching CUDA call seen by CUPTI: where its flows start.
struct LaunchSite {
  LaunchingCall launch;
  std::vector<uint64_t> flow_ids;
};

// AttachLaunches: gives each launch's flow ids (it has some) to the
// innermost of the nested `slices` around its time, or to a new instant
// event.
void AttachLaunches(std::vector<const LaunchSite*> launches, const NameTable& names,
                    std::vector<PerfettoSlice>& slices) {
  // By time, then by flow id: the output does not depend on hash order.
  std::sort(launches.begin(), launches.end(), [](const LaunchSite* a, const LaunchSite* b) {
    return std::pair(a->launch.call->time_ns, a->flow_ids.front()) <
           std::pair(b->launch.call->time_ns, b->flow_ids.front());
  });
  std::vector<size_t> open;
  size_t next = 0;
  const size_t count = slices.size();  // Instants appended below are not candidates.
  for (const LaunchSite* launch : launches) {
    const int64_t t = launch->launch.call->time_ns;
    for (; next < count && slices[next].begin_ns <= t; ++next) {
      while (!open.empty() && slices[open.back()].end_ns <= slices[next].begin_ns) open.pop_back();
      open.push_back(next);
    }
    while (!open.empty() && slices[open.back()].end_ns < t) open.pop_back();
    if (!open.empty()) {
      std::vector<uint64_t>& ids = slices[open.back()].flow_ids;
      ids.insert(ids.end(), launch->flow_ids.begin(), launch->flow_ids.end());
    } else {
      const int32_t api = launch->launch.call->api;
      PerfettoSlice instant = Slice(t, t, api > 0 ? std::string_view(names.Name(api)) : "launch", "launch");
      instant.flow_ids = launch->flow_ids;
      instant.instant = true;
      slices.push_back(std::move(instant));
    }
  }
  if (slices.size() > count) SortOuterFirst(slices);  // The instants among the slices.
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
    const ThreadTrackIds::Track track = track_ids.Next(thread);
    const int64_t tid = track.tid;
    const std::string& name = track.name;
    const uint64_t thread_uuid = stream.NewUuid();
    stream.ThreadTrack(thread_uuid, process_uuid, process.pid, tid, name, thread.begin_ns);
    // Child tracks show up beside the thread, so their names say whose they are.
    const std::string owner = absl::StrFormat("%s %d", thread.name.empty() ? "thread" : thread.name, tid);

    std::vector<PerfettoSlice> slices;
    for (const Interval& op : thread.operations) {
      slices.push_back(Slice(op.begin_ns, op.end_ns, names.Name(op.label), "operation"));
    }
    NestSlices(slices);
    stream.WriteSlices(thread_uuid, slices);

    if (!thread.inferred_operations.empty()) {
      slices.clear();
      for (const Interval& op : thread.inferred_operations) {
        slices.push_back(Slice(op.begin_ns, op.end_ns, names.Name(op.label), "operation"));
        slices.back().args = {{"inferred", true}};
      }
      const uint64_t uuid = stream.NewUuid();
      stream.ChildTrack(uuid, thread_uuid, owner + " inferred operations", thread.begin_ns);
      NestSlices(slices);
      stream.WriteSlices(uuid, slices);
    }

    if (!thread.cpu_events.empty() || !launches_by_thread[t].empty()) {
      slices.clear();
      const NativeCallIndex native(thread);
      for (const Interval& event : thread.cpu_events) {
        const std::string_view category = CategoryName(static_cast<Category>(event.label));
        PerfettoSlice slice = Slice(event.begin_ns, event.end_ns, category, category);
        if (const NativeCall* call = native.Of(event)) {
          const std::string& location = names.Name(call->location);
          if (!location.empty()) slice.name = location;
          slice.args = {{"location", std::string_view(location)}, {"line", int64_t{call->line}}};
        }
        slices.push_back(std::move(slice));
      }
      const uint64_t uuid = stream.NewUuid();
      stream.ChildTrack(uuid, thread_uuid, owner + " CPU categories", thread.begin_ns);
      NestSlices(slices);
      AttachLaunches(launches_by_thread[t], names, slices);
      stream.WriteSlices(uuid, slices);
    }
  }

  // One GPU track at a time: only its slices are held while it is written.
  std::map<std::pair<uint32_t, uint32_t>, std::vector<size_t>> gpu_tracks;  // (device, stream) -> activities.
  for (size_t a = 0; a < process.gpu_activities.size(); ++a) {
    gpu_tracks[{process.gpu_activities[a].device, process.gpu_activities[a].stream}].push_back(a);
  }
  std::vector<PerfettoSlice> slices;
  for (const auto& [key, activities] : gpu_tracks) {
    slices.clear();
    for (const size_t a : activities) {
      const GpuActivity& activity = process.gpu_activities[a];
      PerfettoSlice slice =
          Slice(activity.begin_ns, activity.end_ns, names.Name(activity.name), GpuActivityCategoryName(activity.kind));
      slice.args = {{"correlation_id", int64_t{activity.correlation_id}},
                    {"bytes", static_cast<int64_t>(activity.bytes)}};
      if (activity_flow[a] != 0) slice.terminating_flow_ids = {activity_flow[a]};
      slices.push_back(std::move(slice));
    }
    const uint64_t uuid = stream.NewUuid();
    stream.ChildTrack(uuid, process_uuid, absl::StrFormat("GPU %d stream %d", key.first, key.second), process.begin_ns);
    NestSlices(slices);
    stream.WriteSlices(uuid, slices);
  }
}

}  // namespace

size_t NestSlices(std::vector<PerfettoSlice>& slices) {
  // Clipping below only shortens a slice to the end of one sorted before
  // it, so the order holds afterwards too.
  SortOuterFirst(slices);
  size_t clipped = 0;
  std::vector<int64_t> open_ends;
  for (PerfettoSlice& slice : slices) {
    while (!open_ends.empty() && open_ends.back() <= slice.begin_ns) open_ends.pop_back();
    if (!open_ends.empty() && slice.end_ns > open_ends.back()) {
      slice.end_ns = open_ends.back();
      slice.args.push_back({"clipped", true});
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
