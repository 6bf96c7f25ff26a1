#include "collector/live_decoding.h"

#include <sched.h>

#include <cstring>
#include <utility>

namespace rlscope::collector {

bool ShouldDecodeDuringRun(const char* env_value, int cpus) {
  if (env_value != nullptr && strcmp(env_value, "1") == 0) return true;
  if (env_value != nullptr && strcmp(env_value, "0") == 0) return false;
  return cpus >= 4;
}

int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return CPU_COUNT(&set);
}

LiveDecoding::LiveDecoding(const std::string& run_dir, bool for_correction)
    : decoding_(std::make_unique<report::RunDecoding>(run_dir, for_correction)), thread_([this] { Loop(); }) {}

LiveDecoding::~LiveDecoding() { Stop(); }

void LiveDecoding::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    const bool following = decoding_->Follow();
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
