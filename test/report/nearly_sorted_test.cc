#include "report/nearly_sorted.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

using rlscope::report::SortNearlySorted;

namespace {

// A key that ties often, and the element's input position to check that
// ties keep their order.
struct Keyed {
  int64_t key;
  size_t position;
  bool operator==(const Keyed&) const = default;
};

bool ByKey(const Keyed& a, const Keyed& b) { return a.key < b.key; }

}  // namespace

TEST_CASE("a nearly sorted list sorts as a stable sort would, whatever its disorder", "[nearly_sorted]") {
  std::mt19937_64 rng(7);
  // Displacements from none (in order) to a shuffle, so the budget runs
  // out part of the way through some lists and the stable sort finishes.
  for (int displacement : {0, 1, 3, 20, 1000, 1 << 30}) {
    for (int trial = 0; trial < 50; ++trial) {
      const size_t size = rng() % 3000;
      std::vector<Keyed> list;
      for (size_t i = 0; i < size; ++i) {
        const int64_t jitter = displacement > 0 ? static_cast<int64_t>(rng() % (displacement + 1)) : 0;
        list.push_back({(static_cast<int64_t>(i) - jitter) / 4, i});  // /4: ties.
      }
      std::vector<Keyed> expected = list;
      std::stable_sort(expected.begin(), expected.end(), ByKey);
      SortNearlySorted(list.begin(), list.end(), ByKey);
      CHECK(list == expected);
    }
  }
}

TEST_CASE("an enclosing call recorded after the calls it holds moves before them", "[nearly_sorted]") {
  // Recorded as they end: two inner calls, then the one around them.
  std::vector<Keyed> calls = {{20, 0}, {40, 1}, {10, 2}, {60, 3}};
  SortNearlySorted(calls.begin(), calls.end(), ByKey);
  CHECK(calls == std::vector<Keyed>{{10, 2}, {20, 0}, {40, 1}, {60, 3}});
  std::vector<Keyed> empty;
  SortNearlySorted(empty.begin(), empty.end(), ByKey);
  CHECK(empty.empty());
}
