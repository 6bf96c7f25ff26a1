#include "preload/batch_encoder.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>

namespace rlscope::preload {

namespace {

std::string ReadWholeFile(const char* path) {
  std::string content;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return content;
  char chunk[4096];
  ssize_t n;
  while ((n = read(fd, chunk, sizeof(chunk))) > 0) content.append(chunk, static_cast<size_t>(n));
  close(fd);
  return content;
}

// The rank read at start-up (ReadStartEnvironment); null before.
constinit LauncherRank* g_start_rank = nullptr;

}  // namespace

void ProcessIdentity::ReadStartEnvironment(const char* const* environment) {
  if (g_start_rank == nullptr) g_start_rank = new LauncherRank(LauncherRankOf(environment));
}

ProcessIdentity ProcessIdentity::ReadCurrent(int64_t start_ns, int forked_from) {
  ProcessIdentity id;
  id.pid = getpid();
  id.ppid = getppid();
  id.forked_from = forked_from;
  id.start_ns = start_ns;
  // The wall-clock time at start_ns, which may be milliseconds past (the
  // clock's origin is set before the connection): real time now, less the
  // monotonic time since. A merge of several hosts' runs aligns their
  // clocks by this pair (report/clock_alignment.h), so it must be one
  // instant; read between two monotonic reads, it is to within their gap.
  timespec before{}, real{}, after{};
  clock_gettime(CLOCK_MONOTONIC, &before);
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_MONOTONIC, &after);
  const auto ns = [](const timespec& t) { return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec; };
  const int64_t monotonic_now = ns(before) + (ns(after) - ns(before)) / 2;
  id.start_unix_ns = ns(real) - (monotonic_now - start_ns);
  char path[4096];
  ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length > 0) id.executable.assign(path, static_cast<size_t>(length));
  const std::string cmdline = ReadWholeFile("/proc/self/cmdline");
  size_t begin = 0;
  while (begin < cmdline.size()) {
    size_t end = cmdline.find('\0', begin);
    if (end == std::string::npos) end = cmdline.size();
    id.argv.emplace_back(cmdline, begin, end - begin);
    begin = end + 1;
  }
  // starttime is field 22 of /proc/self/stat, counted after the ")" that
  // ends the (arbitrary) command name: fields 3.. follow it.
  const std::string stat = ReadWholeFile("/proc/self/stat");
  const size_t paren = stat.rfind(')');
  if (paren != std::string::npos) {
    size_t position = paren + 2;
    for (int field = 3; field < 22 && position != std::string::npos; ++field) {
      position = stat.find(' ', position);
      if (position != std::string::npos) ++position;
    }
    if (position != std::string::npos) id.proc_start_ticks = strtoull(stat.c_str() + position, nullptr, 10);
  }
  if (g_start_rank != nullptr) id.rank = *g_start_rank;
  return id;
}

BatchEncoder::Frame BatchEncoder::Finish(wire::Message type, flatbuffers::Offset<void> message) {
  auto frame = wire::CreateFrame(builder_, type, message);
  builder_.FinishSizePrefixed(frame, wire::FrameIdentifier());
  return {builder_.GetBufferPointer(), builder_.GetSize()};
}

BatchEncoder::Frame BatchEncoder::EncodeHello(const ProcessIdentity& identity, const char* clock_source) {
  builder_.Clear();
  std::vector<flatbuffers::Offset<flatbuffers::String>> argv;
  argv.reserve(identity.argv.size());
  for (const std::string& arg : identity.argv) argv.push_back(builder_.CreateString(arg));
  auto hello = wire::CreateHello(
      builder_, wire::kProtocolVersion, identity.pid, identity.ppid, identity.start_ns, identity.start_unix_ns,
      builder_.CreateString(identity.executable), builder_.CreateVector(argv), /*hostname=*/builder_.CreateString(""),
      builder_.CreateString(clock_source), identity.forked_from, identity.proc_start_ticks, identity.continues_stream,
      identity.lost_before_events, identity.capture_closed_at_start,
      identity.rank.launcher.empty() ? 0 : builder_.CreateString(identity.rank.launcher), identity.rank.rank,
      identity.rank.world_size, identity.rank.local_rank);
  return Finish(wire::Message::Hello, hello.Union());
}

