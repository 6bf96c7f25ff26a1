// LiveDecoding: decodes a run's traces while the command runs, on a thread
// of its own (report/run_decoding.h), so that once the command ends only
// the rest of the trace is decoded before the report is written: decoding
// was most of the report stage's time (docs/architecture.md, section 3).
//
// Whether it runs (ShouldDecodeDuringRun): RLSCOPE_LIVE_DECODING=1 or 0
// (also on/off, yes/no, true/false) decides; otherwise it runs when
// rlscope may use at least 4 CPUs (its affinity, and a container's CPU
// quota). Decoding takes a CPU of its own while it keeps up with the
// trace, and on a machine of 2 it would take one from the program being
// measured. The thread runs 10 nice levels below rlscope.
#ifndef RLSCOPE_COLLECTOR_LIVE_DECODING_H_
#define RLSCOPE_COLLECTOR_LIVE_DECODING_H_

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "report/run_decoding.h"

namespace rlscope::collector {

// ShouldDecodeDuringRun: the policy above; `env_value` is
// RLSCOPE_LIVE_DECODING's value (null: unset), `cpus` the CPUs rlscope may
// run on.
bool ShouldDecodeDuringRun(const char* env_value, int cpus);

// UsableCpus: the CPUs this process may run on: its affinity mask,
// lowered to the cgroup v2 CPU quota (cpu.max) of its cgroup or above.
int UsableCpus();

// CpuQuota: the whole CPUs a cpu.max line ("QUOTA PERIOD" in
// microseconds, or "max PERIOD") allows, at least 1; nullopt for no limit
// or bad text.
std::optional<int> CpuQuota(const std::string& cpu_max_text);

class LiveDecoding {
 public:
  // Starts following `run_dir`'s traces, every kInterval; `for_correction`
  // as RunDecoding's.
  LiveDecoding(const std::string& run_dir, bool for_correction);
  ~LiveDecoding();
  LiveDecoding(const LiveDecoding&) = delete;
  LiveDecoding& operator=(const LiveDecoding&) = delete;

  // Stop: once the traces are closed, stops the thread (after the read in
  // progress) and hands over the decoding, to be finished (LoadRequest's
  // `started`).
  std::unique_ptr<report::RunDecoding> Stop();

  static constexpr std::chrono::milliseconds kInterval{250};

 private:
  void Loop();

  std::unique_ptr<report::RunDecoding> decoding_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_LIVE_DECODING_H_
