// The explicit operation API behind `with rlscope.operation("name"):` (the
// Python module rlscope, made importable by the launcher, calls these via
// ctypes). An explicit operation takes precedence over inferred ones.
#include <cstdint>

#include "recorder.h"
#include "string_table.h"

namespace {

constexpr uint16_t kApiSource = static_cast<uint16_t>(rlscope::wire::OperationSource::kPythonApi);

bool Recording() { return rlscope::preload::g_recording && !rlscope::preload::t_state.untraced; }

}  // namespace

extern "C" __attribute__((visibility("default"))) void rlscope_operation_push(const char* name) {
  if (!Recording()) return;
  const uint32_t id = rlscope::preload::StringTable::Intern(name != nullptr ? name : "(unnamed operation)");
  rlscope::preload::RecordInstant(rlscope::wire::EventKind::kOperationPush, id, 0, kApiSource);
}

extern "C" __attribute__((visibility("default"))) void rlscope_operation_pop() {
  if (!Recording()) return;
  rlscope::preload::RecordInstant(rlscope::wire::EventKind::kOperationPop, 0);
}