BatchEncoder::Frame BatchEncoder::EncodeGoodbye(int64_t end_ns, uint64_t recorded, uint64_t dropped,
                                                std::string_view reason) {
  builder_.Clear();
  auto text = builder_.CreateString(reason.data(), reason.size());
  auto goodbye = wire::CreateGoodbye(builder_, end_ns, recorded, dropped, text);
  return Finish(wire::Message::Goodbye, goodbye.Union());
}

void BatchEncoder::BeginBatch(uint64_t sequence, int64_t flushed_ns) {
  builder_.Clear();
  sequence_ = sequence;
  flushed_ns_ = flushed_ns;
  batch_events_ = 0;
  batch_gpu_activities_ = 0;
  strings_.clear();
  infos_.clear();
  threads_.clear();
  modules_.clear();
  gpu_activities_ = {};
  gpu_dropped_ = 0;
  notices_.clear();
  capture_edges_ = {};
  settled_ns_ = 0;
}

void BatchEncoder::AddSettled(int64_t settled_ns, std::span<const SettledThread> threads) {
  settled_ns_ = settled_ns;
  for (const SettledThread& thread : threads) {
    // An empty event list, as readers expect one.
    auto events = builder_.CreateVectorOfStructs(static_cast<const wire::Event*>(nullptr), 0);
    threads_.push_back(wire::CreateThreadEvents(builder_, thread.tid, events, /*dropped=*/0, thread.instance,
                                                /*overhead=*/0, thread.settled_ns));
  }
}

void BatchEncoder::AddGpuActivities(std::span<const wire::GpuActivity> activities, uint64_t dropped) {
  if (!activities.empty()) gpu_activities_ = builder_.CreateVectorOfStructs(activities.data(), activities.size());
  gpu_dropped_ += dropped;
  batch_events_ += activities.size();
  batch_gpu_activities_ += activities.size();
}

void BatchEncoder::AddNotice(std::string_view topic, std::string_view status, std::string_view message) {
  notices_.push_back(wire::CreateNotice(builder_, builder_.CreateString(topic.data(), topic.size()),
                                        builder_.CreateString(status.data(), status.size()),
                                        builder_.CreateString(message.data(), message.size())));
}

void BatchEncoder::AddCaptureEdges(std::span<const wire::CaptureEdge> edges) {
  if (!edges.empty()) capture_edges_ = builder_.CreateVectorOfStructs(edges.data(), edges.size());
}

void BatchEncoder::AddModule(std::string_view path, uint64_t begin, uint64_t end, uint64_t load_bias) {
  modules_.push_back(
      wire::CreateModule(builder_, builder_.CreateString(path.data(), path.size()), begin, end, load_bias));
}

void BatchEncoder::AddString(uint32_t id, std::string_view text) {
  strings_.push_back(wire::CreateStringDef(builder_, id, builder_.CreateString(text.data(), text.size())));
}

void BatchEncoder::AddThreadInfo(uint32_t tid, uint64_t instance, std::string_view name) {
  infos_.push_back(wire::CreateThreadInfo(builder_, tid, builder_.CreateString(name.data(), name.size()), instance));
}

BatchEncoder::Frame BatchEncoder::FinishBatch() {
  auto batch =
      wire::CreateBatch(builder_, sequence_, builder_.CreateVector(strings_), builder_.CreateVector(infos_),
                        builder_.CreateVector(threads_), flushed_ns_,
                        modules_.empty() ? flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<wire::Module>>>()
                                         : builder_.CreateVector(modules_),
                        gpu_activities_, gpu_dropped_,
                        notices_.empty() ? flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<wire::Notice>>>()
                                         : builder_.CreateVector(notices_),
                        capture_edges_, settled_ns_);
  return Finish(wire::Message::Batch, batch.Union());
}

}  // namespace rlscope::preload
