// Flusher: the preload's background thread. Every kFlushIntervalMs (sooner
// when a ring is half full: FlushSignal; it sleeps on a futex, never on a
// file descriptor the program could close or reuse) it drains
// every thread's ring, converts ticks to nanoseconds, encodes a batch and
// sends it to the collector. At exit it drains once more and says Goodbye.
//
// If the collector cannot be reached or goes away, the flusher keeps
// draining and counts everything as dropped, so threads never block and
// memory never grows. One line goes to stderr when that happens. A
// collector that is there but not reading (stalled, swapped out, a slow
// disk) is waited for as long as the program runs: threads drop and count
// meanwhile, and the counts reach it when it reads again. Only the exit
// bounds that wait (kExitTimeoutNs). While a send waits, ended threads'
// rings beyond kMaxRetiredRingsWhileBlocked are given back, and once it
// has waited kReclaimAfterBlockedNs all of them (ReclaimEndedThreads), so
// a program that keeps starting threads while the collector stalls or
// lags holds one ring per live thread and a bounded number of ended ones,
// not one per thread it ever started.
#ifndef RLSCOPE_PRELOAD_FLUSHER_H_
#define RLSCOPE_PRELOAD_FLUSHER_H_

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "preload/batch_encoder.h"
#include "preload/collector_connection.h"
#include "preload/gpu_activity_queue.h"
#include "preload/module_tracker.h"
#include "preload/tick_clock.h"

namespace rlscope::preload {

class ThreadBuffer;

class Flusher {
 public:
  static constexpr int kFlushIntervalMs = 20;
  // The least margin SettledNs leaves below a flush epoch's time.
  static constexpr int64_t kSettledMarginNs = 1'000'000;
  // Events per frame: 32 K x 32 B = 1 MiB frames.
  static constexpr uint32_t kMaxEventsPerFrame = 32768;
  // Longest the last flush may take at the program's exit (sends in flight
  // are cut short too); the exit waits at most this plus one second.
  static constexpr int64_t kExitTimeoutNs = 3'000'000'000;

  Flusher(const char* socket_path, ClockSyncPoint origin, int forked_from);

  // Start: spawns the thread with all signals blocked. False if it could not.
  bool Start();
  // Stop: final drain + Goodbye, waiting at most kExitTimeoutNs.
  void Stop(std::string_view reason);
  // CloseInheritedConnection: in a fork() child, release the parent's socket
  // held by this (abandoned) instance without writing to it.
  void CloseInheritedConnection() { connection_.Close(); }

