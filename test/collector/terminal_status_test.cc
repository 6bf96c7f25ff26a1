// `rlscope run` on a terminal: the status line's text, when the line and
// colours are used, and the report's colouring (plain when disabled).
#include "collector/terminal_status.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using rlscope::collector::ColorEnabled;
using rlscope::collector::Colorize;
using rlscope::collector::EventRate;
using rlscope::collector::FormatStatusLine;
using rlscope::collector::StatusCounts;
using rlscope::collector::StatusLineEnabled;

namespace {

StatusCounts Counts(int64_t elapsed_ns, uint64_t processes, uint64_t events, double rate, uint64_t dropped) {
  StatusCounts counts;
  counts.elapsed_ns = elapsed_ns;
  counts.processes = processes;
  counts.events = events;
  counts.events_per_s = rate;
  counts.dropped = dropped;
  return counts;
}

}  // namespace

TEST_CASE("FormatStatusLine: elapsed, processes, events with their rate, dropped") {
  CHECK(FormatStatusLine(Counts(12'345'000'000, 2, 1'234'567, 45'600, 0), 200) ==
        "rlscope: 12.3 s | 2 procs | 1,234,567 events (45.6k/s) | 0 dropped");
  CHECK(FormatStatusLine(Counts(0, 1, 0, 0, 1'000), 200) == "rlscope: 0.0 s | 1 proc | 0 events (0/s) | 1,000 dropped");
  CHECK(FormatStatusLine(Counts(125'000'000'000, 3, 999, 2.5e6, 0), 200) ==
        "rlscope: 2m05s | 3 procs | 999 events (2.5M/s) | 0 dropped");
  CHECK(FormatStatusLine(Counts(3'725'000'000'000, 0, 0, 0, 0), 200).rfind("rlscope: 1h02m05s |", 0) == 0);
}

TEST_CASE("FormatStatusLine: never reaches the terminal's last column") {
  const StatusCounts counts = Counts(12'345'000'000, 2, 1'234'567, 45'600, 0);
  CHECK(FormatStatusLine(counts, 20) == "rlscope: 12.3 s | 2");
  CHECK(FormatStatusLine(counts, 20).size() == 19);
  CHECK(FormatStatusLine(counts, 1).empty());
  CHECK(FormatStatusLine(counts, 0).empty());
  CHECK(FormatStatusLine(counts, 80).find('\n') == std::string::npos);
}

TEST_CASE("StatusLineEnabled and ColorEnabled: terminals only, TERM=dumb and NO_COLOR respected") {
  CHECK(StatusLineEnabled(true, "xterm-256color"));
  CHECK_FALSE(StatusLineEnabled(false, "xterm-256color"));
  CHECK_FALSE(StatusLineEnabled(true, "dumb"));
  CHECK_FALSE(StatusLineEnabled(true, nullptr));
  CHECK(ColorEnabled(true, nullptr, "xterm"));
  CHECK(ColorEnabled(true, "", "xterm"));  // no-color.org: set and non-empty.
  CHECK_FALSE(ColorEnabled(true, "1", "xterm"));
  CHECK_FALSE(ColorEnabled(false, nullptr, "xterm"));
  CHECK_FALSE(ColorEnabled(true, nullptr, "dumb"));
}

TEST_CASE("Colorize: bold first line, red problem lines, unchanged when disabled") {
  const std::string report =
      "rlscope report: python3 train.py\n"
      "  exit status 0\n"
      "  ! process 12 dropped 5 events\n"
      "problems with this run's data:\n"
      "  ! a problem\n";
  CHECK(Colorize(report, false) == report);
  const std::string colored = Colorize(report, true);
  CHECK(colored ==
        "\x1b[1mrlscope report: python3 train.py\x1b[0m\n"
        "  exit status 0\n"
        "\x1b[31m  ! process 12 dropped 5 events\x1b[0m\n"
        "problems with this run's data:\n"
        "\x1b[31m  ! a problem\x1b[0m\n");
  CHECK(Colorize("", true).empty());
  CHECK(Colorize("one line, no newline", true) == "\x1b[1mone line, no newline\x1b[0m");
}

TEST_CASE("EventRate: events per second over about the last second") {
  EventRate rate;
  CHECK(rate.Add(0, 0) == 0);
  CHECK(rate.Add(500'000'000, 500) == Approx(1000));
  CHECK(rate.Add(1'000'000'000, 1000) == Approx(1000));
  // The window slides: the first second's 1000/s no longer counts.
  CHECK(rate.Add(1'500'000'000, 1000) == Approx(500));   // Base at 0.5 s: 500 events over 1 s.
  CHECK(rate.Add(2'500'000'000, 1000) == Approx(0));     // Nothing since 1.5 s.
  CHECK(rate.Add(3'000'000'000, 4000) == Approx(2000));  // Base at 1.5 s: 3000 events over 1.5 s.
}

namespace {

using rlscope::collector::StatusLine;
using rlscope::collector::TerminalSize;

// Screen: ROWS x COLUMNS of a terminal that understands what the status
// line and a program write: printable ASCII, '\r', '\n' (a tty with onlcr
// shows it as a new line at column 0), ESC 7 / ESC 8, and CSI sequences
// r (scroll region), H (cursor position), K / 2K (clear) and A (up).
class Screen {
 public:
  Screen(int rows, int columns) : rows_(rows), columns_(columns), bottom_(rows - 1), lines_(rows, "") {}

  void Write(const std::string& bytes) {
    for (size_t i = 0; i < bytes.size(); ++i) {
      const char c = bytes[i];
      if (c == '\r') {
        column_ = 0;
      } else if (c == '\n') {
        column_ = 0;
        LineFeed();
      } else if (c == '\x1b' && i + 1 < bytes.size() && bytes[i + 1] == '7') {
        saved_ = {row_, column_};
        ++i;
      } else if (c == '\x1b' && i + 1 < bytes.size() && bytes[i + 1] == '8') {
        std::tie(row_, column_) = saved_;
        ++i;
      } else if (c == '\x1b' && i + 1 < bytes.size() && bytes[i + 1] == '[') {
        size_t end = i + 2;
        while (end < bytes.size() && (isdigit(bytes[end]) || bytes[end] == ';')) ++end;
        REQUIRE(end < bytes.size());
        Csi(bytes.substr(i + 2, end - i - 2), bytes[end]);
        i = end;
      } else {
        REQUIRE(c >= ' ');
        if (column_ >= columns_) {
          column_ = 0;
          LineFeed();
        }
        std::string& line = lines_[row_];
        if (line.size() <= static_cast<size_t>(column_)) line.resize(column_ + 1, ' ');
        line[column_++] = c;
      }
    }
  }
  // Row: what row `r` shows, without trailing blanks.
  std::string Row(int r) const {
    std::string line = lines_[r];
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line;
  }
  int rows() const { return rows_; }

 private:
  void LineFeed() {
    if (row_ == bottom_) {
      lines_.erase(lines_.begin() + top_);
      lines_.insert(lines_.begin() + bottom_, "");
    } else if (row_ < rows_ - 1) {
      ++row_;
    }
  }
  void Csi(const std::string& parameters, char final) {
    std::vector<int> values;
    for (size_t begin = 0; begin <= parameters.size() && !parameters.empty();) {
      size_t end = parameters.find(';', begin);
      if (end == std::string::npos) end = parameters.size();
      values.push_back(std::stoi(parameters.substr(begin, end - begin)));
      begin = end + 1;
    }
    auto value = [&](size_t i, int otherwise) { return i < values.size() ? values[i] : otherwise; };
    switch (final) {
      case 'r':
        top_ = value(0, 1) - 1;
        bottom_ = value(1, rows_) - 1;
        row_ = column_ = 0;  // DECSTBM homes the cursor.
        break;
      case 'H':
        row_ = value(0, 1) - 1;
        column_ = value(1, 1) - 1;
        break;
      case 'K':
        if (value(0, 0) == 2) {
          lines_[row_].clear();
        } else if (lines_[row_].size() > static_cast<size_t>(column_)) {
          lines_[row_].resize(column_);
        }
        break;
      case 'A': row_ = std::max(0, row_ - std::max(1, value(0, 1))); break;
      default: FAIL("unexpected CSI final byte " << final);
    }
  }

  int rows_, columns_;
  int top_ = 0, bottom_;
  int row_ = 0, column_ = 0;
  std::pair<int, int> saved_{0, 0};
  std::vector<std::string> lines_;
};

TerminalSize g_size;
TerminalSize FakeSize(int) { return g_size; }

// Drain: what was written to the pipe since the last call.
std::string Drain(int fd) {
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) out.append(buffer, n);
  return out;
}

}  // namespace

TEST_CASE("StatusLine keeps the bottom row: the command's output is never spliced with it") {
  int fds[2];
  REQUIRE(pipe2(fds, O_NONBLOCK) == 0);
  g_size = {6, 40};
  Screen screen(6, 40);
  // The shell's last lines, the cursor on the bottom row's start.
  screen.Write("old 1\nold 2\nold 3\nold 4\nold 5\n");
  StatusLine status(fds[1], 0, &FakeSize);
  int64_t now = 0;
  auto tick = [&] {
    now += 300'000'000;
    status.Update(now, 1, 10, 0);
    screen.Write(Drain(fds[0]));
  };
  tick();
  screen.Write("ppo: step 1\n");
  screen.Write("ppo: step 2 (half a line");
  tick();  // Drawn while the command is in the middle of a line.
  screen.Write(", then the rest)\n");
  for (int step = 3; step <= 5; ++step) {
    screen.Write("ppo: step " + std::to_string(step) + "\n");
    tick();
  }
  // The command's lines scroll above the line, each whole; the cursor
  // waits on the empty row under them.
  CHECK(screen.Row(0) == "ppo: step 2 (half a line, then the rest)");
  CHECK(screen.Row(1) == "ppo: step 3");
  CHECK(screen.Row(2) == "ppo: step 4");
  CHECK(screen.Row(3) == "ppo: step 5");
  CHECK(screen.Row(4).empty());
  INFO(screen.Row(5));
  CHECK(screen.Row(5).rfind("rlscope: 1.5 s | 1 proc | 10 events", 0) == 0);

  // Erased: the row is cleared and the whole screen scrolls again.
  status.Erase();
  screen.Write(Drain(fds[0]));
  CHECK(screen.Row(5).empty());
  screen.Write("report line\nmore\n");
  CHECK(screen.Row(2) == "ppo: step 5");
  CHECK(screen.Row(3) == "report line");
  CHECK(screen.Row(4) == "more");
  CHECK(screen.Row(5).empty());
  close(fds[0]);
  close(fds[1]);
}

TEST_CASE("StatusLine: a resized terminal gets its new bottom row; an unknown size draws in place") {
  int fds[2];
  REQUIRE(pipe2(fds, O_NONBLOCK) == 0);
  g_size = {24, 80};
  StatusLine status(fds[1], 0, &FakeSize);
  status.Update(1, 1, 0, 0);
  const std::string first = Drain(fds[0]);
  CHECK(first.rfind("\n\x1b"
                    "7\x1b[1;23r\x1b"
                    "8\x1b[1A",
                    0) == 0);
  CHECK(first.find("\x1b[24;1H\x1b[2Krlscope: ") != std::string::npos);
  g_size = {30, 80};
  status.Update(400'000'000, 1, 0, 0);
  const std::string resized = Drain(fds[0]);
  CHECK(resized.find("\x1b[r\x1b[24;1H\x1b[2K") != std::string::npos);  // The old row given back, cleared.
  CHECK(resized.find("\x1b[1;29r") != std::string::npos);
  CHECK(resized.find('\n') == std::string::npos);  // No second line feed.
  g_size = {0, 0};
  status.Update(800'000'000, 1, 0, 0);
  const std::string in_place = Drain(fds[0]);
  CHECK(in_place.find("\x1b[r") != std::string::npos);  // The row given back first.
  CHECK(in_place.find("\r\x1b[Krlscope: ") != std::string::npos);
  status.Erase();
  CHECK(Drain(fds[0]) == "\r\x1b[K");
  close(fds[0]);
  close(fds[1]);
}
