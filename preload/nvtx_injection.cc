// NVTX v3 injection: NVTX's header-only client code, on its first call,
// dlopens $NVTX_INJECTION64_PATH (the launcher points it at this library)
// and calls InitializeInjectionNvtx2, which fills NVTX's function tables
// with the handlers below. No link to libnvToolsExt is involved, and every
// library that carries its own copy of the NVTX client calls us separately.
//
// Push/pop ranges become kOperationPush/kOperationPop on the calling
// thread; start/end ranges become kRangeStart/kRangeEnd with a process-wide
// id, so they may end on another thread. An operation is named by its
// message; a push also records its domain (payload: domain name id + 1, 0
// for the default domain). Named domains are filtered (DomainSelected).
#define NVTX_NO_IMPL
#include "preload/nvtx_injection.h"

#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cwchar>
#include <string>

#include "format/rule_file.h"
#include "preload/capture_gate.h"
#include "preload/recorder.h"
#include "preload/string_table.h"

namespace rlscope::preload {

namespace {

constexpr uint16_t kNvtxSource = static_cast<uint16_t>(wire::OperationSource::kNvtx);

// The calling thread's open push ranges (innermost last). Kept so that a
// fork() child, which inherits them, can reopen them on its own stream;
// deeper nesting than kMaxTrackedDepth still works, only unreplayed.
constexpr int kMaxTrackedDepth = 64;
struct OpenRanges {
  int depth;
  uint32_t names[kMaxTrackedDepth];
  uint64_t domains[kMaxTrackedDepth];
};
__thread OpenRanges t_open __attribute__((tls_model("initial-exec")));
std::atomic<uint64_t> g_next_range_id{0};

// Domains. Libraries annotate their internals in named domains (CUB's
// "CCCL", XLA's compiler passes): those are not the user's operations. So
// ranges of the default domain are operations, and ranges of a named
// domain only when its name matches RLSCOPE_NVTX_DOMAINS (comma-separated
// globs, from `rlscope run --nvtx-domain`); the others are ignored.
// Our domain handles are ((interned name id + 1) << 1) | selected.
// Registered-string handles are (id + 1).
bool DomainSelected(nvtxDomainHandle_t domain) {
  return domain == nullptr || (reinterpret_cast<uintptr_t>(domain) & 1) != 0;
}
uint64_t DomainId(nvtxDomainHandle_t domain) { return reinterpret_cast<uintptr_t>(domain) >> 1; }

bool DomainNameSelected(const char* name) {
  static const char* patterns = getenv("RLSCOPE_NVTX_DOMAINS");
  if (patterns == nullptr || *patterns == '\0' || name == nullptr) return false;
  std::string globs(patterns);
  for (char& c : globs) c = c == ',' ? '|' : c;
  return MatchesGlob(globs, name);
}

nvtxDomainHandle_t MakeDomain(uint32_t name_id, bool selected) {
  return reinterpret_cast<nvtxDomainHandle_t>(((uintptr_t{name_id} + 1) << 1) | (selected ? 1 : 0));
}

inline bool NvtxRecording() { return g_recording && !t_state.untraced; }

uint32_t InternWide(const wchar_t* text) {
  // Operation names are ASCII in practice; anything else becomes '?'.
  char narrow[StringTable::kMaxTextBytes];
  size_t length = 0;
  for (; text != nullptr && text[length] != 0 && length < sizeof(narrow); ++length) {
    narrow[length] = (text[length] > 0 && text[length] < 128) ? static_cast<char>(text[length]) : '?';
  }
  return StringTable::Intern(std::string_view(narrow, length));
}

uint32_t InternAscii(const char* text) { return StringTable::Intern(text != nullptr ? text : ""); }

uint32_t MessageId(const nvtxEventAttributes_t* attributes) {
  if (attributes == nullptr) return InternAscii("(unnamed range)");
  switch (attributes->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return InternAscii(attributes->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE: return InternWide(attributes->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
      // Our registered-string handles are (id + 1).
      return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(attributes->message.registered) - 1);
    default: return InternAscii("(unnamed range)");
  }
}

// IsCaptureRange: whether ranges of this name hold a capture window open
// (rlscope run --capture-range nvtx:NAME).
inline bool IsCaptureRange(uint32_t name_id) {
  return __builtin_expect(g_capture_range_name != 0 && name_id == g_capture_range_name, 0);
}

int PushRange(uint32_t name_id, uint64_t domain = 0) {
  // The window opens before the push is recorded, so the range's own
  // operation begins inside it.
  // Only where its pop can be told (kMaxTrackedDepth), or the window
  // would never close.
  if (IsCaptureRange(name_id) && t_open.depth < kMaxTrackedDepth) NoteCaptureRangePush(true);
  RecordInstant(wire::EventKind::kOperationPush, name_id, domain, kNvtxSource);
  if (t_open.depth < kMaxTrackedDepth) {
    t_open.names[t_open.depth] = name_id;
    t_open.domains[t_open.depth] = domain;
  }
  return t_open.depth++;
}

int PopRange() {
  if (t_open.depth == 0) return -1;  // Unbalanced pop: NVTX's documented error value.
  RecordInstant(wire::EventKind::kOperationPop, 0);
  const int depth = --t_open.depth;
  // Closed after the pop is recorded (the range ends inside its window).
  // A range nested deeper than kMaxTrackedDepth has no name kept here.
  if (depth < kMaxTrackedDepth && IsCaptureRange(t_open.names[depth])) NoteCaptureRangePush(false);
  return depth;
}

// Start/end ranges carry their range id as payload, so (unlike pushes) they
// do not record a domain.
nvtxRangeId_t StartRange(uint32_t name_id) {
  const uint64_t id = g_next_range_id.fetch_add(1, std::memory_order_relaxed) + 1;
  if (IsCaptureRange(name_id)) NoteCaptureRangeStart(id);
  RecordInstant(wire::EventKind::kRangeStart, name_id, id, kNvtxSource);
  return id;
}

void EndRange(nvtxRangeId_t id) {
  RecordInstant(wire::EventKind::kRangeEnd, 0, id);
  if (g_capture_range_name != 0 && CaptureRangeIdsOpen()) NoteCaptureRangeEnd(id);
}

// --- Core module (nvtxRangePushA, ...) ---
int NVTX_API RangePushA(const char* message) { return NvtxRecording() ? PushRange(InternAscii(message)) : 0; }
int NVTX_API RangePushW(const wchar_t* message) { return NvtxRecording() ? PushRange(InternWide(message)) : 0; }
int NVTX_API RangePushEx(const nvtxEventAttributes_t* a) { return NvtxRecording() ? PushRange(MessageId(a)) : 0; }
int NVTX_API RangePop() { return NvtxRecording() ? PopRange() : 0; }
nvtxRangeId_t NVTX_API RangeStartA(const char* message) {
  return NvtxRecording() ? StartRange(InternAscii(message)) : 0;
}
nvtxRangeId_t NVTX_API RangeStartW(const wchar_t* message) {
  return NvtxRecording() ? StartRange(InternWide(message)) : 0;
}
nvtxRangeId_t NVTX_API RangeStartEx(const nvtxEventAttributes_t* a) {
  return NvtxRecording() ? StartRange(MessageId(a)) : 0;
}
void NVTX_API RangeEnd(nvtxRangeId_t id) {
  if (NvtxRecording() && id != 0) EndRange(id);
}

// --- Core2 module (domain variants) ---
int NVTX_API DomainRangePushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a) {
  if (!DomainSelected(domain)) return 0;
  return NvtxRecording() ? PushRange(MessageId(a), DomainId(domain)) : 0;
}
int NVTX_API DomainRangePop(nvtxDomainHandle_t domain) { return DomainSelected(domain) ? RangePop() : 0; }
nvtxRangeId_t NVTX_API DomainRangeStartEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a) {
  return DomainSelected(domain) ? RangeStartEx(a) : 0;
}
void NVTX_API DomainRangeEnd(nvtxDomainHandle_t domain, nvtxRangeId_t id) {
  if (DomainSelected(domain)) RangeEnd(id);
}
nvtxStringHandle_t NVTX_API DomainRegisterStringA(nvtxDomainHandle_t, const char* text) {
  return reinterpret_cast<nvtxStringHandle_t>(uintptr_t{InternAscii(text)} + 1);
}
nvtxStringHandle_t NVTX_API DomainRegisterStringW(nvtxDomainHandle_t, const wchar_t* text) {
  return reinterpret_cast<nvtxStringHandle_t>(uintptr_t{InternWide(text)} + 1);
}
nvtxDomainHandle_t NVTX_API DomainCreateA(const char* name) {
  return MakeDomain(InternAscii(name), DomainNameSelected(name));
}
nvtxDomainHandle_t NVTX_API DomainCreateW(const wchar_t* name) {
  const uint32_t id = InternWide(name);
  return MakeDomain(id, DomainNameSelected(std::string(StringTable::Text(id)).c_str()));
}
void NVTX_API DomainDestroy(nvtxDomainHandle_t) {}

template <typename Function>
void Install(NvtxFunctionTable table, unsigned int size, unsigned int slot, Function function) {
  if (table != nullptr && slot < size && table[slot] != nullptr) {
    *table[slot] = reinterpret_cast<NvtxFunctionPointer>(function);
  }
}

}  // namespace

