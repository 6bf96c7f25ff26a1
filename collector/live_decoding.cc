#include "collector/live_decoding.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "report/memory_budget.h"

namespace rlscope::collector {

bool ShouldDecodeDuringRun(const char* env_value, int cpus) {
  const std::string value = env_value != nullptr ? env_value : "";
  if (value == "1" || value == "on" || value == "yes" || value == "true") return true;
  if (value == "0" || value == "off" || value == "no" || value == "false") return false;
  return cpus >= 4;
}

std::optional<int> CpuQuota(const std::string& cpu_max_text) {
  std::istringstream in(cpu_max_text);
  std::string quota;
  long long period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return std::nullopt;
  char* end = nullptr;
  const long long microseconds = strtoll(quota.c_str(), &end, 10);
  if (end == quota.c_str() || *end != '\0' || microseconds <= 0) return std::nullopt;
  // Whole CPUs (a quota of 3.5 leaves the program too little beside the
  // decoding), at least 1.
  return static_cast<int>(std::clamp<long long>(microseconds / period, 1, 1 << 20));
}

int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  // A container's CPU quota (cgroup v2 cpu.max), on this cgroup or above.
  for (const std::string& dir : report::CgroupDirsUpward(report::CgroupDirOfThisProcess())) {
    std::ifstream file(dir + "/cpu.max");
    std::string text;
    if (file && std::getline(file, text)) {
      if (std::optional<int> quota = CpuQuota(text)) cpus = std::min(cpus, *quota);
    }
  }
  return cpus;
}

LiveDecoding::LiveDecoding(const std::string& run_dir, bool for_correction)
    : decoding_(std::make_unique<report::RunDecoding>(run_dir, for_correction)), thread_([this] { Loop(); }) {}

LiveDecoding::~LiveDecoding() { Stop(); }

void LiveDecoding::Loop() {
  // Below the program and the receiver (10 nice levels lower: a tenth of
  // their weight when they compete for a CPU): a decoding that falls
  // behind only leaves more for the end.
  const id_t thread = static_cast<id_t>(gettid());
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, thread);
  if (errno == 0) setpriority(PRIO_PROCESS, thread, std::min(nice + 10, 19));
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    bool following = false;
    try {
      following = decoding_->Follow();
    } catch (...) {
      // Out of memory, say: the end of the run decodes afresh.
      decoding_->Abandon();
    }
    lock.lock();
    if (!following) return;  // Over the memory budget: the end of the run decides.
    wake_.wait_for(lock, kInterval, [this] { return stopping_; });
  }
}

std::unique_ptr<report::RunDecoding> LiveDecoding::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  return std::move(decoding_);
}

}  // namespace rlscope::collector
