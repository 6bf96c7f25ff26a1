#include "report/name_verdicts.h"

#include <catch2/catch.hpp>

using namespace rlscope::report;

namespace {

int questions_asked = 0;

bool StartsWithCuda(std::string_view name) {
  ++questions_asked;
  return name.starts_with("cuda");
}

}  // namespace

TEST_CASE("A name's verdict is the question's answer, asked once per label", "[name_verdicts]") {
  NameTable names;
  const int32_t sync = names.Intern("cudaDeviceSynchronize");
  const int32_t kernel = names.Intern("gemm_kernel");
  questions_asked = 0;
  NameVerdicts verdicts(names, StartsWithCuda);
  for (int i = 0; i < 1000; ++i) {
    CHECK(verdicts.Of(sync));
    CHECK_FALSE(verdicts.Of(kernel));
  }
  CHECK(questions_asked == 2);
}

TEST_CASE("No name is never a yes, and the question is not asked", "[name_verdicts]") {
  NameTable names;
  questions_asked = 0;
  NameVerdicts verdicts(names, [](std::string_view) {
    ++questions_asked;
    return true;
  });
  CHECK_FALSE(verdicts.Of(kNoLabel));
  CHECK(questions_asked == 0);
}