void ReopenNvtxRangesAfterFork(uint64_t ticks) {
  const int tracked = t_open.depth < kMaxTrackedDepth ? t_open.depth : kMaxTrackedDepth;
  for (int level = 0; level < tracked; ++level) {
    if (IsCaptureRange(t_open.names[level])) NoteCaptureRangePush(true, ticks);
    Record(wire::EventKind::kOperationPush, t_open.names[level], ticks, ticks, t_open.domains[level], kNvtxSource);
  }
}

}  // namespace rlscope::preload

extern "C" __attribute__((visibility("default"))) int NVTX_API
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  using namespace rlscope::preload;
  if (get_export_table == nullptr) return 0;
  auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->GetModuleFunctionTable == nullptr) return 0;

  NvtxFunctionTable core = nullptr;
  unsigned int core_size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) == 0) return 0;
  Install(core, core_size, NVTX_CBID_CORE_RangePushA, &RangePushA);
  Install(core, core_size, NVTX_CBID_CORE_RangePushW, &RangePushW);
  Install(core, core_size, NVTX_CBID_CORE_RangePushEx, &RangePushEx);
  Install(core, core_size, NVTX_CBID_CORE_RangePop, &RangePop);
  Install(core, core_size, NVTX_CBID_CORE_RangeStartA, &RangeStartA);
  Install(core, core_size, NVTX_CBID_CORE_RangeStartW, &RangeStartW);
  Install(core, core_size, NVTX_CBID_CORE_RangeStartEx, &RangeStartEx);
  Install(core, core_size, NVTX_CBID_CORE_RangeEnd, &RangeEnd);

  NvtxFunctionTable core2 = nullptr;
  unsigned int core2_size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size) != 0) {
    Install(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &DomainRangePushEx);
    Install(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &DomainRangePop);
    Install(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, &DomainRangeStartEx);
    Install(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, &DomainRangeEnd);
    Install(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &DomainRegisterStringA);
    Install(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW, &DomainRegisterStringW);
    Install(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &DomainCreateA);
    Install(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, &DomainCreateW);
    Install(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, &DomainDestroy);
  }
  return 1;
}
