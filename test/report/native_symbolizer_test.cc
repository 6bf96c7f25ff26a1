// NativeSymbolizer reads the objects a trace names: a path there is input,
// and a FIFO or device there must not block or exhaust the report.
#include "report/native_symbolizer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

using rlscope::report::NativeSymbolizer;

TEST_CASE("Module paths that are no regular file give no names and never block", "[symbolizer]") {
  const std::string fifo = "/tmp/rlscope_symbolizer_test_" + std::to_string(getpid()) + ".so";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  NativeSymbolizer symbolizer;
  for (const std::string& path : {fifo, std::string("/dev/zero"), std::string("/tmp")}) {
    CHECK(symbolizer.RuleName(path, 0, 0x1000).empty());  // A blocking open or an unbounded read never returns.
  }
  std::remove(fifo.c_str());
}
