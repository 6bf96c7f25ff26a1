#include "report/gpu_utilization.h"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "format/input_file.h"

namespace rlscope::report {

namespace {

constexpr int64_t kNsPerSecond = 1000000000;
constexpr size_t kMaxQuotedChars = 200;

// Local splitting and trimming: Debian's absl::string_view is not
// std::string_view, so absl's helpers would mix the two.
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

std::string_view Strip(std::string_view text) {
  while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t end = text.find(separator, start);
    if (end == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
}

bool ParseInt(std::string_view text, int* value) {
  return absl::SimpleAtoi(absl::string_view(text.data(), text.size()), value);
}

// Reads `count` decimal digits at `pos`, advancing it; -1 if not digits.
int Digits(std::string_view text, size_t& pos, size_t count) {
  if (pos + count > text.size()) return -1;
  int value = 0;
  for (size_t i = 0; i < count; ++i) {
    const char c = text[pos + i];
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  pos += count;
  return value;
}

bool Expect(std::string_view text, size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

// What a user sees of a line from a file: bounded, one line.
std::string Quote(std::string_view text) {
  text = Strip(text);
  if (text.size() <= kMaxQuotedChars) return std::string(text);
  return std::string(text.substr(0, kMaxQuotedChars)) + "...";
}

std::string FormatUtc(int64_t unix_ns) {
  const time_t seconds = static_cast<time_t>(unix_ns / kNsPerSecond);
  struct tm fields {};
  if (gmtime_r(&seconds, &fields) == nullptr) return absl::StrFormat("%d ns", unix_ns);
  return absl::StrFormat("%04d/%02d/%02d %02d:%02d:%02d.%03d UTC", fields.tm_year + 1900, fields.tm_mon + 1,
                         fields.tm_mday, fields.tm_hour, fields.tm_min, fields.tm_sec,
                         static_cast<int>((unix_ns % kNsPerSecond) / 1000000));
}

std::string FirstNonBlankLine(std::string_view text) {
  for (std::string_view line : Split(text, '\n')) {
    if (!Strip(line).empty()) return Quote(line);
  }
  return {};
}

enum class LineKind { kBlank, kSample, kUnavailable, kGarbage };

struct ParsedLine {
  LineKind kind = LineKind::kGarbage;
  int64_t unix_ns = 0;
  int gpu_index = 0;
  int percent = 0;
  std::string_view unavailable;  // e.g. "[N/A]"
};

ParsedLine ParseLine(std::string_view line) {
  ParsedLine parsed;
  line = Strip(line);
  if (line.empty()) {
    parsed.kind = LineKind::kBlank;
    return parsed;
  }
  std::vector<std::string_view> fields = Split(line, ',');
  if (fields.size() != 3) return parsed;
  for (std::string_view& field : fields) field = Strip(field);
  const std::optional<int64_t> unix_ns = ParseNvidiaSmiTimestamp(fields[0]);
  if (!unix_ns) return parsed;
  int index = 0;
  if (!ParseInt(fields[1], &index) || index < 0) return parsed;
  parsed.unix_ns = *unix_ns;
  parsed.gpu_index = index;
  std::string_view value = fields[2];
  // nvidia-smi writes values it cannot read as [N/A], [Not Supported],
  // [Unknown Error], [GPU is lost]...
  if (value.size() >= 2 && value.front() == '[' && value.back() == ']') {
    parsed.kind = LineKind::kUnavailable;
    parsed.unavailable = value;
    return parsed;
  }
  // Tolerate the unit, in case the file was written without nounits.
  if (!value.empty() && value.back() == '%') value = Strip(value.substr(0, value.size() - 1));
  int percent = 0;
  if (!ParseInt(value, &percent) || percent < 0 || percent > 100) return parsed;
  parsed.percent = percent;
  parsed.kind = LineKind::kSample;
  return parsed;
}

struct GpuAccumulator {
  int samples = 0;
  int64_t sum = 0;
  int max = 0;
  int unavailable = 0;
  std::string first_unavailable;
};

}  // namespace

std::optional<int64_t> ParseNvidiaSmiTimestamp(std::string_view text) {
  size_t pos = 0;
  const int year = Digits(text, pos, 4);
  if (year < 0 || !Expect(text, pos, '/')) return std::nullopt;
  const int month = Digits(text, pos, 2);
  if (month < 1 || month > 12 || !Expect(text, pos, '/')) return std::nullopt;
  const int day = Digits(text, pos, 2);
  if (day < 1 || day > 31 || !Expect(text, pos, ' ')) return std::nullopt;
  const int hour = Digits(text, pos, 2);
  if (hour < 0 || hour > 23 || !Expect(text, pos, ':')) return std::nullopt;
  const int minute = Digits(text, pos, 2);
  if (minute < 0 || minute > 59 || !Expect(text, pos, ':')) return std::nullopt;
  const int second = Digits(text, pos, 2);
  if (second < 0 || second > 60 || !Expect(text, pos, '.')) return std::nullopt;
  // nvidia-smi prints milliseconds; accept any 1-9 fractional digits.
  int64_t fraction_ns = 0;
  size_t fraction_digits = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    if (++fraction_digits > 9) return std::nullopt;
    fraction_ns = fraction_ns * 10 + (text[pos++] - '0');
  }
  if (fraction_digits == 0 || pos != text.size()) return std::nullopt;
  for (size_t i = fraction_digits; i < 9; ++i) fraction_ns *= 10;

  struct tm fields {};
  fields.tm_year = year - 1900;
  fields.tm_mon = month - 1;
  fields.tm_mday = day;
  fields.tm_hour = hour;
  fields.tm_min = minute;
  fields.tm_sec = second;
  errno = 0;
  const time_t seconds = timegm(&fields);
  if (seconds == static_cast<time_t>(-1) && errno != 0) return std::nullopt;
  // timegm normalises out-of-range dates (Feb 31 -> Mar 3): refuse those.
  if (fields.tm_mday != day || fields.tm_mon != month - 1) return std::nullopt;
  return static_cast<int64_t>(seconds) * kNsPerSecond + fraction_ns;
}

GpuUtilization SummarizeGpuUtilizationText(std::string_view csv, std::string_view stderr_text, int64_t begin_unix_ns,
                                           int64_t end_unix_ns, std::string_view csv_name) {
  GpuUtilization result;
  result.file_empty = csv.empty();
  std::map<int, GpuAccumulator> gpus;
  int garbage_lines = 0;
  std::string first_garbage;
  int64_t first_sample_ns = 0;
  int64_t last_sample_ns = 0;

  std::vector<std::string_view> lines = Split(csv, '\n');
  // nvidia-smi ends every line with '\n': text after the last one is a line
  // it was killed while writing, and a truncated "37" reads as "3".
  if (!lines.empty() && !Strip(lines.back()).empty()) {
    result.partial_last_line = true;
    ++result.skipped_lines;
  }
  if (!lines.empty()) lines.pop_back();  // The partial line, or the empty text after the last '\n'.

  for (std::string_view line : lines) {
    const ParsedLine parsed = ParseLine(line);
    if (parsed.kind == LineKind::kBlank) continue;
    if (parsed.kind == LineKind::kGarbage) {
      ++result.skipped_lines;
      if (garbage_lines++ == 0) first_garbage = Quote(line);
      continue;
    }
    if (result.samples_total++ == 0) first_sample_ns = last_sample_ns = parsed.unix_ns;
    first_sample_ns = std::min(first_sample_ns, parsed.unix_ns);
    last_sample_ns = std::max(last_sample_ns, parsed.unix_ns);
    if (parsed.unix_ns < begin_unix_ns || parsed.unix_ns > end_unix_ns) {
      ++result.samples_outside_window;
      continue;
    }
    GpuAccumulator& gpu = gpus[parsed.gpu_index];
    if (parsed.kind == LineKind::kUnavailable) {
      ++result.unavailable_values;
      if (gpu.unavailable++ == 0) gpu.first_unavailable = Quote(parsed.unavailable);
      continue;
    }
    ++gpu.samples;
    gpu.sum += parsed.percent;
    gpu.max = std::max(gpu.max, parsed.percent);
  }

  for (const auto& [index, gpu] : gpus) {
    if (gpu.samples == 0) {
      result.problems.push_back(absl::StrFormat(
          "nvidia-smi read GPU %d's utilization as %s in all %d samples: it cannot report it for this GPU", index,
          gpu.first_unavailable, gpu.unavailable));
      continue;
    }
    if (gpu.unavailable > 0) {
      result.problems.push_back(absl::StrFormat(
          "nvidia-smi read GPU %d's utilization as %s in %d of %d samples; the mean and maximum leave those out", index,
          gpu.first_unavailable, gpu.unavailable, gpu.unavailable + gpu.samples));
    }
    result.gpus.push_back({.gpu_index = index,
                           .samples = gpu.samples,
                           .mean_percent = static_cast<double>(gpu.sum) / gpu.samples,
                           .max_percent = gpu.max,
                           .unavailable_samples = gpu.unavailable});
  }

  if (result.samples_total == 0) {
    // nvidia-smi explains itself on stderr (no driver, no GPU); some
    // messages go to stdout, so fall back to the file's first odd line.
    std::string reason = FirstNonBlankLine(stderr_text);
    if (reason.empty()) reason = first_garbage;
    result.problems.push_back(
        reason.empty()
            ? std::string("nvidia-smi printed no samples, and no error: the run may have ended before its first sample")
            : "nvidia-smi printed no samples: " + reason);
  } else if (result.samples_outside_window == result.samples_total) {
    result.problems.push_back(absl::StrFormat(
        "none of nvidia-smi's %d samples (%s to %s) lie within the run (%s to %s), so its GPU utilization is not "
        "shown",
        result.samples_total, FormatUtc(first_sample_ns), FormatUtc(last_sample_ns), FormatUtc(begin_unix_ns),
        FormatUtc(end_unix_ns)));
  }
  if (garbage_lines > 0) {
    result.problems.push_back(
        absl::StrFormat("skipped %d line%s of %s that %s not nvidia-smi samples (the first: \"%s\")", garbage_lines,
                        garbage_lines == 1 ? "" : "s", csv_name, garbage_lines == 1 ? "is" : "are", first_garbage));
  }
  return result;
}

GpuUtilization SummarizeGpuUtilization(const std::string& csv_path, const std::string& stderr_path,
                                       int64_t begin_unix_ns, int64_t end_unix_ns) {
  // Files of a run directory: never a FIFO (which would block the report)
  // or a device, and bounded (a day of samples is ~100 MB).
  constexpr size_t kMaxCsvBytes = size_t{1} << 30;
  constexpr size_t kMaxStderrBytes = size_t{8} << 20;
  std::string csv_text, error;
  if (!ReadInputFile(csv_path, kMaxCsvBytes, Symlinks::kRefuse, &csv_text, &error)) {
    GpuUtilization result;
    result.file_missing = true;
    result.problems.push_back(absl::StrFormat("GPU utilization was not sampled: cannot read %s (%s)", csv_path, error));
    return result;
  }
  std::string stderr_text;
  if (!ReadInputFile(stderr_path, kMaxStderrBytes, Symlinks::kRefuse, &stderr_text, &error)) stderr_text.clear();
  return SummarizeGpuUtilizationText(csv_text, stderr_text, begin_unix_ns, end_unix_ns, csv_path);
}

}  // namespace rlscope::report