 private:
  static void* ThreadMain(void* self);
  void Run();
  // FlushOnce: drains everything pending into frames and sends them.
  void FlushOnce();
  // SendFrame: false when the frame was not sent (then counted as dropped).
  bool SendFrame(BatchEncoder::Frame frame);
  // ReclaimEndedThreads: while a send waits for the collector, ended
  // threads' rings beyond kMaxRetiredRingsWhileBlocked are freed for reuse,
  // and once it has waited kReclaimAfterBlockedNs (a stall) all of them;
  // their unsent records and drops count as dropped, per thread
  // (reclaimed_, sent by the next flush). Skips the ring being read.
  static void ReclaimEndedThreads(void* self);
  // A short wait is a busy collector: up to this many ended threads' rings
  // (up to a MiB each) wait to be drained as usual, so 64 threads ending
  // together lose nothing; more would make the program's memory grow with
  // how fast its threads end, not with how many run.
  static constexpr size_t kMaxRetiredRingsWhileBlocked = 64;
  // This long, it is a stall, and every ended thread's ring goes.
  static constexpr int64_t kReclaimAfterBlockedNs = 200'000'000;
  // AddIdleSpan: the thread's blocked time that its sample now tells
  // (thread_idle.h), as kThreadIdle events of their own.
  void AddIdleSpan(ThreadBuffer& buffer, uint32_t tid, uint64_t instance);
  // AddCpuWaitSpan: what the thread ran and waited for a CPU since its
  // last reading (thread_cpu_wait.h), when a reading is due or `force`d.
  void AddCpuWaitSpan(ThreadBuffer& buffer, uint32_t tid, uint64_t instance, bool force);
  // PostLossNotices: losses counted outside the rings (the Python hook's
  // stack resets, names the string table could not hold) go to the report
  // as "problem" notices, re-posted with the new total when it grows.
  void PostLossNotices();
  bool EnsureConnected();
  bool ConnectAndSayHello(ProcessIdentity identity);
  // Reconnect: after the program closed our socket, a new connection whose
  // Hello continues this process's stream; strings, thread names and
  // modules are sent again. At most kMaxReconnects times.
  void Reconnect();
  static constexpr int kMaxReconnects = 64;
  // NoteLowFd: says once (stderr and report) that the socket sits among
  // the program's own fds (a low RLIMIT_NOFILE).
  void NoteLowFd();
  // LogSendFailure: the one stderr line for a failed send (errno set).
  void LogSendFailure();
  void AddPendingStrings();
  // SettledNs: the time before which no call that marked itself open at
  // flush epoch `epoch_ticks` (recorder.h NoteCallOpen) began, less a
  // margin for the conversion; 1 (nothing settled) for an epoch from
  // before this stream's origin (a fork child's inherited call).
  int64_t SettledNs(uint64_t epoch_ticks, int64_t now_ns) const;
  // AddGpuActivityAndNotices: GPU records (CUPTI) and capture notices into
  // the current batch, cutting frames at kMaxEventsPerFrame.
  template <typename SendFn, typename BeginFn>
  void AddGpuActivityAndNotices(SendFn& send_batch, BeginFn& begin_batch);

  CollectorConnection connection_;
  BatchEncoder encoder_;
  ModuleTracker modules_;
  TickClock clock_;
  int forked_from_;
  pthread_t thread_{};
  bool started_ = false;
  std::atomic<bool> stop_requested_{false};
  // Sends give up at this time; lowered by Stop to bound the exit.
  std::atomic<int64_t> exit_deadline_ns_{INT64_MAX};
  std::string_view stop_reason_ = "exit";

  // Flusher-thread state.
  bool gave_up_ = false;          // Collector unreachable or gone: drop all.
  bool lost_connection_ = false;  // The program closed our socket: Reconnect.
  int reconnects_ = 0;
  uint64_t lost_since_disconnect_ = 0;  // Events in frames not sent meanwhile.
  bool noted_low_fd_ = false;
  const ThreadBuffer* reading_ = nullptr;  // The ring FlushOnce is draining.
  int64_t send_blocked_since_ns_ = 0;      // 0: the current send has not waited.
  int64_t last_idle_sample_ns_ = 0;        // When threads were last sampled for blocked spans.
  // The flush epoch published at the previous flush (g_flush_epoch_ticks;
  // the origin's ticks before the first), and the threads whose settled
  // time is earlier than the batch's (SettledNs).
  uint64_t previous_epoch_ticks_ = 0;
  std::vector<BatchEncoder::SettledThread> settled_threads_;
  // Ended threads whose rings were reclaimed: what they dropped, to send.
  struct ReclaimedThread {
    uint32_t tid;
    uint64_t instance;
    uint64_t dropped;
  };
  std::vector<ReclaimedThread> reclaimed_;
  uint64_t stack_resets_posted_ = 0;
  uint64_t entries_given_up_posted_ = 0;
  uint64_t strings_lost_posted_ = 0;
  uint32_t strings_sent_ = 0;
  uint64_t sequence_ = 0;
  uint64_t events_sent_ = 0;
  uint64_t events_dropped_ = 0;
  uint64_t gpu_dropped_ = 0;  // GPU records lost (CUPTI's or ours).
  std::vector<wire::GpuActivity> gpu_scratch_;
  std::vector<CaptureNotice> notices_scratch_;
  std::vector<wire::CaptureEdge> edges_scratch_;
};

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_FLUSHER_H_
