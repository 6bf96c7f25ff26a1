// `rlscope run` on a terminal: the status line's text, when the line and
// colours are used, and the report's colouring (plain when disabled).
#include "collector/terminal_status.h"

#include <catch2/catch.hpp>
#include <string>

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
