// UncontendedTimer: times a workload's loop so that a busy machine does not
// inflate it. A cost is the difference of two loops' times (profiled minus
// unprofiled): a preemption during one of them lands entirely in that
// difference, and on a loaded machine (a build, a neighbour's job) it
// swamps what is measured (seen: a CUDA call's CUPTI cost 9x too high).
//
// So the loop runs in slices of about kSliceTargetNs, and around each slice
// the thread's run delay (the time it waited, runnable, for a CPU: the
// kernel's schedstat, /proc/thread-self/schedstat) is read. A slice that
// waited more than a tenth of its length is set aside; the others count,
// less what little they waited. The estimate is the kept slices' time per
// iteration times all iterations. Slices are short next to a scheduler time
// slice (milliseconds), so a preemption spoils few of them. Time the
// program spends on the CPU is all kept: a cost that comes with profiling
// (a buffer handed over every N calls) is in the kept slices at its rate.
//
// A wait the kernel does not see is set aside too: on a VM the hypervisor
// runs other guests on this CPU (steal time, 17-24 % on a CI machine, in
// bursts of milliseconds), and the thread seems to run all along. Such a
// slice takes several times as long per iteration as the loop's others,
// so slices slower per iteration than kOutlierFactor times the median
// slice are set aside as well. The factor leaves in the slices a periodic
// cost of profiling lands in (a few tens of microseconds in a slice of
// 200); a cost that doubles a slice is rarer than one slice in two, or it
// is the median.
//
// Where the kernel does not report run delays, slices are judged by their
// length alone.
//
// What this also sets aside: a wait for a CPU that rlscope's own flusher
// thread caused (on a machine with no core to spare it takes the
// program's). That is a real cost of profiling there, which the correction
// then misses; on a machine with a free core the flusher runs beside the
// program and causes none. kept_fraction, printed with each loop, shows how
// much was set aside.
#ifndef RLSCOPE_CALIBRATION_WORKLOADS_UNCONTENDED_TIMER_H_
#define RLSCOPE_CALIBRATION_WORKLOADS_UNCONTENDED_TIMER_H_

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

namespace rlscope::calibration {

class UncontendedTimer {
 public:
  static constexpr int64_t kSliceTargetNs = 200'000;
  static constexpr double kOutlierFactor = 2.0;

  UncontendedTimer() : schedstat_fd_(open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)) {}
  ~UncontendedTimer() {
    if (schedstat_fd_ >= 0) close(schedstat_fd_);
  }
  UncontendedTimer(const UncontendedTimer&) = delete;
  UncontendedTimer& operator=(const UncontendedTimer&) = delete;

  // Time: runs `iterations` iterations as run(first, count) calls (first
  // counts from 0 within this Time), each slice timed.
  template <typename Run>
  void Time(int64_t iterations, Run&& run) {
    for (int64_t done = 0; done < iterations;) {
      const int64_t count = std::min(slice_iterations_, iterations - done);
      const int64_t delay_before = RunDelayNs();
      const int64_t begin = NowNs();
      run(done, count);
      const int64_t elapsed = NowNs() - begin;
      const int64_t delay_after = RunDelayNs();
      AddSlice(count, elapsed, delay_before >= 0 && delay_after >= delay_before ? delay_after - delay_before : 0);
      done += count;
      // Next slice about kSliceTargetNs long (both loops size their own).
      if (elapsed > 0) {
        const double scaled = static_cast<double>(count) * static_cast<double>(kSliceTargetNs) / elapsed;
        slice_iterations_ = std::clamp<int64_t>(static_cast<int64_t>(scaled), 1, std::max<int64_t>(1, 4 * count));
      } else {
        slice_iterations_ *= 2;
      }
    }
  }

  // AddSlice: one slice of `count` iterations that took elapsed_ns, of
  // which the thread waited waited_ns for a CPU (Time's bookkeeping; public
  // so that the estimate can be checked on slices of known times).
  void AddSlice(int64_t count, int64_t elapsed_ns, int64_t waited_ns) {
    iterations_ += count;
    wall_ns_ += elapsed_ns;
    if (waited_ns * 10 > elapsed_ns) return;  // Preempted: set aside.
    slices_.push_back({count, elapsed_ns - waited_ns});
  }

