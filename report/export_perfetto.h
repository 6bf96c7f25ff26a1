// Perfetto protobuf trace of decoded timelines (`rlscope export DIR
// --perfetto FILE`): a `perfetto.protos.Trace` (repeated TracePacket) in
// Perfetto's TrackEvent model, which ui.perfetto.dev and trace_processor
// open. Written packet by packet (never the whole trace in memory), with
// our own wire-format encoder (protobuf_writer.h). The field numbers follow
// Perfetto's public schema (protos/perfetto/trace/); the subset we emit is
// written down in test/report/perfetto_trace_subset.proto.
//
// Tracks (TrackDescriptor, uuids numbered from 1):
//   - one process track per traced process (ProcessDescriptor: pid,
//     process_name = base name of argv[0], cmdline);
//   - one thread track per traced thread (ThreadDescriptor: pid, tid,
//     thread_name; a reused tid's later instances get synthetic tids from
//     1000000000 up, as in --chrome): its operations (category
//     "operation"), as slices;
//   - per thread, child tracks "NAME TID inferred operations" (operations
//     inferred from Python stack rules) and "NAME TID CPU categories" (CPU
//     category intervals: "CUDA API", "Backend", "Simulator", "Python" for a
//     callback from native code, "Profiler"; a Python->native call is named
//     after its Python location, with debug annotations `location` and
//     `line`); NAME is the thread's name ("thread" when it has none), TID
//     its (possibly synthetic) tid. Perfetto shows a thread track's
//     children beside it, in its process;
//   - per process, one track per GPU device and stream, "GPU D stream S"
//     (child of the process track): kernels, copies and memsets (categories
//     "Kernel", "Memcpy", "Memset"; annotations correlation_id, bytes).
// Separate tracks because operations and CPU intervals are each nested
// but need not nest with one another.
//
// Slices are TYPE_SLICE_BEGIN/TYPE_SLICE_END pairs, one track held at a
// time (24 bytes a slice); on each track they nest properly: where
// recorded intervals overlap without nesting (damaged or truncated data),
// the inner one's end is cut to its enclosing slice's end and its begin
// carries the annotation `clipped: true`.
//
// Flows: each GPU activity whose launch CUPTI saw gets its own flow id; the
// innermost CPU-category slice around the launching call's entry carries
// it in `flow_ids` (an instant event named after the CUDA function when no
// slice encloses it), and the activity's slice in `terminating_flow_ids`.
//
// Names are interned: event names, categories and annotation names go into
// InternedData (event_names, event_categories, debug_annotation_names) the
// first time they are used, on one packet sequence (trusted id 1) whose
// first packet clears the incremental state; later event packets say they
// need it. Kernel names repeat thousands of times, so this keeps files small.
//
// Timestamps are the trace's own nanoseconds (CLOCK_MONOTONIC), as
// measured (not corrected for rlscope's overhead), written without a
// timestamp_clock_id: Perfetto takes them as its default clock (BOOTTIME)
// and shows them relative to the trace's start, so only differences are
// meaningful.
#ifndef RLSCOPE_REPORT_EXPORT_PERFETTO_H_
#define RLSCOPE_REPORT_EXPORT_PERFETTO_H_

#include <cstdint>
#include <ostream>
#include <vector>

#include "report/process_timeline.h"

namespace rlscope::report {

// TrackSlice: one slice (or instant event) of a track while the track is
// put in order: its times and which record it shows (`source`, an index
// into the track's own list: a thread's operations or CPU events, a
// process's GPU activities or launches), 24 bytes. Names and annotations
// are looked up from the record as each event is written, so a thread of
// millions of events is never held a second time in a fatter form.
struct TrackSlice {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  uint32_t source = 0;
  bool clipped = false;  // Its end was cut to its enclosing slice's (NestSlices).
  bool instant = false;
};

// NestSlices: sorts `slices` by begin (the longer first on ties; stable)
// and cuts each one's end to its enclosing slice's end where they overlap
// without nesting (such a slice is marked `clipped`), so BEGIN/END events
// written in this order nest on one track. Returns how many were cut.
size_t NestSlices(std::vector<TrackSlice>& slices);

void WritePerfettoTrace(const std::vector<ProcessTimeline>& processes, const NameTable& names, std::ostream& out);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_EXPORT_PERFETTO_H_
