// The recorder's process-side definitions (process_runtime.cc in the
// preload) for unit tests of hooks: each thread records into its own
// ThreadBuffer, which the test reads back with TakeRecords().
#include "test/preload/fake_recorder.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "preload/recorder.h"

namespace rlscope::preload {

__thread ThreadState t_state __attribute__((tls_model("initial-exec")));
bool g_recording = false;

ThreadBuffer* RegisterCurrentThread() {
  if (!g_recording || t_state.untraced) return nullptr;
  t_state.buffer = ThreadRegistry::Claim(static_cast<uint32_t>(syscall(SYS_gettid)));
  return t_state.buffer;
}

}  // namespace rlscope::preload

namespace rlscope::test {

std::vector<preload::EventRecord> TakeRecords() {
  std::vector<preload::EventRecord> records;
  preload::ThreadBuffer* buffer = preload::t_state.buffer;
  if (buffer == nullptr) return records;
  for (uint64_t i = buffer->ReadIndex(); i < buffer->WriteIndex(); ++i) records.push_back(buffer->At(i));
  buffer->Consume(records.size());
  return records;
}

void StartRecording() {
  preload::StringTable::Init();
  preload::g_recording = true;
  TakeRecords();  // Start from an empty ring.
}

}  // namespace rlscope::test

namespace rlscope::preload {

// Native stack sampling is off in these tests (the double has no libunwind
// and no Python hook); the end-to-end tests cover it.
bool MaybeSampleNativeStack(uint64_t) { return false; }

}  // namespace rlscope::preload
