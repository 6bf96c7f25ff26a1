// The capture window as meta.json keeps it (DescribeCaptureWindow): the
// options as a user would type them, for a report whose window never opened.
#include <catch2/catch.hpp>
#include <csignal>

#include "collector/profiling_options.h"

namespace rlscope::collector {
namespace {

TEST_CASE("No capture option asks for the whole run", "[capture_request]") {
  CHECK(DescribeCaptureWindow(CaptureWindow{}).empty());
}

TEST_CASE("Each capture option is described as typed", "[capture_request]") {
  CaptureWindow timed;
  timed.delay_ns = 60'000'000'000;
  timed.duration_ns = 1'500'000'000;
  CHECK(DescribeCaptureWindow(timed) == "--delay 60 --duration 1.500");

  CaptureWindow instances;
  instances.skip = 1000;
  instances.count = 2000;
  instances.operation = "simulation";
  CHECK(DescribeCaptureWindow(instances) == "--skip 1000 --capture 2000 --capture-op simulation");
  instances.every = 10000;
  CHECK(DescribeCaptureWindow(instances) == "--skip 1000 --capture 2000 --every 10000 --capture-op simulation");

  CaptureWindow ranges;
  ranges.api = true;
  CHECK(DescribeCaptureWindow(ranges) == "--capture-range api");
  ranges = {};
  ranges.profiler_api = true;
  CHECK(DescribeCaptureWindow(ranges) == "--capture-range cudaProfilerApi");
  ranges = {};
  ranges.nvtx_range = "train";
  CHECK(DescribeCaptureWindow(ranges) == "--capture-range nvtx:train");

  CaptureWindow signalled;
  signalled.signal = SIGUSR2;
  CHECK(DescribeCaptureWindow(signalled) == "--capture-signal=SIGUSR2");
}

}  // namespace
}  // namespace rlscope::collector
