#include "report/report_vocabulary.h"

#include <catch2/catch.hpp>

using namespace rlscope::report;

TEST_CASE("Levels are listed largest first, ties in the categories' order", "[report_vocabulary]") {
  const std::map<Category, int64_t> ns_by_level = {
      {Category::kPython, 30}, {Category::kBackend, 70}, {Category::kNative, 30}, {Category::kCudaApi, 5}};
  const std::vector<std::pair<Category, int64_t>> expected = {
      {Category::kBackend, 70}, {Category::kPython, 30}, {Category::kNative, 30}, {Category::kCudaApi, 5}};
  CHECK(LevelsLargestFirst(ns_by_level) == expected);
  CHECK(LevelsLargestFirst({}).empty());
}
