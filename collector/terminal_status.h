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

// StatusLine: redraws the line on `fd` (stderr) in place, at most every
// 250 ms; Erase() removes it (before COMMAND's exit is reported, before a
// Ctrl-Z hands the terminal back to the shell).
class StatusLine {
 public:
  StatusLine(int fd, int64_t start_ns) : fd_(fd), start_ns_(start_ns) {}
  // Update: redraws when 250 ms have passed since the last draw.
  void Update(int64_t now_ns, uint64_t processes, uint64_t events, uint64_t dropped);
  void Erase();

 private:
  void Write(const std::string& bytes);
  int fd_;
  int64_t start_ns_;
  int64_t last_draw_ns_ = 0;
  bool drawn_ = false;
  EventRate rate_;
};

}  // namespace rlscope::collector

#endif  // RLSCOPE_COLLECTOR_TERMINAL_STATUS_H_
