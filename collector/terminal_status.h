// What `rlscope run` shows on a terminal: a live status line while COMMAND
// runs and some emphasis in the printed report. Both only when stderr is a
// terminal; report.txt itself always stays plain text.
#ifndef RLSCOPE_COLLECTOR_TERMINAL_STATUS_H_
#define RLSCOPE_COLLECTOR_TERMINAL_STATUS_H_

#include <cstdint>
#include <deque>
#include <string>
#include <utility>

namespace rlscope::collector {

// StatusLineEnabled: a status line is drawn only on a terminal that can
// move the cursor back ("\r") and clear ("\x1b[K"): not with TERM=dumb (or
// unset). `term` may be null.
bool StatusLineEnabled(bool stderr_is_tty, const char* term);

// ColorEnabled: emphasis (ANSI SGR) only on a terminal, unless NO_COLOR is
// set to anything non-empty (no-color.org) or TERM is dumb/unset.
bool ColorEnabled(bool stderr_is_tty, const char* no_color, const char* term);

struct StatusCounts {
  int64_t elapsed_ns = 0;
  uint64_t processes = 0;   // Event streams opened so far (a process each; an exec starts another).
  uint64_t events = 0;      // CPU events and GPU activity records received so far.
  double events_per_s = 0;  // Over about the last second.
  uint64_t dropped = 0;     // Events the processes reported they could not record, so far.
};

// FormatStatusLine: one line, no newline, at most `width` - 1 characters
// (the last column is left free so a terminal never wraps it), e.g.
// "rlscope: 12.3 s | 2 procs | 1,234,567 events (45.6k/s) | 0 dropped".
std::string FormatStatusLine(const StatusCounts& counts, size_t width);

// Colorize: `text` (a report) with its first line bold and its problem
// lines ("  ! ...") red; `text` unchanged when not `enabled`.
std::string Colorize(const std::string& text, bool enabled);

// EventRate: events per second over a sliding window of about a second,
// from samples of the running total.
class EventRate {
 public:
  double Add(int64_t now_ns, uint64_t total_events);

 private:
  std::deque<std::pair<int64_t, uint64_t>> samples_;
};

// TerminalSize: a terminal's rows and columns; 0 where unknown.
struct TerminalSize {
  int rows = 0;
  int columns = 0;
};
TerminalSize TerminalSizeOf(int fd);

// The bytes that keep the status line on the terminal's bottom row, out
// of the command's way: a scroll region of rows 1..ROWS-1 (DECSTBM)
// confines everything else written to the terminal above it, and each
// draw saves and restores the cursor (DECSC/DECRC) around writing the
// bottom row, so the command's output is never spliced with the line nor
// overwritten by it (the way apt draws its progress bar).
//   ReserveBottomRow: sets the region; `first`: also feeds one line first,
//     so a cursor on the bottom row is not left outside the region.
//   DrawBottomRow: `line` on the bottom row.
//   ReleaseBottomRow: the whole screen scrolls again; the row is cleared.
std::string ReserveBottomRow(int rows, bool first);
std::string DrawBottomRow(int rows, const std::string& line);
std::string ReleaseBottomRow(int rows);

// StatusLine: draws the line on `fd` (stderr) at most every 250 ms: on the
// bottom row, kept for it (above), when the terminal has at least
// kMinRowsForBottomRow rows; else in place at the cursor ("\r", clear to
// the end of the line), as on a terminal whose size is unknown. Erase()
// removes it and gives the bottom row back (before COMMAND's exit is
// reported, before a Ctrl-Z hands the terminal back to the shell; the next
// Update after `fg` takes the row again). A resized terminal has its new
// bottom row taken at the next draw.
class StatusLine {
 public:
  static constexpr int kMinRowsForBottomRow = 4;
  using SizeOf = TerminalSize (*)(int fd);
  StatusLine(int fd, int64_t start_ns, SizeOf size_of = &TerminalSizeOf)
      : fd_(fd), start_ns_(start_ns), size_of_(size_of) {}
  // Update: redraws when 250 ms have passed since the last draw.
  void Update(int64_t now_ns, uint64_t processes, uint64_t events, uint64_t dropped);
  void Erase();

 private:
  void Write(const std::string& bytes);
  int fd_;
  int64_t start_ns_;
  SizeOf size_of_;
  int64_t last_draw_ns_ = 0;
  bool drawn_ = false;
  int reserved_rows_ = 0;  // The terminal's rows when its bottom row was taken; 0: not taken.
  EventRate rate_;
};

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_TERMINAL_STATUS_H_
