// Test double for the preload's process runtime: defines t_state,
// g_recording and RegisterCurrentThread (recorder.h) so hook code links into
// a test program, and reads back what the calling thread recorded.
#ifndef RLSCOPE_TEST_PRELOAD_FAKE_RECORDER_H_
#define RLSCOPE_TEST_PRELOAD_FAKE_RECORDER_H_

#include <vector>

#include "preload/event_record.h"
#include "preload/string_table.h"

namespace rlscope::test {

// StartRecording: string table mapped, g_recording on, ring emptied.
// Ticks stay CLOCK_MONOTONIC nanoseconds (TickClock::Init is not called).
void StartRecording();
// TakeRecords: the calling thread's records since the last call.
std::vector<preload::EventRecord> TakeRecords();

}  // namespace rlscope::test

#endif  // RLSCOPE_TEST_PRELOAD_FAKE_RECORDER_H_
