// Process life cycle of the preload: start-up (constructor), thread
// registration and exit, fork() children, and the final flush at exit.
//
// Start-up reads RLSCOPE_SOCKET once. Without it (the library was loaded
// outside `rlscope run`) every hook stays a pass-through and no thread is
// started.
#include "preload/process_runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "preload/capture_gate.h"
#include "preload/child_environment.h"
#include "preload/fatal_signal_flush.h"
#include "preload/flush_signal.h"
#include "preload/flusher.h"
#include "preload/gpu_activity_queue.h"
#include "preload/loader_gate.h"
#include "preload/native_stack_sampler.h"
#include "preload/problem_notice.h"
#include "preload/python_hook_breakdown.h"
#include "preload/raw_log.h"
#include "preload/real_process_functions.h"
#include "preload/real_symbol.h"
#include "preload/recorder.h"
#include "preload/string_table.h"
#include "preload/thread_buffer.h"
#include "preload/tick_clock.h"
#if RLSCOPE_WITH_CUDA
#include "preload/cuda_runtime_hooks.h"
#include "preload/cupti_injection.h"
#include "preload/nvtx_injection.h"
#endif
#if RLSCOPE_WITH_SIM_HOOKS
#include "preload/simulator_hooks.h"
#endif

namespace rlscope::preload {

__thread ThreadState t_state __attribute__((tls_model("initial-exec")));
bool g_recording = false;

namespace {

char g_socket_path[108];
pthread_key_t g_thread_key;
Flusher* g_flusher = nullptr;
// The pid the current flusher belongs to. A vfork() child (posix_spawn)
// runs our hooks with the parent's memory but its own pid: it must not
// touch the parent's flusher.
pid_t g_traced_pid = 0;

void StartFlusher(ClockSyncPoint origin, int forked_from) {
  g_traced_pid = getpid();
  g_flusher = new Flusher(g_socket_path, origin, forked_from);
  g_flusher->Start();
}

// FlusherServesThisProcess: async-signal-safe (the crash handler asks).
bool FlusherServesThisProcess() { return g_recording && g_flusher != nullptr && getpid() == g_traced_pid; }

uint32_t CurrentTid() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

// The calling thread's OS name (pthread_setname_np / prctl), interned.
uint32_t OsThreadNameId() {
  char name[17] = {};
  if (prctl(PR_GET_NAME, name) != 0 || name[0] == '\0') return 0;
  return StringTable::Intern(name);
}

// Runs at thread exit (pthread key destructor) for threads that recorded.
void OnThreadExit(void* value) {
  auto* buffer = static_cast<ThreadBuffer*>(value);
  // A name set after registration counts; a Python name stays.
  if (buffer->name_id() == 0 || t_state.name_is_os) {
    if (const uint32_t name = OsThreadNameId()) buffer->SetName(name);
  }
  if (t_state.buffer == buffer) {
    RecordInstant(wire::EventKind::kThreadEnd, 0);
    t_state.buffer = nullptr;
  }
  t_state.untraced = true;  // Hooks in later destructors of this thread: not recorded.
  ThreadRegistry::Retire(buffer);
}

// Fork safety: no lock the child cannot take may be held across fork().
// What each lock the preload's threads take does about it:
// - the loader's write lock (dl_iterate_phdr: the flusher's module check,
//   stack samples through libunwind, symbol searches of the hooks and of
//   dl_interposer): every such call passes LoaderGate, which the prepare
//   handler closes and waits to be empty (loader_gate.h). The loader's main
//   lock (dlopen, dlsym, dladdr) glibc re-initialises in the child itself.
// - malloc's arenas: glibc's fork takes and restores them.
// - the trampoline registry and the simulator hooks' mutex: held across
//   the fork by their own atfork handlers (registered after the gate's, so
//   they run before the gate closes).
// - GpuActivityQueue and CaptureNotices mutexes: re-created empty in the
//   child (their contents were the parent's).
// - StringTable, ThreadRegistry, thread rings, FlushSignal: lock-free; the
//   child repairs or resets them below.
// - CUPTI's control and buffer-pool mutexes: never taken in a child (every
//   CUPTI path checks the capture's pid first); CUPTI is the parent's.
// - the collector connection: a socket, no lock; the child closes the
//   parent's copy without writing to it.
// - function-local statics (C++ guard locks) of one-time initialisations:
//   done before the first fork in practice; not guarded.
// The flusher thread itself does not exist in the child; the parent's
// Flusher object is abandoned there.
void OnForkChild() {
  if (!g_recording) return;
  // The parent's flusher thread does not exist here and its object may be
  // mid-update: abandon it (a small leak per fork) after letting go of the
  // parent's socket, and start afresh.
  if (g_flusher != nullptr) g_flusher->CloseInheritedConnection();
  const ClockSyncPoint origin = TickClock::SamplePoint();
  FlushSignal::Reset();
  StringTable::RepairAfterFork();
  GpuActivityQueue::ResetAfterFork();
  CaptureNotices::ResetAfterFork();
  CaptureGate::ResetAfterFork();
  ThreadBuffer* survivor = t_state.buffer;
  ThreadRegistry::ResetAfterFork(survivor, CurrentTid());
  if (survivor != nullptr) {
    survivor->Append(EventRecord{origin.ticks, origin.ticks, 0, wire::EventKind::kThreadBegin, 0, 0});
  } else {
    t_state.born_ticks = origin.ticks;
  }
#if RLSCOPE_WITH_CUDA
  ReopenNvtxRangesAfterFork(origin.ticks);
#endif
  StartFlusher(origin, static_cast<int>(getppid()));
}

// StartPreload: the preload's only constructor and its one start-up
// sequence: each part's Init in this fixed order. No other constructor
// and no dynamic initializer may exist (every global is constant-
// initialized; test/preload/init_order_test.py checks the built library):
// their order across objects is the link order, which differs between
// CMake generators.
__attribute__((constructor)) void StartPreload() {
  LoaderGate::InstallForkHandlers();  // First: see InstallForkHandlers.
  InitRawLog();                       // RLSCOPE_QUIET: before anything may print.
  ResolveRealSignalFunctions();       // Its wrappers serve the program even when not recording.
  ResolveRealSpawnFunctions();        // So do these (real_process_functions.h).
  ResolveRealExecFunctions();
  TickClock::Init();
  InitPythonHookBreakdown();
  const char* socket_path = getenv("RLSCOPE_SOCKET");
  if (socket_path == nullptr || socket_path[0] == '\0') return;  // Not under `rlscope run`.
  if (strlen(socket_path) >= sizeof(g_socket_path)) {
    RawLog("RLSCOPE_SOCKET is longer than a Unix socket path can be; profiling disabled");
    return;
  }
  strcpy(g_socket_path, socket_path);
  if (!StringTable::Init()) {
    RawLog("cannot map the string table; profiling disabled");
    return;
  }
  if (pthread_key_create(&g_thread_key, &OnThreadExit) != 0) {
    RawLog("no pthread key left; profiling disabled");
    return;
  }
#if RLSCOPE_WITH_CUDA
  InternCudaApiNames();
#endif
#if RLSCOPE_WITH_SIM_HOOKS
  InstallSimulatorHooks();  // Interns symbol names: after StringTable::Init.
#endif
  InitNativeStackSampler();
  pthread_atfork(nullptr, nullptr, &OnForkChild);
  // Children started with a scrubbed environment get rlscope's variables
  // back (child_environment.h says why).
  Dl_info self{};
  const std::string dropped = ChildEnvironment::CaptureAtStart(
      environ, dladdr(reinterpret_cast<void*>(&StartPreload), &self) != 0 ? self.dli_fname : nullptr);
  if (!dropped.empty()) {
    ReportProblem("child-env", "out of memory at start-up: children started with a scrubbed environment will lack %s",
                  dropped.c_str());
  }
  ProcessIdentity::ReadStartEnvironment(environ);  // Before the program can change it (setproctitle).
  CaptureGate::Init();                             // Before the first event and the flusher's Hello.
  const ClockSyncPoint origin = TickClock::SamplePoint();
  t_state.born_ticks = origin.ticks;  // The main thread is born with the process.
  g_recording = true;
  RegisterCurrentThread();
  StartFlusher(origin, 0);
  InstallFatalSignalFlush(&FlusherServesThisProcess);
}

// A destructor of the preload runs after the program's atexit handlers and
// after the destructors of libraries loaded later, so it sees their events.
__attribute__((destructor)) void StopPreload() { FinishImage("exit"); }

}  // namespace

void FinishImage(const char* reason) {
  if (!g_recording || g_flusher == nullptr || getpid() != g_traced_pid) return;
#if RLSCOPE_WITH_CUDA
  // The GPU records CUPTI still holds (a no-op after the exit handler's
  // final flush, and when CUPTI is not capturing).
  FlushGpuActivity(/*final=*/false);
#endif
  g_flusher->Stop(reason);
  g_recording = false;  // Anything later could not be sent anyway.
}

void ResumeAfterFailedExec() {
  if (g_recording || g_flusher == nullptr || getpid() != g_traced_pid) return;
  g_recording = true;
  StartFlusher(TickClock::SamplePoint(), 0);
}

void NoteChildProcess(pid_t pid, wire::ChildStart how, const char* program) {
  if (!g_recording || t_state.untraced || getpid() != g_traced_pid) return;
  const uint32_t name = program != nullptr ? StringTable::Intern(program) : 0;
  RecordInstant(wire::EventKind::kChildProcess, name, static_cast<uint64_t>(pid), static_cast<uint16_t>(how));
}

void NoteExecInVforkChild(const char* program, bool failed) {
  // A vfork() child shares the parent's memory (g_traced_pid is the
  // parent's) and runs on the parent's thread, which is suspended until the
  // exec: appending to that thread's ring is safe, claiming one (it
  // allocates) is not.
  if (!g_recording || t_state.untraced || g_flusher == nullptr || t_state.buffer == nullptr) return;
  const pid_t self = getpid();
  if (self == g_traced_pid) return;
  const uint32_t name = program != nullptr && !failed ? StringTable::Intern(program) : 0;
  RecordInstant(wire::EventKind::kChildProcess, name, static_cast<uint64_t>(self),
                static_cast<uint16_t>(failed ? wire::ChildStart::kExecFailed : wire::ChildStart::kExecuted));
}

ThreadBuffer* RegisterCurrentThread() {
  if (!g_recording || t_state.untraced) return nullptr;
  const uint64_t setup_begin = NowTicks();
  ThreadBuffer* buffer = ThreadRegistry::Claim(CurrentTid());
  if (buffer == nullptr) {
    t_state.untraced = true;  // Out of memory for buffers: this thread stays untraced.
    return nullptr;
  }
  t_state.buffer = buffer;
  t_state.name_is_os = true;
  buffer->SetName(OsThreadNameId());
  pthread_setspecific(g_thread_key, buffer);
  const uint64_t born = t_state.born_ticks != 0 ? t_state.born_ticks : NowTicks();
  buffer->Append(EventRecord{born, born, 0, wire::EventKind::kThreadBegin, 0, 0});
  buffer->CountOverhead(wire::OverheadKind::kThreadSetup, NowTicks() - setup_begin);
  return buffer;
}

void MarkThreadUntraced() { t_state.untraced = true; }

void NameCurrentThread(std::string_view name) {
  ThreadBuffer* buffer = t_state.buffer != nullptr ? t_state.buffer : RegisterCurrentThread();
  if (buffer == nullptr || name.empty()) return;
  buffer->SetName(StringTable::Intern(name));
  t_state.name_is_os = false;
}

namespace {

using PthreadCreateFunction = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

PthreadCreateFunction RealPthreadCreate() {
  static PthreadCreateFunction real =
      reinterpret_cast<PthreadCreateFunction>(ResolveNextSymbol("pthread_create", nullptr, nullptr));
  return real;
}

struct ThreadStart {
  void* (*routine)(void*);
  void* argument;
};

void* StartTracedThread(void* raw) {
  // The thread's traced lifetime starts here, even if it records later.
  t_state.born_ticks = NowTicks();
  ThreadStart start = *static_cast<ThreadStart*>(raw);
  free(raw);
  return start.routine(start.argument);
}

}  // namespace

int CreateUntracedThread(pthread_t* thread, void* (*start)(void*), void* arg) {
  PthreadCreateFunction real = RealPthreadCreate();
  return real != nullptr ? real(thread, nullptr, start, arg) : EAGAIN;
}

}  // namespace rlscope::preload

// pthread_create wrapper: only records when the thread was born, so a thread
// that records later has an exact lifetime.
extern "C" __attribute__((visibility("default"))) int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                                                     void* (*routine)(void*), void* argument) {
  using namespace rlscope::preload;
  PthreadCreateFunction real = RealPthreadCreate();
  if (real == nullptr) return EAGAIN;
  if (!g_recording) return real(thread, attr, routine, argument);
  auto* start = static_cast<ThreadStart*>(malloc(sizeof(ThreadStart)));
  if (start == nullptr) return real(thread, attr, routine, argument);
  *start = ThreadStart{routine, argument};
  const int result = real(thread, attr, &StartTracedThread, start);
  if (result != 0) free(start);
  return result;
}
