#include "collector/dump_command.h"

#include <iostream>

#include "absl/strings/str_format.h"
#include "format/settled_check.h"
#include "format/trace_reader.h"

namespace rlscope::collector {

namespace {

constexpr const char* kDumpUsage = R"USAGE(usage: rlscope dump [--check-settled] FILE.rlt

Print every frame of a trace file (DIR/trace/<pid>.rlt) as text: the Hello,
interned strings, thread names, each event (kind, begin/end ns, name id,
payload) and the Goodbye. settled=NS on a batch: no later event of the
stream begins before NS (GPU activity and thread births aside); on a
thread's line: an earlier time that holds for that thread instead. Reads
both trace formats: compressed blocks (the default) and the plain stream
(--uncompressed-trace, and rlscope before compression); @N is a frame's
byte offset in the stream. Stops at the first damaged frame or block and
says where.

  --check-settled  print nothing but whether the stream keeps its settled
                   claims (every event of a later batch begins at or after
                   them): how many claims and events were checked, and the
                   first event that begins too early; exit 4 if one does.
)USAGE";

// KindName: every kind the wire format defines (no default: the compiler
// names a kind added without a name here); "unknown" only for a number the
// format does not define.
const char* KindName(uint16_t kind) {
  switch (static_cast<wire::EventKind>(kind)) {
    case wire::EventKind::kInvalid: return "invalid";
    case wire::EventKind::kCudaApi: return "cuda_api";
    case wire::EventKind::kOperationPush: return "op_push";
    case wire::EventKind::kOperationPop: return "op_pop";
    case wire::EventKind::kRangeStart: return "range_start";
    case wire::EventKind::kRangeEnd: return "range_end";
    case wire::EventKind::kThreadBegin: return "thread_begin";
    case wire::EventKind::kThreadEnd: return "thread_end";
    case wire::EventKind::kSimulatorCall: return "simulator";
    case wire::EventKind::kPythonCall: return "python_call";
    case wire::EventKind::kPythonThread: return "python_thread";
    case wire::EventKind::kPythonFrame: return "python_frame";
    case wire::EventKind::kNativeStack: return "native_stack";
    case wire::EventKind::kNativeStackFrames: return "stack_frames";
    case wire::EventKind::kBackendCall: return "backend";
    case wire::EventKind::kPythonHookReplaced: return "python_hook_replaced";
    case wire::EventKind::kChildProcess: return "child_process";
    case wire::EventKind::kPythonWait: return "python_wait";
    case wire::EventKind::kCuptiApi: return "cupti_api";
    case wire::EventKind::kProfilerOverhead: return "profiler_overhead";
    case wire::EventKind::kPythonUserLine: return "python_user_line";
    case wire::EventKind::kThreadIdle: return "thread_idle";
    case wire::EventKind::kThreadCpuWait: return "thread_cpu_wait";
    case wire::EventKind::kRecordsLost: return "records_lost";
    case wire::EventKind::kCommunicationCall: return "communication";
  }
  return "unknown";
}

const char* CaptureReasonName(uint8_t reason) {
  switch (static_cast<wire::CaptureReason>(reason)) {
    case wire::CaptureReason::kTimer: return "timer";
    case wire::CaptureReason::kApi: return "api";
    case wire::CaptureReason::kSignal: return "signal";
    case wire::CaptureReason::kInstances: return "instances";
    case wire::CaptureReason::kNvtxRange: return "nvtx_range";
    case wire::CaptureReason::kProfilerApi: return "cuda_profiler_api";
  }
  return "unknown";
}

void PrintFrame(const wire::Frame& frame, uint64_t offset) {
  if (const wire::Hello* hello = frame.message_as_Hello()) {
    std::cout << absl::StrFormat(
        "@%d hello pid=%d ppid=%d forked_from=%d start_ns=%d proc_start=%d protocol=%d "
        "clock=%s exe=%s\n",
        offset, hello->pid(), hello->ppid(), hello->forked_from(), hello->start_ns(), hello->proc_start_ticks(),
        hello->protocol_version(), hello->clock_source() ? hello->clock_source()->str() : "",
        hello->executable() ? hello->executable()->str() : "");
    if (hello->capture_closed_at_start()) std::cout << "  capture closed at start\n";
  } else if (const wire::Batch* batch = frame.message_as_Batch()) {
    std::cout << absl::StrFormat("@%d batch %d", offset, batch->sequence());
    if (batch->settled_ns() != 0) std::cout << absl::StrFormat(" settled=%d", batch->settled_ns());
    std::cout << "\n";
    if (batch->strings()) {
      for (const auto* s : *batch->strings()) {
        std::cout << absl::StrFormat("  string %d = %s\n", s->id(), s->text() ? s->text()->str() : "");
      }
    }
    if (batch->modules()) {
      for (const auto* m : *batch->modules()) {
        std::cout << absl::StrFormat("  module [%#x, %#x) %s\n", m->begin(), m->end(),
                                     m->path() ? m->path()->str() : "");
      }
    }
    if (batch->thread_infos()) {
      for (const auto* t : *batch->thread_infos()) {
        std::cout << absl::StrFormat("  thread %d instance=%d name=%s\n", t->tid(), t->instance(),
                                     t->name() ? t->name()->str() : "");
      }
    }
    if (batch->capture_edges()) {
      for (const wire::CaptureEdge* edge : *batch->capture_edges()) {
        std::cout << absl::StrFormat("  capture %s at %d reason=%s\n", edge->open() ? "opens" : "closes",
                                     edge->time_ns(), CaptureReasonName(edge->reason()));
      }
    }
    if (batch->threads()) {
      for (const auto* t : *batch->threads()) {
        std::cout << absl::StrFormat("  events tid=%d instance=%d count=%d dropped=%d", t->tid(), t->instance(),
                                     t->events() ? t->events()->size() : 0, t->dropped());
        if (t->settled_ns() != 0) std::cout << absl::StrFormat(" settled=%d", t->settled_ns());
        std::cout << "\n";
        if (!t->events()) continue;
        for (const wire::Event* e : *t->events()) {
          std::cout << absl::StrFormat("    %-12s %d %d dur=%d name=%d flags=%d payload=%d\n", KindName(e->kind()),
                                       e->begin_ns(), e->end_ns(), e->end_ns() - e->begin_ns(), e->name_id(),
                                       e->flags(), e->payload());
        }
      }
    }
  } else if (const wire::Goodbye* goodbye = frame.message_as_Goodbye()) {
    std::cout << absl::StrFormat("@%d goodbye end_ns=%d recorded=%d dropped=%d reason=%s\n", offset, goodbye->end_ns(),
                                 goodbye->recorded_events(), goodbye->dropped_events(),
                                 goodbye->reason() ? goodbye->reason()->str() : "");
  }
}

}  // namespace

