#include "report/nearly_sorted.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

using rlscope::report::SortNearlySorted;

namespace {

// A key that ties often, and the element's input position (as a string:
// a moved-from string is empty, so an element lost or duplicated while
// shifting shows) to check that ties keep their order.
struct Keyed {
  int64_t key;
  std::string position;
  bool operator==(const Keyed&) const = default;
};

bool ByKey(const Keyed& a, const Keyed& b) { return a.key < b.key; }

// Each element placed `displacement` or fewer places after where it
// belongs, keys divided so that neighbours tie.
std::vector<Keyed> Displaced(size_t size, int displacement, int ties, std::mt19937_64& rng) {
  std::vector<Keyed> list;
  for (size_t i = 0; i < size; ++i) {
    const int64_t jitter = displacement > 0 ? static_cast<int64_t>(rng() % (displacement + 1)) : 0;
    list.push_back({(static_cast<int64_t>(i) - jitter) / ties, std::to_string(i)});
  }
  return list;
}

void CheckSortsStably(std::vector<Keyed> list) {
  std::vector<Keyed> expected = list;
  std::stable_sort(expected.begin(), expected.end(), ByKey);
  SortNearlySorted(list.begin(), list.end(), ByKey);
  CHECK(list == expected);
}

}  // namespace

TEST_CASE("a nearly sorted list sorts as a stable sort would, whatever its disorder", "[nearly_sorted]") {
  std::mt19937_64 rng(7);
  // Displacements from none (in order) to a shuffle, so the budget runs
  // out part of the way through some lists and the stable sort finishes.
  for (int displacement : {0, 1, 3, 20, 1000, 1 << 30}) {
    for (int trial = 0; trial < 50; ++trial) {
      CheckSortsStably(Displaced(rng() % 3000, displacement, 4, rng));
    }
  }
  // An ordered stretch, then a shuffled one full of ties: handed over in
  // the middle, where the held element must go back before the stable
  // sort takes the rest.
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<Keyed> list = Displaced(2000, 0, 1, rng);
    std::vector<Keyed> shuffled = Displaced(2000, 1 << 30, 50, rng);
    for (Keyed& element : shuffled) element.position = "late " + element.position;
    list.insert(list.end(), shuffled.begin(), shuffled.end());
    CheckSortsStably(list);
  }
}

TEST_CASE("a disordered list costs a constant factor over a stable sort, not a square", "[nearly_sorted]") {
  std::mt19937_64 rng(11);
  for (int displacement : {1 << 30, 5000}) {
    const size_t size = 100'000;
    std::vector<Keyed> list = Displaced(size, displacement, 1, rng);
    uint64_t comparisons = 0;
    SortNearlySorted(list.begin(), list.end(), [&comparisons](const Keyed& a, const Keyed& b) {
      ++comparisons;
      return a.key < b.key;
    });
    CHECK(std::is_sorted(list.begin(), list.end(), ByKey));
    // A stable sort makes about n log2 n; an insertion sort of a shuffle
    // n^2 / 4 (2.5e9 here).
    CHECK(comparisons < 20 * size * static_cast<uint64_t>(std::log2(size)));
  }
}

TEST_CASE("an enclosing call recorded after the calls it holds moves before them", "[nearly_sorted]") {
  // Recorded as they end: two inner calls, then the one around them.
  std::vector<Keyed> calls = {{20, "0"}, {40, "1"}, {10, "2"}, {60, "3"}};
  SortNearlySorted(calls.begin(), calls.end(), ByKey);
  CHECK(calls == std::vector<Keyed>{{10, "2"}, {20, "0"}, {40, "1"}, {60, "3"}});
  std::vector<Keyed> empty;
  SortNearlySorted(empty.begin(), empty.end(), ByKey);
  CHECK(empty.empty());
}
