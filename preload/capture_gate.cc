#include "preload/capture_gate.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "preload/raw_log.h"
#include "preload/string_table.h"
#include "preload/tick_clock.h"

// glibc's own sigaction: the preload wraps sigaction() (fatal_signal_flush.h).
extern "C" int __sigaction(int signal_number, const struct sigaction* action, struct sigaction* old_action);

namespace rlscope::preload {

constinit std::atomic<bool> g_capture_open{true};
constinit uint32_t g_capture_operation = 0;
constinit uint32_t g_capture_range_name = 0;

namespace {

// All constant-initialized (process_runtime.cc: no dynamic initializers).
constinit bool g_closed_at_start = false;
constinit bool g_api = false;
constinit bool g_profiler_api = false;
constinit int64_t g_open_ns = 0;
constinit int64_t g_close_ns = INT64_MAX;
constinit bool g_timer_opened = false;
constinit std::atomic<bool> g_ended{false};  // The window ended for good (timer or instances).
constinit std::atomic<unsigned> g_signals{0};
constinit uint64_t g_skip = 0, g_count = 0;  // --skip N, --capture M (0: unbounded).
constinit uint64_t g_every = 0;              // --every P: the window of M repeats every P (0: once).
constinit std::atomic<uint64_t> g_instances{0};
constinit pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
// Heap-allocated once at Init and never freed: hooks may run during
// static destruction. Guarded by g_mutex.
constinit std::vector<wire::CaptureEdge>* g_pending = nullptr;
// The NVTX ranges named RLSCOPE_CAPTURE_RANGE now open, guarded by
// g_mutex: push ranges counted (all threads), start/end ones by id (they
// may end on another thread). Start/end ranges beyond kMaxOpenRangeIds
// open at once do not hold the window (said once).
constinit int64_t g_open_pushes = 0;
constexpr int kMaxOpenRangeIds = 64;
constinit uint64_t g_open_range_ids[kMaxOpenRangeIds] = {};
constinit std::atomic<int> g_open_range_id_count{0};
constinit std::atomic<int64_t> g_closed_since_ns{0};
constinit std::atomic<void (*)()> g_open_listener{nullptr};
constinit bool g_range_ids_overflowed = false;

int64_t EnvNs(const char* name, int64_t fallback) {
  const char* text = getenv(name);
  if (text == nullptr || text[0] == '\0') return fallback;
  char* end = nullptr;
  const long long value = strtoll(text, &end, 10);
  return end != nullptr && *end == '\0' ? static_cast<int64_t>(value) : fallback;
}

void OnCaptureSignal(int) { g_signals.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

void CaptureGate::Init() {
  // Once per process; the resets are for tests, which call it again.
  if (g_pending == nullptr) g_pending = new std::vector<wire::CaptureEdge>();
  g_pending->clear();
  g_capture_range_name = g_capture_operation = 0;
  g_skip = g_count = g_every = 0;
  g_instances.store(0, std::memory_order_relaxed);
  g_ended.store(false, std::memory_order_relaxed);
  g_signals.store(0, std::memory_order_relaxed);
  g_open_pushes = 0;
  g_open_range_id_count.store(0, std::memory_order_relaxed);
  g_open_ns = EnvNs("RLSCOPE_CAPTURE_OPEN_NS", 0);
  g_close_ns = EnvNs("RLSCOPE_CAPTURE_CLOSE_NS", INT64_MAX);
  const char* api = getenv("RLSCOPE_CAPTURE_API");
  g_api = api != nullptr && api[0] == '1';
  const char* profiler_api = getenv("RLSCOPE_CAPTURE_PROFILER_API");
  g_profiler_api = profiler_api != nullptr && profiler_api[0] == '1';
  if (const char* range = getenv("RLSCOPE_CAPTURE_RANGE"); range != nullptr && range[0] != '\0') {
    g_capture_range_name = StringTable::Intern(range);
  }
  if (const char* operation = getenv("RLSCOPE_CAPTURE_OP"); operation != nullptr && operation[0] != '\0') {
    g_skip = static_cast<uint64_t>(std::max<int64_t>(0, EnvNs("RLSCOPE_CAPTURE_SKIP", 0)));
    g_count = static_cast<uint64_t>(std::max<int64_t>(0, EnvNs("RLSCOPE_CAPTURE_COUNT", 0)));
    // A period only with a window shorter than it (the launcher checks).
    const auto every = static_cast<uint64_t>(std::max<int64_t>(0, EnvNs("RLSCOPE_CAPTURE_EVERY", 0)));
    if (g_count > 0 && every > g_count) g_every = every;
    g_capture_operation = StringTable::Intern(operation);
  }
  const int signal_number = static_cast<int>(EnvNs("RLSCOPE_CAPTURE_SIGNAL", 0));
  if (signal_number > 0 && signal_number < NSIG) {
    struct sigaction action {};
    action.sa_handler = &OnCaptureSignal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (__sigaction(signal_number, &action, nullptr) != 0) {
      RawLog("cannot handle signal %d for --capture-signal (%s): capture stays closed", signal_number, strerror(errno));
    }
  }
  const int64_t now = MonotonicNs();
  // Closed at start when something else is to open it: a delay still to
  // come, an API, a range, or the signal.
  const bool delayed = g_open_ns > now;
  g_timer_opened = !delayed;
  g_closed_at_start = delayed || g_api || g_profiler_api || g_capture_range_name != 0 || signal_number > 0 ||
                      now >= g_close_ns || (g_capture_operation != 0 && g_skip > 0);
  if (now >= g_close_ns) g_ended.store(true, std::memory_order_relaxed);
  g_capture_open.store(!g_closed_at_start, std::memory_order_relaxed);
  g_closed_since_ns.store(now, std::memory_order_relaxed);
}

bool CaptureGate::ClosedAtStart() { return g_closed_at_start; }

bool CaptureGate::ApiControlled() { return g_api; }

bool CaptureGate::ProfilerApiControlled() { return g_profiler_api; }

void CaptureGate::OnProfilerApi(bool start) {
  if (g_profiler_api) Set(start, wire::CaptureReason::kProfilerApi);
}

namespace {

// SetLocked: Set with g_mutex held, the edge at `ticks` (the hot path's
// clock, which the flusher converts as it converts events: an edge and the
// events around it are ordered alike).
bool SetLocked(bool open, wire::CaptureReason reason, uint64_t ticks) {
  if (open && g_ended.load(std::memory_order_relaxed)) open = false;
  if (open != CaptureOpen()) {
    g_capture_open.store(open, std::memory_order_relaxed);
    if (!open) g_closed_since_ns.store(MonotonicNs(), std::memory_order_relaxed);
    if (void (*listener)() = g_open_listener.load(std::memory_order_relaxed); open && listener != nullptr) listener();
    if (g_pending != nullptr) {
      const wire::CaptureEdge edge(static_cast<int64_t>(ticks), open ? 1 : 0, static_cast<uint8_t>(reason), 0, 0);
      g_pending->push_back(edge);
    }
  }
  return open;
}

}  // namespace

bool CaptureGate::Set(bool open, wire::CaptureReason reason) {
  pthread_mutex_lock(&g_mutex);
  open = SetLocked(open, reason, NowTicks());
  pthread_mutex_unlock(&g_mutex);
  return open;
}

void CountCaptureInstance(uint64_t push_ticks) {
  // The edge at the push itself: the instance that opens the window begins
  // inside it (a window is [open, close)), the one that ends it does not.
  const uint64_t seen = g_instances.fetch_add(1, std::memory_order_relaxed) + 1;
  if (g_every > 0) {
    // Instance k (0-based, after the skip) opens a window at every
    // multiple of the period and closes it M instances later. Under the
    // lock the state follows the count as it is then, not this push's
    // view of it: a push of another thread that closed the window may
    // have taken the lock first (without the GIL: native or NVTX pushes),
    // and this late opening must not hold capture open for a period.
    if (seen <= g_skip) return;
    const uint64_t phase = (seen - g_skip - 1) % g_every;
    if (phase != 0 && phase != g_count) return;
    pthread_mutex_lock(&g_mutex);
    const uint64_t now_seen = g_instances.load(std::memory_order_relaxed);
    SetLocked((now_seen - g_skip - 1) % g_every < g_count, wire::CaptureReason::kInstances, push_ticks);
    pthread_mutex_unlock(&g_mutex);
    return;
  }
  const bool opens = seen == g_skip + 1, closes = g_count > 0 && seen == g_skip + g_count + 1;
  if (!opens && !closes) return;
  pthread_mutex_lock(&g_mutex);
  if (opens) SetLocked(true, wire::CaptureReason::kInstances, push_ticks);
  if (closes) {
    SetLocked(false, wire::CaptureReason::kInstances, push_ticks);
    g_ended.store(true, std::memory_order_relaxed);
  }
  pthread_mutex_unlock(&g_mutex);
}

namespace {

// SetRangeStateLocked: open while any capture range is; `ticks` 0: now.
void SetRangeStateLocked(uint64_t ticks) {
  SetLocked(g_open_pushes > 0 || g_open_range_id_count.load(std::memory_order_relaxed) > 0,
            wire::CaptureReason::kNvtxRange, ticks != 0 ? ticks : NowTicks());
}

}  // namespace

bool CaptureRangeIdsOpen() { return g_open_range_id_count.load(std::memory_order_relaxed) > 0; }

void NoteCaptureRangePush(bool begins, uint64_t ticks) {
  if (g_capture_range_name == 0) return;
  pthread_mutex_lock(&g_mutex);
  // A pop of more than were pushed (one pushed before a fork on another
  // thread) cannot close what it never opened.
  g_open_pushes = begins ? g_open_pushes + 1 : std::max<int64_t>(0, g_open_pushes - 1);
  SetRangeStateLocked(ticks);
  pthread_mutex_unlock(&g_mutex);
}

void NoteCaptureRangeStart(uint64_t range_id, uint64_t ticks) {
  if (g_capture_range_name == 0) return;
  pthread_mutex_lock(&g_mutex);
  if (const int count = g_open_range_id_count.load(std::memory_order_relaxed); count < kMaxOpenRangeIds) {
    g_open_range_ids[count] = range_id;
    g_open_range_id_count.store(count + 1, std::memory_order_relaxed);
    SetRangeStateLocked(ticks);
  } else if (!g_range_ids_overflowed) {
    g_range_ids_overflowed = true;
    RawLog(
        "more than %d start/end ranges of the capture range's name are open at once; the others do not hold "
        "capture open",
        kMaxOpenRangeIds);
  }
  pthread_mutex_unlock(&g_mutex);
}

void NoteCaptureRangeEnd(uint64_t range_id, uint64_t ticks) {
  if (g_capture_range_name == 0) return;
  pthread_mutex_lock(&g_mutex);
  const int count = g_open_range_id_count.load(std::memory_order_relaxed);
  for (int i = 0; i < count; ++i) {
    if (g_open_range_ids[i] != range_id) continue;
    g_open_range_ids[i] = g_open_range_ids[count - 1];
    g_open_range_id_count.store(count - 1, std::memory_order_relaxed);
    SetRangeStateLocked(ticks);
    break;
  }
  pthread_mutex_unlock(&g_mutex);
}

void CaptureGate::Tick(int64_t now_ns) {
  if (!g_ended.load(std::memory_order_relaxed) && now_ns >= g_close_ns) {
    pthread_mutex_lock(&g_mutex);
    SetLocked(false, wire::CaptureReason::kTimer, NowTicks());
    g_ended.store(true, std::memory_order_relaxed);  // With the close, so no start() reopens in between.
    pthread_mutex_unlock(&g_mutex);
  } else if (!g_timer_opened && now_ns >= g_open_ns) {
    g_timer_opened = true;
    Set(true, wire::CaptureReason::kTimer);
  }
  // An even number of signals since the last tick leaves capture as it was.
  if (g_signals.exchange(0, std::memory_order_relaxed) % 2 == 1) {
    pthread_mutex_lock(&g_mutex);  // The state read and flipped as one.
    SetLocked(!CaptureOpen(), wire::CaptureReason::kSignal, NowTicks());
    pthread_mutex_unlock(&g_mutex);
  }
}

void CaptureGate::TakeEdges(std::vector<wire::CaptureEdge>& into) {
  into.clear();
  pthread_mutex_lock(&g_mutex);
  if (g_pending != nullptr) into.swap(*g_pending);
  pthread_mutex_unlock(&g_mutex);
}

void CaptureGate::ResetAfterFork() {
  // Another thread may have held the mutex at the fork: the child's copy
  // would stay locked. Only the forking thread runs here.
  g_mutex = PTHREAD_MUTEX_INITIALIZER;
  if (g_pending != nullptr) g_pending->clear();
  // A window of instances: the child counts its own from zero, as a
  // process started afresh would (closed until its skip, if any).
  if (g_capture_operation != 0) {
    g_instances.store(0, std::memory_order_relaxed);
    g_ended.store(false, std::memory_order_relaxed);
    g_capture_open.store(g_skip == 0, std::memory_order_relaxed);
  }
  // Ranges: the start/end ones stay open (their ids are the child's too);
  // the forking thread's pushes are counted again as they are reopened.
  if (g_capture_range_name != 0) {
    g_open_pushes = 0;
    g_capture_open.store(g_open_range_id_count.load(std::memory_order_relaxed) > 0, std::memory_order_relaxed);
  }
  // The child's stream begins now, whenever its flusher gets to connect
  // (the edges until then are its batches' to send).
  g_closed_at_start = !CaptureOpen();
  g_closed_since_ns.store(MonotonicNs(), std::memory_order_relaxed);
}

int64_t CaptureGate::ClosedSinceNs() { return g_closed_since_ns.load(std::memory_order_relaxed); }

void CaptureGate::SetOpenListener(void (*listener)()) { g_open_listener.store(listener, std::memory_order_relaxed); }

}  // namespace rlscope::preload