  int64_t wall_ns() const { return wall_ns_; }
  // estimated_ns: the loop's time without waits for a CPU (wall time when no
  // slice could be kept).
  int64_t estimated_ns() const { return EstimatedNs(KeptSlices()); }
  // kept_fraction: of the iterations, those in kept slices (1 on a quiet
  // machine; low values say the estimate rests on little).
  double kept_fraction() const { return KeptFraction(KeptSlices()); }
  // JsonFields: `"elapsed_ns": E, "wall_ns": W, "kept_fraction": F` for
  // the workload's result line (elapsed_ns is what rlscope calibrate reads).
  std::string JsonFields() const {
    char text[160];
    const Kept kept = KeptSlices();  // Sorts the slices: once for both figures.
    snprintf(text, sizeof(text), "\"elapsed_ns\": %lld, \"wall_ns\": %lld, \"kept_fraction\": %.4f",
             static_cast<long long>(EstimatedNs(kept)), static_cast<long long>(wall_ns_), KeptFraction(kept));
    return text;
  }

 private:
  static int64_t NowNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
  }

  // RunDelayNs: field 2 of schedstat, -1 when unavailable.
  int64_t RunDelayNs() const {
    if (schedstat_fd_ < 0) return -1;
    char text[128];
    const ssize_t n = pread(schedstat_fd_, text, sizeof(text) - 1, 0);
    if (n <= 0) return -1;
    text[n] = '\0';
    char* rest = nullptr;
    strtoll(text, &rest, 10);
    if (rest == text) return -1;
    return strtoll(rest, nullptr, 10);
  }

  struct Slice {
    int64_t iterations;
    int64_t ns;  // Less the run delay.
  };
  struct Kept {
    int64_t iterations = 0;
    int64_t ns = 0;
  };

  int64_t EstimatedNs(const Kept& kept) const {
    if (kept.iterations == 0 || iterations_ == 0) return wall_ns_;
    return static_cast<int64_t>(static_cast<double>(kept.ns) / static_cast<double>(kept.iterations) *
                                static_cast<double>(iterations_));
  }
  double KeptFraction(const Kept& kept) const {
    return iterations_ == 0 ? 1.0 : static_cast<double>(kept.iterations) / static_cast<double>(iterations_);
  }

  static double PerIteration(const Slice& slice) {
    return static_cast<double>(slice.ns) / static_cast<double>(slice.iterations);
  }

  // KeptSlices: the slices not preempted and not slower per iteration than
  // kOutlierFactor times their median (weighted by iterations).
  Kept KeptSlices() const {
    Kept kept;
    if (slices_.empty()) return kept;
    std::vector<Slice> sorted = slices_;
    std::sort(sorted.begin(), sorted.end(),
              [](const Slice& a, const Slice& b) { return PerIteration(a) < PerIteration(b); });
    int64_t total = 0;
    for (const Slice& slice : sorted) total += slice.iterations;
    double median = PerIteration(sorted.back());
    int64_t seen = 0;
    for (const Slice& slice : sorted) {
      seen += slice.iterations;
      if (2 * seen >= total) {
        median = PerIteration(slice);
        break;
      }
    }
    for (const Slice& slice : sorted) {
      if (PerIteration(slice) > kOutlierFactor * median) break;
      kept.iterations += slice.iterations;
      kept.ns += slice.ns;
    }
    return kept;
  }

  const int schedstat_fd_;
  int64_t slice_iterations_ = 16;
  int64_t iterations_ = 0;
  int64_t wall_ns_ = 0;
  std::vector<Slice> slices_;  // The slices not preempted.
};

}  // namespace rlscope::calibration

#endif  // RLSCOPE_CALIBRATION_WORKLOADS_UNCONTENDED_TIMER_H_