int DumpCommandMain(const std::vector<std::string>& args) {
  if (args.size() == 1 && (args[0] == "-h" || args[0] == "--help")) {
    std::cout << kDumpUsage;
    return 0;
  }
  const bool check_settled = !args.empty() && args[0] == "--check-settled";
  if (args.size() != (check_settled ? 2u : 1u) || (!check_settled && args[0].starts_with("-"))) {
    std::cerr << "rlscope dump: give exactly one trace file, after --check-settled if any (see 'rlscope dump "
                 "--help')\n";
    return 2;
  }
  const std::string& path = args.back();
  SettledCheck settled;
  absl::StatusOr<TraceReadResult> result =
      check_settled ? ReadTraceFile(path, [&settled](const wire::Frame& frame, uint64_t) { settled.Visit(frame); })
                    : ReadTraceFile(path, &PrintFrame);
  if (!result.ok()) {
    std::cerr << "rlscope dump: " << result.status().message() << "\n";
    return 1;
  }
  if (result->damage) {
    std::cerr << "rlscope dump: " << *result->damage << "\n";
    return 3;
  }
  if (check_settled) {
    std::cout << absl::StrFormat("%s: %d settled claims, %d events checked against them, %d begin too early\n", path,
                                 settled.claims(), settled.checked(), settled.violations());
    if (settled.violations() > 0) {
      std::cout << "first: " << settled.first_violation() << "\n";
      return 4;
    }
  }
  return 0;
}

}  // namespace rlscope::collector
