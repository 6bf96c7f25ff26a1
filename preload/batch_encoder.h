// BatchEncoder: turns process identity, interned strings and drained event
// records into size-prefixed FlatBuffers frames (wire_format.h). Runs on the
// flusher thread only; this is where allocation is allowed.
#ifndef RLSCOPE_PRELOAD_BATCH_ENCODER_H_
#define RLSCOPE_PRELOAD_BATCH_ENCODER_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flatbuffers/flatbuffers.h"
#include "format/launcher_rank.h"
#include "format/wire_format.h"

namespace rlscope::preload {

struct ProcessIdentity {
  int pid = 0;
  int ppid = 0;
  int forked_from = 0;  // Parent pid when this process is a fork() child.
  int64_t start_ns = 0;
  int64_t start_unix_ns = 0;
  uint64_t proc_start_ticks = 0;  // /proc/self/stat starttime.
  std::string executable;
  std::vector<std::string> argv;
  // A reconnection's stream (see Hello.continues_stream).
  bool continues_stream = false;
  uint64_t lost_before_events = 0;
  // Capture was closed when this stream began (capture_gate.h).
  bool capture_closed_at_start = false;
  // Its rank in a distributed job, from the environment it started with.
  LauncherRank rank;

  // ReadCurrent fills the identity of the calling process from /proc.
  static ProcessIdentity ReadCurrent(int64_t start_ns, int forked_from);
  // ReadStartEnvironment: reads the launcher's rank from `environment`
  // (environ) once, at start-up: a program may overwrite that memory later
  // (setproctitle does), and a fork child keeps what was read.
  static void ReadStartEnvironment(const char* const* environment);
};

class BatchEncoder {
 public:
  using Frame = std::span<const uint8_t>;

  Frame EncodeHello(const ProcessIdentity& identity, const char* clock_source);
  Frame EncodeGoodbye(int64_t end_ns, uint64_t recorded, uint64_t dropped, std::string_view reason);

  // A batch is built in steps: Begin, any number of Add*, Finish.
  // `flushed_ns`: when the batch was cut (CLOCK_MONOTONIC).
  void BeginBatch(uint64_t sequence, int64_t flushed_ns);
  void AddString(uint32_t id, std::string_view text);
  void AddThreadInfo(uint32_t tid, uint64_t instance, std::string_view name);
  void AddModule(std::string_view path, uint64_t begin, uint64_t end, uint64_t load_bias);
  // AddThreadEvents adds `count` events of thread (`tid`, `instance`),
  // written in place by fill(wire::Event* slots) (no intermediate copy).
  // `overhead`: the thread's unrecorded hook work since its previous
  // ThreadEvents (may be empty).
  template <typename FillFn>
  void AddThreadEvents(uint32_t tid, uint64_t instance, uint32_t count, uint64_t dropped,
                       std::span<const wire::HookOverhead> overhead, FillFn fill) {
    wire::Event* slots = nullptr;
    auto events = builder_.CreateUninitializedVectorOfStructs<wire::Event>(count, &slots);
    fill(slots);  // Before the next builder call: growing the builder moves its bytes.
    flatbuffers::Offset<flatbuffers::Vector<const wire::HookOverhead*>> overhead_vector;
    if (!overhead.empty()) overhead_vector = builder_.CreateVectorOfStructs(overhead.data(), overhead.size());
    threads_.push_back(wire::CreateThreadEvents(builder_, tid, events, dropped, instance, overhead_vector));
    batch_events_ += count;
  }
  // AddGpuActivities: GPU records and the count of lost ones (once per
  // batch; the records count towards batch_events()).
  void AddGpuActivities(std::span<const wire::GpuActivity> activities, uint64_t dropped);
  void AddNotice(std::string_view topic, std::string_view status, std::string_view message);
  // AddCaptureEdges: capture windows' edges since the last batch (once per
  // batch, at most).
  void AddCaptureEdges(std::span<const wire::CaptureEdge> edges);
  // AddSettled: the batch's settled time and the threads settled up to an
  // earlier time of their own (rlscope_trace.fbs Batch.settled_ns; once per
  // batch, the last of a flush).
  struct SettledThread {
    uint32_t tid;
    uint64_t instance;
    int64_t settled_ns;
  };
  void AddSettled(int64_t settled_ns, std::span<const SettledThread> threads);
  size_t batch_events() const { return batch_events_; }
  size_t batch_gpu_activities() const { return batch_gpu_activities_; }
  bool batch_empty() const {
    return strings_.empty() && infos_.empty() && threads_.empty() && modules_.empty() && gpu_activities_.IsNull() &&
           gpu_dropped_ == 0 && notices_.empty() && capture_edges_.IsNull() && settled_ns_ == 0;
  }
  Frame FinishBatch();

 private:
  Frame Finish(wire::Message type, flatbuffers::Offset<void> message);

  flatbuffers::FlatBufferBuilder builder_{1 << 16};
  uint64_t sequence_ = 0;
  int64_t flushed_ns_ = 0;
  size_t batch_events_ = 0;  // Thread events and GPU activities.
  size_t batch_gpu_activities_ = 0;
  std::vector<flatbuffers::Offset<wire::StringDef>> strings_;
  std::vector<flatbuffers::Offset<wire::ThreadInfo>> infos_;
  std::vector<flatbuffers::Offset<wire::ThreadEvents>> threads_;
  std::vector<flatbuffers::Offset<wire::Module>> modules_;
  flatbuffers::Offset<flatbuffers::Vector<const wire::GpuActivity*>> gpu_activities_;
  uint64_t gpu_dropped_ = 0;
  std::vector<flatbuffers::Offset<wire::Notice>> notices_;
  flatbuffers::Offset<flatbuffers::Vector<const wire::CaptureEdge*>> capture_edges_;
  int64_t settled_ns_ = 0;
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_BATCH_ENCODER_H_
