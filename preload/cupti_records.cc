#include "preload/cupti_records.h"

namespace rlscope::preload {

namespace {

// Record layouts of CUDA 13's CUPTI (CUPTI_API_VERSION 13xxxx). Later
// versions append fields, so the ones read here stay where they are.
using KernelRecord = CUpti_ActivityKernel10;
using MemcpyRecord = CUpti_ActivityMemcpy6;
using PeerMemcpyRecord = CUpti_ActivityMemcpyPtoP4;
using MemsetRecord = CUpti_ActivityMemset4;
using OverheadRecord = CUpti_ActivityOverhead3;

wire::GpuActivity Make(uint64_t start, uint64_t end, int64_t offset_ns, uint64_t bytes, uint32_t correlation,
                       uint32_t name_id, uint32_t stream, uint32_t device, wire::GpuActivityKind kind, uint8_t detail) {
  const int64_t begin_ns = static_cast<int64_t>(start) + offset_ns;
  // A record whose end was never filled in (CUPTI writes 0) is an instant.
  const int64_t end_ns = end >= start ? static_cast<int64_t>(end) + offset_ns : begin_ns;
  return wire::GpuActivity(begin_ns, end_ns, bytes, correlation, name_id, stream, static_cast<uint16_t>(device),
                           static_cast<uint8_t>(kind), detail);
}

}  // namespace

bool ConvertActivity(const CUpti_Activity& record, InternFn intern, int64_t offset_ns, wire::GpuActivity* out) {
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& kernel = reinterpret_cast<const KernelRecord&>(record);
      const uint32_t name = kernel.name != nullptr ? intern(kernel.name) : 0;
      *out = Make(kernel.start, kernel.end, offset_ns, 0, kernel.correlationId, name, kernel.streamId, kernel.deviceId,
                  wire::GpuActivityKind::kKernel, 0);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& copy = reinterpret_cast<const MemcpyRecord&>(record);
      // The runtime call's id when the copy came through the runtime (it is
      // the call rlscope times); else the driver call's.
      const uint32_t correlation = copy.runtimeCorrelationId != 0 ? copy.runtimeCorrelationId : copy.correlationId;
      *out = Make(copy.start, copy.end, offset_ns, copy.bytes, correlation, 0, copy.streamId, copy.deviceId,
                  wire::GpuActivityKind::kMemcpy, copy.copyKind);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto& copy = reinterpret_cast<const PeerMemcpyRecord&>(record);
      *out = Make(copy.start, copy.end, offset_ns, copy.bytes, copy.correlationId, 0, copy.streamId, copy.deviceId,
                  wire::GpuActivityKind::kMemcpy, copy.copyKind);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& set = reinterpret_cast<const MemsetRecord&>(record);
      *out = Make(set.start, set.end, offset_ns, set.bytes, set.correlationId, 0, set.streamId, set.deviceId,
                  wire::GpuActivityKind::kMemset, 0);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto& overhead = reinterpret_cast<const OverheadRecord&>(record);
      const uint64_t thread = overhead.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? overhead.objectId.pt.threadId : 0;
      *out = Make(overhead.start, overhead.end, offset_ns, thread, 0, 0, 0, 0, wire::GpuActivityKind::kCuptiOverhead,
                  wire::EncodeOverheadKind(static_cast<uint32_t>(overhead.overheadKind)));
      return true;
    }
    default: return false;
  }
}

}  // namespace rlscope::preload
