#include "report/memory_budget.h"

#include <malloc.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace rlscope::report {

namespace {

constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max();
constexpr char kCgroupRoot[] = "/sys/fs/cgroup";

uint64_t Scaled(uint64_t trace_bytes, double per_trace_byte) {
  const double bytes = static_cast<double>(trace_bytes) * per_trace_byte + static_cast<double>(kAnalysisBaseBytes);
  return bytes >= 1.8e19 ? kUnlimited : static_cast<uint64_t>(std::ceil(bytes));
}

// ReadFirstNumber: the unsigned number a one-value file (memory.max,
// memory.current) holds; nullopt for "max", garbage or no file.
std::optional<uint64_t> ReadFirstNumber(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  uint64_t value = 0;
  if (!(in >> word) || !absl::SimpleAtoi(word, &value)) return std::nullopt;
  return value;
}

// MemoryStatValue: a "name value" line of a cgroup's memory.stat.
std::optional<uint64_t> MemoryStatValue(const std::string& path, std::string_view name) {
  std::ifstream in(path);
  std::string key;
  uint64_t value = 0;
  while (in >> key >> value) {
    if (key == name) return value;
  }
  return std::nullopt;
}

// CgroupRoom: what a cgroup v2 directory's memory.max still leaves; the
// page cache charged to it (inactive_file: the trace just written) counts
// as room, as the kernel reclaims it before it fails an allocation.
// nullopt without a limit ("max") or files.
std::optional<uint64_t> CgroupRoom(const std::string& dir) {
  const std::optional<uint64_t> limit = ReadFirstNumber(dir + "/memory.max");
  const std::optional<uint64_t> current = ReadFirstNumber(dir + "/memory.current");
  if (!limit || !current) return std::nullopt;
  const uint64_t reclaimable = MemoryStatValue(dir + "/memory.stat", "inactive_file").value_or(0);
  const uint64_t used = *current > reclaimable ? *current - reclaimable : 0;
  return *limit > used ? *limit - used : 0;
}

}  // namespace

MemoryNeed EstimateReportMemory(uint64_t trace_bytes) {
  return {Scaled(trace_bytes, kUncorrectedBytesPerTraceByte), Scaled(trace_bytes, kCorrectedBytesPerTraceByte)};
}

std::optional<uint64_t> ParseByteSize(const std::string& text) {
  std::string value(absl::StripAsciiWhitespace(text));
  uint64_t multiplier = 1;
  if (!value.empty()) {
    switch (absl::ascii_toupper(static_cast<unsigned char>(value.back()))) {
      case 'K': multiplier = 1ull << 10; break;
      case 'M': multiplier = 1ull << 20; break;
      case 'G': multiplier = 1ull << 30; break;
      case 'T': multiplier = 1ull << 40; break;
      default: break;
    }
    if (multiplier != 1) value.pop_back();
  }
  uint64_t number = 0;
  if (value.empty() || !absl::SimpleAtoi(value, &number) || number > kUnlimited / multiplier) return std::nullopt;
  return number * multiplier;
}

absl::StatusOr<uint64_t> ParseMemorySize(const std::string& text) {
  if (absl::AsciiStrToLower(absl::StripAsciiWhitespace(text)) == "unlimited") return kUnlimited;
  const std::optional<uint64_t> size = ParseByteSize(text);
  if (!size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s='%s' is not a memory size (bytes, optionally with K, M, G or T, or 'unlimited')", kReportMemoryEnv, text));
  }
  return *size;
}

std::optional<uint64_t> AvailableMemory(const std::string& meminfo_path, const std::string& cgroup_dir) {
  std::optional<uint64_t> available;
  std::ifstream meminfo(meminfo_path);
  std::string line;
  while (std::getline(meminfo, line)) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, "MemAvailable:")) continue;
    std::istringstream fields{std::string(rest)};
    uint64_t kib = 0;
    std::string unit;
    if (fields >> kib >> unit && unit == "kB") available = kib * 1024;
    break;
  }
  // The tightest room left under a limit of the cgroup or any ancestor.
  for (const std::string& dir : CgroupDirsUpward(cgroup_dir)) {
    if (const std::optional<uint64_t> room = CgroupRoom(dir)) {
      available = available ? std::min(*available, *room) : *room;
    }
  }
  return available;
}

std::vector<std::string> CgroupDirsUpward(const std::string& cgroup_dir) {
  std::vector<std::string> dirs;
  for (std::string dir = cgroup_dir; !dir.empty();) {
    dirs.push_back(dir);
    const size_t slash = dir.find_last_of('/');
    if (dir == kCgroupRoot || slash == std::string::npos || slash == 0 || dir.substr(0, slash) == kCgroupRoot) break;
    dir.resize(slash);
  }
  return dirs;
}

std::string CgroupDirOfThisProcess() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (absl::ConsumePrefix(&rest, "0::")) return absl::StrCat(kCgroupRoot, rest == "/" ? "" : rest);
  }
  return "";
}

ReportPlan PlanReport(const MemoryNeed& need, std::optional<uint64_t> available, bool corrected) {
  if (!available) return ReportPlan::kAsAsked;
  if (need.uncorrected > *available) return ReportPlan::kTooLarge;
  if (corrected && need.corrected > *available) return ReportPlan::kUncorrectedOnly;
  return ReportPlan::kAsAsked;
}

uint64_t HeapInUse() {
  const struct mallinfo2 info = mallinfo2();
  return static_cast<uint64_t>(info.uordblks) + static_cast<uint64_t>(info.hblkhd);
}

absl::StatusOr<std::optional<uint64_t>> RoomForAnalysis(uint64_t held_heap) {
  absl::StatusOr<std::optional<uint64_t>> available = MemoryForReport();
  if (!available.ok()) return available;
  if (const char* text = std::getenv(kReportMemoryEnv); text != nullptr && *text != '\0') return available;
  return WithHeld(*available, held_heap);
}

absl::StatusOr<std::optional<uint64_t>> MemoryForReport() {
  if (const char* text = std::getenv(kReportMemoryEnv); text != nullptr && *text != '\0') {
    absl::StatusOr<uint64_t> parsed = ParseMemorySize(text);
    if (!parsed.ok()) return parsed.status();
    if (*parsed == kUnlimited) return std::optional<uint64_t>();
    return std::optional<uint64_t>(*parsed);
  }
  return AvailableMemory("/proc/meminfo", CgroupDirOfThisProcess());
}

}  // namespace rlscope::report
