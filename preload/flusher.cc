#include "preload/flusher.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "preload/capture_gate.h"
#include "preload/flush_signal.h"
#include "preload/gpu_activity_queue.h"
#include "preload/native_stack_sampler.h"
#include "preload/problem_notice.h"
#include "preload/python_hook.h"
#include "preload/python_hook_breakdown.h"
#include "preload/python_hook_sample.h"
#include "preload/raw_log.h"
#include "preload/recorder.h"
#include "preload/string_table.h"
#include "preload/thread_buffer.h"
#include "preload/thread_cpu_wait.h"
#include "preload/thread_idle.h"
#if RLSCOPE_WITH_CUDA
#include "preload/cupti_injection.h"
#endif

namespace rlscope::preload {

Flusher::Flusher(const char* socket_path, ClockSyncPoint origin, int forked_from)
    : connection_(socket_path), forked_from_(forked_from), previous_epoch_ticks_(origin.ticks) {
  clock_.Reset(origin);
  // Calls marked open from here on began after the origin.
  g_flush_epoch_ticks.store(origin.ticks, std::memory_order_relaxed);
}

int64_t Flusher::SettledNs(uint64_t epoch_ticks, int64_t now_ns) const {
  if (epoch_ticks < clock_.origin_ticks()) return 1;
  const int64_t epoch_ns = clock_.ToNs(epoch_ticks);
  // Ticks converted at different flushes agree to the nanosecond while
  // their segment is kept (tick_clock.h); older ones are converted from
  // the oldest kept, to within drift over their age: a margin of a
  // thousandth of the age covers it, 1 ms at least (which also covers a
  // begin read a few nanoseconds before the mark it follows is stored).
  const int64_t margin_ns = std::max<int64_t>(kSettledMarginNs, (now_ns - epoch_ns) / 1000);
  return std::max<int64_t>(epoch_ns - margin_ns, 1);
}

bool Flusher::Start() {
  CollectorConnection::PrepareHighFd();  // Before the flusher thread exists.
  // The flusher must never receive the program's signals: block them all
  // while creating it so the new thread inherits a full mask.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  started_ = CreateUntracedThread(&thread_, &Flusher::ThreadMain, this) == 0;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (!started_) RawLog("could not start the flusher thread; events will be sent at exit only");
  return started_;
}

void* Flusher::ThreadMain(void* self) {
  MarkThreadUntraced();
  pthread_setname_np(pthread_self(), "rlscope-flush");
  static_cast<Flusher*>(self)->Run();
  return nullptr;
}

void Flusher::Run() {
  while (!stop_requested_.load(std::memory_order_acquire)) {
    FlushSignal::WaitFor(kFlushIntervalMs);
    CaptureGate::Tick(MonotonicNs());
    if (lost_connection_) Reconnect();
    PostLossNotices();
    FlushOnce();
  }
  if (lost_connection_) Reconnect();
  PostLossNotices();
  FlushOnce();  // Catch what arrived between the last flush and Stop.
  if (!gave_up_ && connection_.connected()) {
    BatchEncoder goodbye;
    SendFrame(goodbye.EncodeGoodbye(MonotonicNs(), events_sent_ + events_dropped_, events_dropped_, stop_reason_));
  }
}

void Flusher::Stop(std::string_view reason) {
  stop_reason_ = reason;
  exit_deadline_ns_.store(MonotonicNs() + kExitTimeoutNs, std::memory_order_release);
  stop_requested_.store(true, std::memory_order_release);
  if (!started_) {
    Run();  // No thread: do the final flush here.
  } else {
    FlushSignal::Request();
    // Sends in flight observe the lowered deadline, so this wait is bounded.
    timespec until{};
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += kExitTimeoutNs / 1'000'000'000 + 1;
    if (pthread_timedjoin_np(thread_, nullptr, &until) != 0) {
      RawLog("the final flush did not finish in time; the last events of this process are lost");
      return;
    }
  }
  if (clock_.RateKnown()) LogPythonHookBreakdown(clock_.ns_per_tick());
  // An unreachable collector was announced when it happened (one line);
  // drops with a live collector (full buffers) are announced here. Both
  // counts reach the report (the Goodbye): notices, quiet under --quiet.
  if (events_dropped_ > 0 && !gave_up_) {
    RawNotice("%llu of %llu events were dropped because event buffers were full",
              static_cast<unsigned long long>(events_dropped_),
              static_cast<unsigned long long>(events_sent_ + events_dropped_));
  }
  if (gpu_dropped_ > 0 && !gave_up_) {
    RawNotice("%llu GPU activity records were lost (CUPTI's buffers overflowed); the report counts them",
              static_cast<unsigned long long>(gpu_dropped_));
  }
}

void Flusher::PostLossNotices() {
  const uint64_t stack_resets = PythonStackResets();
  const uint64_t given_up = PythonEntriesGivenUp();
  if (stack_resets != stack_resets_posted_ || given_up != entries_given_up_posted_) {
    stack_resets_posted_ = stack_resets;
    entries_given_up_posted_ = given_up;
    // One line with both numbers: the report keeps the last line per topic.
    char message[512];
    int length = 0;
    if (stack_resets > 0) {
      length = snprintf(message, sizeof(message),
                        "the Python hook's stack of open calls filled up %llu time(s) (stack switches it could not "
                        "follow) and was reset: the calls open then are missing; ",
                        static_cast<unsigned long long>(stack_resets));
    }
    if (given_up > 0 && length >= 0 && static_cast<size_t>(length) < sizeof(message)) {
      length += snprintf(message + length, sizeof(message) - static_cast<size_t>(length),
                         "the Python hook gave up %llu open call(s) whose return it did not see (stack switches such "
                         "as greenlet's switch(), or returns missed): those calls have no interval of their own, "
                         "while the code that ran meanwhile is recorded; ",
                         static_cast<unsigned long long>(given_up));
    }
    if (length >= 0 && static_cast<size_t>(length) < sizeof(message)) {
      snprintf(message + length, sizeof(message) - static_cast<size_t>(length), "recording went on");
    }
    CaptureNotices::Post("python-stack", "problem", message);
  }
  const uint64_t strings_lost = StringTable::Lost();
  if (strings_lost != strings_lost_posted_) {
    strings_lost_posted_ = strings_lost;
    char message[256];
    snprintf(message, sizeof(message),
             "%llu name lookup(s) did not fit rlscope's string table (%u names, %zu MiB of text) and show as "
             "\"%.*s\"",
             static_cast<unsigned long long>(strings_lost), StringTable::kMaxStrings, StringTable::kArenaBytes >> 20,
             static_cast<int>(StringTable::Text(StringTable::kOverflowId).size()),
             StringTable::Text(StringTable::kOverflowId).data());
    CaptureNotices::Post("strings", "problem", message);
  }
}

bool Flusher::EnsureConnected() {
  if (gave_up_ || lost_connection_) return false;  // Lost: Reconnect, between flushes.
  if (connection_.connected()) return true;
  return ConnectAndSayHello(ProcessIdentity::ReadCurrent(clock_.origin_ns(), forked_from_));
}

bool Flusher::ConnectAndSayHello(ProcessIdentity identity) {
  // A stalled collector (its backlog full) is waited for as a send is: as
  // long as the program runs, threads dropping and counting meanwhile.
  send_blocked_since_ns_ = 0;
  if (!connection_.Connect(&exit_deadline_ns_, &Flusher::ReclaimEndedThreads, this)) {
    if (errno == ETIMEDOUT) {
      RawLog(
          "the collector accepted no connection before this process's exit deadline (it stalled); this process "
          "is not recorded");
    } else if (errno == EPERM) {
      RawLog("the collector's socket is held by a process of another user; the program continues unprofiled");
    } else {
      RawLog("cannot reach the collector (%s); the program continues unprofiled", strerror(errno));
    }
    gave_up_ = true;
    return false;
  }
  NoteLowFd();
  // A process's first stream (a fork child's too) begins in the state
  // capture had when the process began: the edges since are in the batches
  // this Hello precedes, though some may already be encoded. A
  // reconnection's stream begins in the present state.
  identity.capture_closed_at_start = identity.continues_stream ? !CaptureOpen() : CaptureGate::ClosedAtStart();
  BatchEncoder hello;
  BatchEncoder::Frame frame = hello.EncodeHello(identity, TickClock::SourceName());
  if (!connection_.SendAll(frame.data(), frame.size(), INT64_MAX, &exit_deadline_ns_)) {
    LogSendFailure();
    gave_up_ = true;
    return false;
  }
  return true;
}

void Flusher::NoteLowFd() {
  if (!connection_.placed_low() || noted_low_fd_) return;
  noted_low_fd_ = true;
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  ReportProblem("collector-fd",
                "the open-file limit (RLIMIT_NOFILE %llu) is too low for rlscope's socket to stay out of the "
                "program's way: it uses fd %d, one of the program's own",
                static_cast<unsigned long long>(limit.rlim_cur), connection_.fd());
}

void Flusher::Reconnect() {
  lost_connection_ = false;
  if (gave_up_) return;
  if (++reconnects_ > kMaxReconnects) {
    RawLog("the program closed rlscope's socket %d times; the program continues unprofiled", kMaxReconnects);
    gave_up_ = true;
    return;
  }
  ProcessIdentity identity = ProcessIdentity::ReadCurrent(MonotonicNs(), forked_from_);
  identity.continues_stream = true;
  identity.lost_before_events = lost_since_disconnect_;
  if (!ConnectAndSayHello(std::move(identity))) return;
  // Said in the report only (the new Hello counts the loss): a program that
  // closed every fd may have made fd 2 one of its own files.
  lost_since_disconnect_ = 0;
  // A new stream: its ids, thread names and modules start undefined.
  strings_sent_ = 0;
  modules_.Forget();
  for (ThreadBuffer* buffer = ThreadRegistry::Head(); buffer != nullptr; buffer = buffer->next()) {
    buffer->name_sent_id = 0;
  }
}

void Flusher::LogSendFailure() {
  // Only the exit's deadline times a send out: the program is ending, and
  // the collector (alive, not reading) never sees the rest or its count.
  if (errno == ETIMEDOUT) {
    RawLog("the collector took nothing for the %d s the exit allows; the last events of this process are lost",
           static_cast<int>(kExitTimeoutNs / 1'000'000'000));
  } else {
    RawLog("lost the collector (%s); the program continues unprofiled", strerror(errno));
  }
}

// Sends wait for a live collector without a time limit: giving up would
// lose every later count, while waiting costs the program nothing (its
// threads drop and count). Stop lowers exit_deadline_ns_, which bounds them.
// A socket the program closed (EBADF) is made again by the next flush.
bool Flusher::SendFrame(BatchEncoder::Frame frame) {
  if (!EnsureConnected()) return false;
  send_blocked_since_ns_ = 0;
  if (!connection_.SendAll(frame.data(), frame.size(), INT64_MAX, &exit_deadline_ns_, &Flusher::ReclaimEndedThreads,
                           this)) {
    if (errno == EBADF) {
      lost_connection_ = true;
    } else {
      LogSendFailure();
      gave_up_ = true;
    }
    return false;
  }
  FlushSignal::NoteProgress();
  return true;
}

void Flusher::ReclaimEndedThreads(void* self) {
  auto* flusher = static_cast<Flusher*>(self);
  // At exit the final flush drains every ring anyway, and the Goodbye's
  // count is already fixed.
  if (flusher->stop_requested_.load(std::memory_order_acquire)) return;
  const int64_t now_ns = MonotonicNs();
  if (flusher->send_blocked_since_ns_ == 0) flusher->send_blocked_since_ns_ = now_ns;
  // A stall gives back every ended thread's ring. Any other push-back from
  // the collector keeps kMaxRetiredRingsWhileBlocked of them for the flush
  // to drain and gives back the rest: a collector slower than the threads
  // end (seen: catching up after a stall on a loaded machine, a ring a
  // millisecond for seconds, +190 MB) must cost the program bounded memory.
  const bool stalled = now_ns - flusher->send_blocked_since_ns_ >= kReclaimAfterBlockedNs;
  const size_t keep = stalled ? 0 : kMaxRetiredRingsWhileBlocked;
  size_t kept = 0;
  for (ThreadBuffer* buffer = ThreadRegistry::Head(); buffer != nullptr; buffer = buffer->next()) {
    if (buffer == flusher->reading_ || buffer->state() != ThreadBuffer::kRetired || kept++ < keep) continue;
    // The owner is gone: nothing writes this ring any more. Its hook
    // counts go too (the correction then misses them: this is rare).
    const uint64_t dropped = buffer->Discard();
    flusher->events_dropped_ += dropped;
    if (dropped > 0) flusher->reclaimed_.push_back({buffer->tid(), buffer->instance(), dropped});
    ThreadRegistry::ReleaseIfDrained(buffer);
  }
}

namespace {

// NextSpanBeginNs: where the thread's next blocked or CPU-wait span will
// begin (its last reading, or held blocked time), INT64_MAX if none.
int64_t NextSpanBeginNs(const ThreadBuffer& buffer, uint64_t instance) {
  int64_t begin = INT64_MAX;
  const IdleSample& idle = buffer.idle_sample;
  if (idle.instance != 0 && idle.instance == instance) {
    begin = idle.held_end_ns > idle.held_begin_ns ? std::min(idle.held_begin_ns, idle.wall_ns) : idle.wall_ns;
  }
  const CpuWaitReading& wait = buffer.cpu_wait_reading;
  if (wait.instance != 0 && wait.instance == instance && wait.valid) begin = std::min(begin, wait.wall_ns);
  return begin;
}

}  // namespace

void Flusher::AddIdleSpan(ThreadBuffer& buffer, uint32_t tid, uint64_t instance) {
  static constexpr IdleReader kReader{&ThreadCpuNs, &ThreadWaitedNs, &ThreadRunnable};
  BlockedSpan spans[2];
  const int count = NextIdleSample(buffer.idle_sample, tid, instance, MonotonicNs(), kReader, spans);
  if (count == 0) return;
  encoder_.AddThreadEvents(tid, instance, static_cast<uint32_t>(count), 0, {}, [&](wire::Event* out) {
    for (int i = 0; i < count; ++i) {
      out[i] =
          wire::Event(spans[i].begin_ns, spans[i].end_ns, 0, static_cast<uint16_t>(wire::EventKind::kThreadIdle), 0, 0);
    }
  });
}

void Flusher::AddCpuWaitSpan(ThreadBuffer& buffer, uint32_t tid, uint64_t instance, bool force) {
  CpuWaitSpan span;
  if (!NextCpuWaitSample(buffer.cpu_wait_reading, tid, instance, &MonotonicNs, force, &ThreadSchedstat, &span)) {
    return;
  }
  const auto runs = static_cast<uint32_t>(std::min<int64_t>(span.stat.runs, UINT32_MAX));
  encoder_.AddThreadEvents(tid, instance, 1, 0, {}, [&](wire::Event* out) {
    out[0] = wire::Event(span.begin_ns, span.end_ns, runs, static_cast<uint16_t>(wire::EventKind::kThreadCpuWait), 0,
                         wire::CpuWaitPayload(span.stat.ran_ns, span.stat.waited_ns));
  });
}

void Flusher::AddPendingStrings() {
  const uint32_t size = StringTable::Size();
  while (strings_sent_ < size && StringTable::Ready(strings_sent_)) {
    encoder_.AddString(strings_sent_, StringTable::Text(strings_sent_));
    ++strings_sent_;
  }
}

void Flusher::FlushOnce() {
  const bool final_flush = stop_requested_.load(std::memory_order_acquire);
  ClockSyncPoint now = TickClock::SamplePoint();
  const bool rate_was_known = clock_.RateKnown();
  clock_.Update(now);
  if (clock_.RateKnown() && !rate_was_known) {
    SetStackSampleTicksPerNs(1.0 / clock_.ns_per_tick());
    SetPythonHookSampleTicksPerNs(1.0 / clock_.ns_per_tick());
  }
  if (!clock_.RateKnown()) {
    // A later flush will know the tick rate, unless there is none: the
    // process is exiting, or crashing (the crash flush waits for this one).
    if (!final_flush && !FlushSignal::Awaited()) return;
    // Exit or crash of a process younger than kMinRateSpanNs: wait out the rest.
    while (!clock_.RateKnown()) {
      timespec pause{0, 200000};
      nanosleep(&pause, nullptr);
      now = TickClock::SamplePoint();
      clock_.Update(now);
    }
  }
  // A new flush epoch (recorder.h NoteCallOpen): a call whose mark this
  // flush does not see began after the previous epoch, or has been
  // recorded and is drained below.
  const int64_t settled_ns = SettledNs(previous_epoch_ticks_, now.monotonic_ns);
  previous_epoch_ticks_ = now.ticks;
  g_flush_epoch_ticks.store(now.ticks, std::memory_order_relaxed);
  settled_threads_.clear();
  // Collect every pending record; frames are cut at kMaxEventsPerFrame.
  // Read indices advance as records are encoded: a frame that then fails to
  // send is counted as dropped, not retried. Strings go in last, so every
  // id the frame's events use is defined by this frame or an earlier one.
  auto begin_batch = [&] { encoder_.BeginBatch(++sequence_, now.monotonic_ns); };
  // Module ranges before the events whose addresses they resolve; checked
  // after reading the rings would be too late for a just-loaded library,
  // so the first batch of this flush carries any change.
  const bool modules_changed = !gave_up_ && modules_.ChangedSinceLastSnapshot();
  auto send_batch = [&] {
    const size_t gpu = encoder_.batch_gpu_activities();
    const size_t events = encoder_.batch_events() - gpu;
    if (!gave_up_) AddPendingStrings();
    const bool sent = encoder_.batch_empty() || SendFrame(encoder_.FinishBatch());
    if (!sent || gave_up_) {
      events_dropped_ += events;
      gpu_dropped_ += gpu;
      if (!gave_up_) lost_since_disconnect_ += events + gpu;
    } else {
      events_sent_ += events;
    }
  };
  begin_batch();
  if (!gave_up_) {
    for (const ReclaimedThread& thread : reclaimed_) {
      encoder_.AddThreadEvents(thread.tid, thread.instance, 0, thread.dropped, {}, [](wire::Event*) {});
    }
  }
  reclaimed_.clear();
  if (modules_changed) {
    for (const ModuleRange& range : modules_.Snapshot()) {
      encoder_.AddModule(range.path, range.begin, range.end, range.load_bias);
    }
  }
  // Blocked spans (thread_idle.h), about every kIdleSampleIntervalNs (a
  // flush woken early by a filling ring does not sample again), only while
  // a capture window is open: a span never crosses a closed stretch.
  const bool capture_open = CaptureOpen();
  const bool sample_idle =
      !gave_up_ && capture_open && now.monotonic_ns - last_idle_sample_ns_ >= kIdleSampleIntervalNs / 2;
  if (sample_idle) last_idle_sample_ns_ = now.monotonic_ns;
  for (ThreadBuffer* buffer = ThreadRegistry::Head(); buffer != nullptr; buffer = buffer->next()) {
    const ThreadBuffer::State state = buffer->state();
    if (state == ThreadBuffer::kFree || state == ThreadBuffer::kClaiming) continue;
    if (!capture_open) buffer->idle_sample = {}, buffer->cpu_wait_reading = {};
    reading_ = buffer;  // Its read position is held in locals below.
    // Before the ring: a mark cleared after its record was appended.
    const uint64_t open_since = buffer->OldestOpenSince();
    const uint32_t tid = buffer->tid();
    uint64_t read = buffer->ReadIndex();
    const uint64_t write = buffer->WriteIndex();
    uint64_t dropped = buffer->TakeDropped();
    events_dropped_ += dropped;
    const uint64_t instance = buffer->instance();
    const uint32_t name_id = buffer->name_id();
    if ((buffer->name_sent_instance != instance || buffer->name_sent_id != name_id) && name_id != 0 && !gave_up_) {
      encoder_.AddThreadInfo(tid, instance, StringTable::Text(name_id));
      buffer->name_sent_instance = instance;
      buffer->name_sent_id = name_id;
    }
    // Unrecorded hook work since the last batch, sent with the thread's
    // first ThreadEvents of this batch (alone if it recorded nothing).
    wire::HookOverhead overhead[wire::kOverheadKindCount];
    size_t overhead_kinds = 0;
    for (int k = 1; k < wire::kOverheadKindCount; ++k) {
      const ThreadBuffer::OverheadDelta delta = buffer->TakeOverhead(static_cast<wire::OverheadKind>(k));
      if (delta.count == 0 && delta.ticks == 0) continue;
      const auto self_ns = static_cast<uint64_t>(static_cast<double>(delta.ticks) * clock_.ns_per_tick());
      overhead[overhead_kinds++] = wire::HookOverhead(delta.count, self_ns, static_cast<uint16_t>(k));
    }
    bool overhead_pending = overhead_kinds > 0;
    while (read < write || dropped > 0 || overhead_pending) {
      const uint64_t room = kMaxEventsPerFrame - std::min<uint64_t>(encoder_.batch_events(), kMaxEventsPerFrame);
      const uint32_t count = static_cast<uint32_t>(std::min<uint64_t>(write - read, room));
      if (gave_up_) {
        events_dropped_ += write - read;
        buffer->Consume(write - read);
        break;
      }
      const uint64_t first = read;
      const std::span<const wire::HookOverhead> overhead_now(overhead, overhead_pending ? overhead_kinds : 0);
      overhead_pending = false;
      encoder_.AddThreadEvents(tid, instance, count, dropped, overhead_now, [&](wire::Event* out) {
        for (uint32_t i = 0; i < count; ++i) {
          const EventRecord& r = buffer->At(first + i);
          // Stack frame records carry addresses where times usually go.
          const bool raw = r.kind == wire::EventKind::kNativeStackFrames;
          out[i] = wire::Event(raw ? static_cast<int64_t>(r.begin_ticks) : clock_.ToNs(r.begin_ticks),
                               raw ? static_cast<int64_t>(r.end_ticks) : clock_.ToNs(r.end_ticks), r.name_id,
                               static_cast<uint16_t>(r.kind), r.flags, r.payload);
        }
      });
      buffer->Consume(count);
      read += count;
      dropped = 0;
      if (encoder_.batch_events() >= kMaxEventsPerFrame) {
        send_batch();
        begin_batch();
      }
    }
    if (sample_idle && state == ThreadBuffer::kOwned) AddIdleSpan(*buffer, tid, instance);
    // Run and wait times at their own pace, and once more at the end.
    if ((sample_idle || (final_flush && capture_open && !gave_up_)) && state == ThreadBuffer::kOwned) {
      AddCpuWaitSpan(*buffer, tid, instance, final_flush);
    }
    // This thread's settled time, where a call still open or the next
    // blocked or CPU-wait span (made here, beginning at a past reading)
    // holds it below the batch's.
    int64_t thread_settled_ns = settled_ns;
    if (open_since != 0) thread_settled_ns = std::min(thread_settled_ns, SettledNs(open_since, now.monotonic_ns));
    if (state == ThreadBuffer::kOwned) {
      thread_settled_ns = std::min(thread_settled_ns, NextSpanBeginNs(*buffer, instance) - kSettledMarginNs);
    }
    if (thread_settled_ns < settled_ns)
      settled_threads_.push_back({tid, instance, std::max<int64_t>(thread_settled_ns, 1)});
    ThreadRegistry::ReleaseIfDrained(buffer);
    reading_ = nullptr;
  }
  AddGpuActivityAndNotices(send_batch, begin_batch);
  // Settled times ride on the flush's last batch when it has something to
  // send anyway: a batch of its own would cut the windows over which the
  // hooks' counted work is spread (and an idle process sends nothing).
  if (!gave_up_ && !encoder_.batch_empty()) encoder_.AddSettled(settled_ns, settled_threads_);
  send_batch();
}

template <typename SendFn, typename BeginFn>
void Flusher::AddGpuActivityAndNotices(SendFn& send_batch, BeginFn& begin_batch) {
#if RLSCOPE_WITH_CUDA
  // Ask CUPTI for what it completed meanwhile; it arrives in the queue.
  if (!stop_requested_.load(std::memory_order_acquire)) MaybeFlushGpuActivity();
#endif
  CaptureNotices::TakeAll(notices_scratch_);
  CaptureGate::TakeEdges(edges_scratch_);
  if (!gave_up_) {
    for (const CaptureNotice& notice : notices_scratch_)
      encoder_.AddNotice(notice.topic, notice.status, notice.message);
    for (wire::CaptureEdge& edge : edges_scratch_) {
      edge = wire::CaptureEdge(clock_.ToNs(static_cast<uint64_t>(edge.time_ns())), edge.open(), edge.reason(), 0, 0);
    }
    encoder_.AddCaptureEdges(edges_scratch_);
  }
  uint64_t lost = GpuActivityQueue::TakeAll(gpu_scratch_);
  if (gave_up_) {
    gpu_dropped_ += gpu_scratch_.size() + lost;
    return;
  }
  std::span<const wire::GpuActivity> rest(gpu_scratch_);
  while (!rest.empty() || lost > 0) {
    const size_t room = kMaxEventsPerFrame - std::min<size_t>(encoder_.batch_events(), kMaxEventsPerFrame);
    if (room == 0) {
      send_batch();
      begin_batch();
      continue;
    }
    const size_t take = std::min(room, rest.size());
    encoder_.AddGpuActivities(rest.first(take), lost);
    gpu_dropped_ += lost;
    lost = 0;
    rest = rest.subspan(take);
    if (!rest.empty()) {
      send_batch();
      begin_batch();
    }
  }
}

}  // namespace rlscope::preload
