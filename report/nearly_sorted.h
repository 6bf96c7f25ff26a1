// SortNearlySorted: a stable sort for lists that are almost in order, as
// recorded lists are (calls recorded as they end, so an enclosing call
// comes after the few it holds; removal steps in record order).
//
// An insertion sort with a budget of moves: linear when each element lies
// a few places from where it belongs, and handed over to std::stable_sort
// once the elements placed so far took more than 8 moves each, so no
// input costs more than a constant factor over the stable sort, and one
// disordered from the start (the deep nesting of a Python program's
// imports) hands over early. Stable both ways: equal elements keep their
// input order.
#ifndef RLSCOPE_REPORT_NEARLY_SORTED_H_
#define RLSCOPE_REPORT_NEARLY_SORTED_H_

#include <algorithm>
#include <cstddef>
#include <utility>

namespace rlscope::report {

template <typename Iterator, typename Less>
void SortNearlySorted(Iterator first, Iterator last, Less less) {
  const auto size = static_cast<size_t>(last - first);
  size_t moves = 0;
  for (size_t i = 1; i < size; ++i) {
    if (!less(first[i], first[i - 1])) continue;
    auto held = std::move(first[i]);
    size_t j = i;
    while (j > 0 && less(held, first[j - 1])) {
      if (++moves > 8 * i + 64) {
        first[j] = std::move(held);  // Put the held element back before handing over.
        std::stable_sort(first, last, less);
        return;
      }
      first[j] = std::move(first[j - 1]);
      --j;
    }
    first[j] = std::move(held);
  }
}

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_NEARLY_SORTED_H_
