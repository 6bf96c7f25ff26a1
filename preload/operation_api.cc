// The explicit operation API behind `with rlscope.operation("name"):` and
// the capture API behind rlscope.start()/stop()/capture() (the Python
// module rlscope, made importable by the launcher, calls these via
// ctypes). An explicit operation takes precedence over inferred ones.
#include <atomic>
#include <cstdint>

#include "preload/capture_gate.h"
#include "preload/recorder.h"
#include "preload/string_table.h"

namespace {

constexpr uint16_t kApiSource = static_cast<uint16_t>(rlscope::wire::OperationSource::kPythonApi);

bool Recording() { return rlscope::preload::g_recording && !rlscope::preload::t_state.untraced; }

}  // namespace

// Each push returns a token its pop must give back: with-blocks of
// interleaved asyncio tasks or generators on one thread do not nest, so a
// pop closes the operation it opened, not whatever is innermost.
extern "C" __attribute__((visibility("default"))) uint64_t rlscope_operation_push(const char* name) {
  static std::atomic<uint64_t> next_token{0};
  if (!Recording()) return 0;
  const uint64_t token = next_token.fetch_add(1, std::memory_order_relaxed) + 1;
  const uint32_t id = rlscope::preload::StringTable::Intern(name != nullptr ? name : "(unnamed operation)");
  rlscope::preload::RecordInstant(rlscope::wire::EventKind::kOperationPush, id, token, kApiSource);
  return token;
}

extern "C" __attribute__((visibility("default"))) void rlscope_operation_pop(uint64_t token) {
  if (!Recording() || token == 0) return;
  rlscope::preload::RecordInstant(rlscope::wire::EventKind::kOperationPop, 0, token);
}

// Capture windows from code (capture_gate.h). Returns 1 when capture is
// open after the call, 0 when closed, -1 when the API does not control
// capture (not under `rlscope run`, or run without --capture-range api:
// then everything is captured and the call changes nothing).
extern "C" __attribute__((visibility("default"))) int rlscope_capture_set(int open) {
  if (!rlscope::preload::g_recording || !rlscope::preload::CaptureGate::ApiControlled()) return -1;
  return rlscope::preload::CaptureGate::Set(open != 0, rlscope::wire::CaptureReason::kApi) ? 1 : 0;
}
