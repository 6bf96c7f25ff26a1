// EventRecord: what the hot path writes, one 32-byte POD per event.
// Timestamps are raw ticks (see tick_clock.h); the flusher converts them to
// wire::Event (nanoseconds) off the hot path. The thread is implied by the
// buffer the record sits in.
#ifndef RLSCOPE_PRELOAD_EVENT_RECORD_H_
#define RLSCOPE_PRELOAD_EVENT_RECORD_H_

#include <cstdint>

#include "format/wire_format.h"

namespace rlscope::preload {

struct EventRecord {
  uint64_t begin_ticks;
  uint64_t end_ticks;
  uint32_t name_id;
  wire::EventKind kind;
  uint16_t flags;
  uint64_t payload;
};

static_assert(sizeof(EventRecord) == 32, "EventRecord must stay 32 bytes: half a cache line");

}  // namespace rlscope::preload

#endif  // RLSCOPE_PRELOAD_EVENT_RECORD_H_
