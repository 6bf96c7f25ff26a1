#include "collector/huge_page_malloc.h"

#include <catch2/catch.hpp>

using namespace rlscope::collector;

TEST_CASE("rlscope's tunables come first, so the user's own settings win", "[huge_page_malloc]") {
  CHECK(TunablesWithHugePages(std::nullopt) == kMallocTunables);
  CHECK(TunablesWithHugePages(std::string()) == kMallocTunables);
  CHECK(TunablesWithHugePages(std::string("glibc.malloc.hugetlb=0")) ==
        std::string(kMallocTunables) + ":glibc.malloc.hugetlb=0");
}
