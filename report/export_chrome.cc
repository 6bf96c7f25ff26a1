#include "report/export_chrome.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "report/export_tracks.h"

namespace rlscope::report {

namespace {

// The length of the valid UTF-8 sequence at s[i], or 0.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  size_t n = 0;
  uint32_t min = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  uint32_t code = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

constexpr int64_t kGpuTrackBase = 2000000000;

class TraceWriter {
 public:
  TraceWriter(std::ostream& out, int64_t base_ns) : out_(out), base_ns_(base_ns) {}

  void Begin() { out_ << "{\"traceEvents\":[\n"; }
  void End() { out_ << "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"clock_base_ns\":" << base_ns_ << "}}\n"; }

  void Metadata(std::string_view what, int pid, int64_t tid, std::string_view name) {
    Next();
    out_ << "{\"ph\":\"M\",\"name\":\"" << what << "\",\"pid\":" << pid << ",\"tid\":" << tid
         << ",\"args\":{\"name\":" << JsonString(name) << "}}";
  }

  // A complete event; `args`: a JSON object's members, or "".
  void Complete(int pid, int64_t tid, std::string_view name, std::string_view cat, int64_t begin_ns, int64_t end_ns,
                std::string_view args) {
    Next();
    out_ << "{\"ph\":\"X\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"name\":" << JsonString(name)
         << ",\"cat\":" << JsonString(cat) << ",\"ts\":" << ChromeMicros(begin_ns - base_ns_)
         << ",\"dur\":" << ChromeMicros(std::max<int64_t>(0, end_ns - begin_ns));
    if (!args.empty()) out_ << ",\"args\":{" << args << '}';
    out_ << '}';
  }

  void Flow(bool start, int pid, int64_t tid, uint64_t id, uint32_t correlation_id, int64_t time_ns) {
    Next();
    out_ << "{\"ph\":\"" << (start ? 's' : 'f') << "\",\"pid\":" << pid << ",\"tid\":" << tid
         << ",\"name\":\"launch\",\"cat\":\"launch\",\"id\":" << id << ",\"ts\":" << ChromeMicros(time_ns - base_ns_);
    if (!start) out_ << ",\"bp\":\"e\"";
    out_ << ",\"args\":{\"correlation_id\":" << correlation_id << "}}";
  }

 private:
  void Next() {
    if (!first_) out_ << ",\n";
    first_ = false;
  }

  std::ostream& out_;
  int64_t base_ns_;
  bool first_ = true;
};

void WriteProcess(const ProcessTimeline& process, const NameTable& names, TraceWriter& writer, uint64_t& next_flow) {
  const int pid = process.pid;
  writer.Metadata("process_name", pid, 0, ProcessLabel(process.argv, process.executable, process.pid));
  ThreadTrackIds track_ids;
  std::vector<int64_t> thread_tids;  // Per thread: its track's tid.
  for (const ThreadTimeline& thread : process.threads) {
    const ThreadTrackIds::Track track = track_ids.Next(thread);
    const int64_t tid = track.tid;
    thread_tids.push_back(tid);
    const std::string& name = track.name;
    writer.Metadata("thread_name", pid, tid, name);
    for (const Interval& op : thread.operations) {
      writer.Complete(pid, tid, names.Name(op.label), "operation", op.begin_ns, op.end_ns, "");
    }
    for (const Interval& op : thread.inferred_operations) {
      writer.Complete(pid, tid, names.Name(op.label), "operation", op.begin_ns, op.end_ns, "\"inferred\":true");
    }
    const NativeCallIndex native(thread);
    for (const Interval& event : thread.cpu_events) {
      const std::string_view category = CategoryName(static_cast<Category>(event.label));
      if (const NativeCall* call = native.Of(event)) {
        const std::string& location = names.Name(call->location);
        writer.Complete(pid, tid, location.empty() ? std::string(category) : location, category, event.begin_ns,
                        event.end_ns, absl::StrFormat("\"location\":%s,\"line\":%d", JsonString(location), call->line));
      } else {
        writer.Complete(pid, tid, category, category, event.begin_ns, event.end_ns, "");
      }
    }
  }
  const absl::flat_hash_map<uint32_t, LaunchingCall> launches = LaunchingCalls(process);
  std::map<std::pair<uint32_t, uint32_t>, int64_t> tracks;
  for (const GpuActivity& activity : process.gpu_activities) {
    auto [track, inserted] =
        tracks.try_emplace({activity.device, activity.stream}, kGpuTrackBase + static_cast<int64_t>(tracks.size()));
    if (inserted) {
      writer.Metadata("thread_name", pid, track->second,
                      absl::StrFormat("GPU %d stream %d", activity.device, activity.stream));
    }
    const std::string_view category = GpuActivityCategoryName(activity.kind);
    writer.Complete(pid, track->second, names.Name(activity.name), category, activity.begin_ns, activity.end_ns,
                    absl::StrFormat("\"correlation_id\":%d,\"bytes\":%d", activity.correlation_id, activity.bytes));
    const auto launch = launches.find(activity.correlation_id);
    if (launch != launches.end()) {
      const uint64_t id = next_flow++;
      writer.Flow(true, pid, thread_tids[launch->second.thread], id, activity.correlation_id,
                  launch->second.call->time_ns);
      writer.Flow(false, pid, track->second, id, activity.correlation_id, activity.begin_ns);
    }
  }
}

}  // namespace

std::string JsonString(std::string_view value) {
  std::string out = "\"";
  out.reserve(value.size() + 2);
  for (size_t i = 0; i < value.size();) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      out += absl::StrFormat("\\u%04x", c);
    } else if (c >= 0x80) {
      const size_t n = Utf8Length(value, i);
      if (n == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(value.substr(i, n));
        i += n;
      }
      continue;
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  out += '"';
  return out;
}

std::string ChromeMicros(int64_t ns) {
  const bool negative = ns < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return absl::StrFormat("%s%d.%03d", negative ? "-" : "", magnitude / 1000, magnitude % 1000);
}

void WriteChromeTrace(const std::vector<ProcessTimeline>& processes, const NameTable& names, std::ostream& out) {
  int64_t base_ns = std::numeric_limits<int64_t>::max();
  for (const ProcessTimeline& process : processes) base_ns = std::min(base_ns, process.begin_ns);
  if (processes.empty()) base_ns = 0;
  TraceWriter writer(out, base_ns);
  writer.Begin();
  uint64_t next_flow = 1;
  for (const ProcessTimeline& process : processes) WriteProcess(process, names, writer, next_flow);
  writer.End();
}

}  // namespace rlscope::report
