#include "collector/terminal_status.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "collector/file_output.h"

namespace rlscope::collector {

namespace {

constexpr int64_t kRedrawIntervalNs = 250'000'000;
constexpr int64_t kRateWindowNs = 1'000'000'000;
constexpr const char* kClearLine = "\r\x1b[K";
// DECSC and DECRC: ESC 7 and ESC 8 (written as octal: "\x1b7" would be one hex escape).
constexpr const char kSaveCursor[] = "\0337";
constexpr const char kRestoreCursor[] = "\0338";

bool DumbTerminal(const char* term) { return term == nullptr || *term == '\0' || strcmp(term, "dumb") == 0; }

// 1234567 -> "1,234,567".
std::string Grouped(uint64_t n) {
  std::string digits = absl::StrFormat("%d", n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// 45600 -> "45.6k", 1.2e6 -> "1.2M".
std::string Rate(double per_s) {
  if (per_s >= 1e6) return absl::StrFormat("%.1fM", per_s / 1e6);
  if (per_s >= 1e3) return absl::StrFormat("%.1fk", per_s / 1e3);
  return absl::StrFormat("%.0f", per_s);
}

std::string Elapsed(int64_t ns) {
  const int64_t s = ns / 1'000'000'000;
  if (s < 60) return absl::StrFormat("%.1f s", static_cast<double>(ns) / 1e9);
  if (s < 3600) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  return absl::StrFormat("%dh%02dm%02ds", s / 3600, s / 60 % 60, s % 60);
}

}  // namespace

bool StatusLineEnabled(bool stderr_is_tty, const char* term) { return stderr_is_tty && !DumbTerminal(term); }

bool ColorEnabled(bool stderr_is_tty, const char* no_color, const char* term) {
  return stderr_is_tty && (no_color == nullptr || *no_color == '\0') && !DumbTerminal(term);
}

std::string FormatStatusLine(const StatusCounts& counts, size_t width) {
  std::string line = absl::StrFormat("rlscope: %s | %d proc%s | %s events (%s/s) | %s dropped",
                                     Elapsed(counts.elapsed_ns), counts.processes, counts.processes == 1 ? "" : "s",
                                     Grouped(counts.events), Rate(counts.events_per_s), Grouped(counts.dropped));
  const size_t limit = width > 0 ? width - 1 : 0;
  if (line.size() > limit) line.resize(limit);
  return line;
}

std::string Colorize(const std::string& text, bool enabled) {
  if (!enabled) return text;
  std::string out;
  size_t begin = 0;
  bool first = true;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    const bool has_newline = end != std::string::npos;
    if (!has_newline) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    if (first && !line.empty()) {
      out += "\x1b[1m" + line + "\x1b[0m";
    } else if (line.find_first_not_of(' ') != std::string::npos &&
               line.compare(line.find_first_not_of(' '), 2, "! ") == 0) {
      out += "\x1b[31m" + line + "\x1b[0m";
    } else {
      out += line;
    }
    if (has_newline) out += '\n';
    first = false;
    begin = end + 1;
  }
  return out;
}

double EventRate::Add(int64_t now_ns, uint64_t total_events) {
  samples_.emplace_back(now_ns, total_events);
  // Keep the newest sample at least a window old, as the rate's base.
  while (samples_.size() > 2 && now_ns - samples_[1].first >= kRateWindowNs) samples_.pop_front();
  const auto& [base_ns, base_events] = samples_.front();
  if (now_ns <= base_ns) return 0;
  return static_cast<double>(total_events - base_events) * 1e9 / static_cast<double>(now_ns - base_ns);
}

TerminalSize TerminalSizeOf(int fd) {
  winsize size{};
  if (ioctl(fd, TIOCGWINSZ, &size) != 0) return {};
  return {size.ws_row, size.ws_col};
}

std::string ReserveBottomRow(int rows, bool first) {
  // Setting the region moves the cursor to the top left: saved and
  // restored around it. A first reservation feeds a line, then goes back
  // up to it, so a cursor that was on the bottom row ends inside the region.
  std::string bytes = first ? "\n" : "";
  bytes += kSaveCursor + absl::StrFormat("\x1b[1;%dr", rows - 1) + kRestoreCursor;
  if (first) bytes += "\x1b[1A";
  return bytes;
}

std::string DrawBottomRow(int rows, const std::string& line) {
  return kSaveCursor + absl::StrFormat("\x1b[%d;1H\x1b[2K", rows) + line + kRestoreCursor;
}

std::string ReleaseBottomRow(int rows) {
  return kSaveCursor + absl::StrFormat("\x1b[r\x1b[%d;1H\x1b[2K", rows) + kRestoreCursor;
}

void StatusLine::Update(int64_t now_ns, uint64_t processes, uint64_t events, uint64_t dropped) {
  if (drawn_ && now_ns - last_draw_ns_ < kRedrawIntervalNs) return;
  last_draw_ns_ = now_ns;
  StatusCounts counts;
  counts.elapsed_ns = now_ns - start_ns_;
  counts.processes = processes;
  counts.events = events;
  counts.events_per_s = rate_.Add(now_ns, events);
  counts.dropped = dropped;
  const TerminalSize size = size_of_(fd_);
  const std::string line = FormatStatusLine(counts, size.columns > 0 ? size.columns : 80);
  std::string bytes;
  if (size.rows >= kMinRowsForBottomRow) {
    if (reserved_rows_ != size.rows) {
      // Resized: the old bottom row (now inside the region, or gone) is
      // cleared before the new one is taken.
      if (reserved_rows_ != 0) bytes += ReleaseBottomRow(reserved_rows_);
      bytes += ReserveBottomRow(size.rows, /*first=*/reserved_rows_ == 0);
      reserved_rows_ = size.rows;
    }
    bytes += DrawBottomRow(size.rows, line);
  } else {
    if (reserved_rows_ != 0) bytes += ReleaseBottomRow(reserved_rows_);
    reserved_rows_ = 0;
    bytes += kClearLine + line;
  }
  Write(bytes);
  drawn_ = true;
}

void StatusLine::Erase() {
  if (!drawn_) return;
  Write(reserved_rows_ != 0 ? ReleaseBottomRow(reserved_rows_) : std::string(kClearLine));
  reserved_rows_ = 0;
  drawn_ = false;
}

void StatusLine::Write(const std::string& bytes) {
  WriteAll(fd_, bytes.data(), bytes.size());  // A terminal gone away: nothing to show it on.
}

}  // namespace rlscope::collector
