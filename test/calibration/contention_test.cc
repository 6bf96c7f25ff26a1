#include "calibration/contention.h"

#include <catch2/catch.hpp>

namespace cal = rlscope::calibration;

TEST_CASE("the load average is the first field of /proc/loadavg", "[contention]") {
  REQUIRE(cal::ParseLoadAverage("0.52 0.61 0.70 1/123 4567\n").ok());
  CHECK(*cal::ParseLoadAverage("0.52 0.61 0.70 1/123 4567\n") == Approx(0.52));
  CHECK(*cal::ParseLoadAverage("12.00 3.00 1.00 9/300 1") == Approx(12));
  CHECK_FALSE(cal::ParseLoadAverage("").ok());
  CHECK_FALSE(cal::ParseLoadAverage("busy 1 2").ok());
  CHECK_FALSE(cal::ParseLoadAverage("-1 0 0").ok());
}

TEST_CASE("the aggregate cpu line of /proc/stat gives total, idle and steal ticks", "[contention]") {
  // user nice system idle iowait irq softirq steal guest guest_nice
  const char* stat =
      "cpu  100 5 50 800 20 1 2 30 7 0\n"
      "cpu0 50 2 25 400 10 1 1 15 0 0\n"
      "intr 12345 0 0\n";
  absl::StatusOr<cal::CpuTimes> times = cal::ParseCpuTimes(stat);
  REQUIRE(times.ok());
  CHECK(times->total == 100 + 5 + 50 + 800 + 20 + 1 + 2 + 30);  // Guest time is in user already.
  CHECK(times->idle == 820);
  CHECK(times->steal == 30);
  // An old kernel without steal, iowait or later fields.
  absl::StatusOr<cal::CpuTimes> old = cal::ParseCpuTimes("cpu 10 0 5 85\n");
  REQUIRE(old.ok());
  CHECK(old->total == 100);
  CHECK(old->steal == 0);
  CHECK_FALSE(cal::ParseCpuTimes("cpu0 1 2 3 4\n").ok());  // No aggregate line.
  CHECK_FALSE(cal::ParseCpuTimes("cpu 1 2 x 4\n").ok());
  CHECK_FALSE(cal::ParseCpuTimes("cpu 1 2\n").ok());
  CHECK_FALSE(cal::ParseCpuTimes("").ok());
}

TEST_CASE("a kernel CPU list counts its CPUs", "[contention]") {
  CHECK(*cal::ParseCpuList("0-1\n") == 2);
  CHECK(*cal::ParseCpuList("0") == 1);
  CHECK(*cal::ParseCpuList("0-3,6,8-9") == 7);
  CHECK_FALSE(cal::ParseCpuList("").ok());
  CHECK_FALSE(cal::ParseCpuList("3-1").ok());
  CHECK_FALSE(cal::ParseCpuList("a-b").ok());
}

TEST_CASE("the figures between two snapshots separate other work from the sweep's own", "[contention]") {
  cal::ContentionSnapshot begin, end;
  begin.cpus = 2;
  begin.load_average = 0.5;
  end.load_average = 2.5;
  begin.wall_s = 100;
  end.wall_s = 110;  // 10 s: 2 CPUs x 10 s x 100 ticks = 2000 ticks.
  begin.have_cpu = end.have_cpu = true;
  begin.cpu = {1000, 500, 0};
  end.cpu = {3000, 500 + 600, 200};  // 600 idle, 200 stolen: 1200 ticks = 12 CPU-seconds busy.
  begin.own_cpu_s = 1;
  end.own_cpu_s = 9;  // The sweep's own 8 CPU-seconds: others had 4 over 10 s.
  begin.children_cpu_s = 0;
  end.children_cpu_s = 4;
  begin.children_involuntary = 10;
  end.children_involuntary = 410;
  const cal::ContentionFigures figures = cal::Between(begin, end);
  CHECK(figures.cpus == 2);
  CHECK(figures.load_average_begin == Approx(0.5));
  CHECK(figures.load_average_max == Approx(2.5));
  CHECK(figures.steal_fraction == Approx(0.1));
  CHECK(figures.other_busy_cpus == Approx(0.4));
  CHECK(figures.involuntary_switches_per_cpu_s == Approx(100));
  // Unreadable /proc/stat: unknown, not zero.
  end.have_cpu = false;
  CHECK(cal::Between(begin, end).steal_fraction == -1);
  CHECK(cal::Between(begin, end).other_busy_cpus == -1);
}

TEST_CASE("the test seam overrides contention figures and names a bad setting", "[contention]") {
  cal::ContentionFigures figures;
  REQUIRE(cal::ApplyTestContention("steal=0.3,load=12,other_busy=1.5", figures).ok());
  CHECK(figures.steal_fraction == Approx(0.3));
  CHECK(figures.load_average_max == Approx(12));
  CHECK(figures.other_busy_cpus == Approx(1.5));
  CHECK(cal::ApplyTestContention("", figures).ok());
  const absl::Status bad = cal::ApplyTestContention("steal", figures);
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.message()).find("RLSCOPE_CALIBRATE_TEST_CONTENTION") != std::string::npos);
  CHECK_FALSE(cal::ApplyTestContention("heat=3", figures).ok());
}
