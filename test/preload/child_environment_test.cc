#include "child_environment.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using rlscope::preload::ChildEnvironment;

namespace {

// Completes `envp` (nullptr-terminated here) into strings.
std::vector<std::string> Completed(std::vector<const char*> entries) {
  entries.push_back(nullptr);
  auto* envp = const_cast<char* const*>(entries.data());
  const size_t bytes = ChildEnvironment::BytesNeeded(envp);
  std::vector<std::string> out;
  if (bytes == 0) {
    for (char* const* at = envp; *at != nullptr; ++at) out.emplace_back(*at);
    return out;
  }
  std::vector<void*> scratch(bytes / sizeof(void*) + 1);
  for (char* const* at = ChildEnvironment::Complete(envp, scratch.data(), bytes); *at != nullptr; ++at) {
    out.emplace_back(*at);
  }
  return out;
}

void CaptureRun() {
  const char* start[] = {"HOME=/home/me",
                         "RLSCOPE_SOCKET=/tmp/rlscope-1/socket",
                         "RLSCOPE_RULES=/run/rules/default.rules",
                         "PYTHONPATH=/opt/rl/share/rlscope/python:/work/src",
                         "CUDA_INJECTION64_PATH=/opt/rl/lib/librlscope_preload.so",
                         "NVTX_INJECTION64_PATH=/other/injection.so",
                         "LD_PRELOAD=/opt/rl/lib/librlscope_preload.so:/usr/lib/libjemalloc.so",
                         nullptr};
  ChildEnvironment::CaptureAtStart(const_cast<char* const*>(start), "/opt/rl/lib/librlscope_preload.so");
}

}  // namespace

TEST_CASE("ChildEnvironment passes an environment on unchanged when nothing was captured", "[child_environment]") {
  ChildEnvironment::CaptureAtStart(nullptr, nullptr);  // As outside `rlscope run`: never called.
  const char* envp[] = {"PATH=/bin", nullptr};
  CHECK(ChildEnvironment::BytesNeeded(const_cast<char* const*>(envp)) == 0);
  CHECK(ChildEnvironment::BytesNeeded(nullptr) == 0);
}

TEST_CASE("ChildEnvironment puts rlscope's variables back into an empty environment", "[child_environment]") {
  CaptureRun();
  CHECK(Completed({}) == std::vector<std::string>{
                             "RLSCOPE_SOCKET=/tmp/rlscope-1/socket",
                             "RLSCOPE_RULES=/run/rules/default.rules",
                             "PYTHONPATH=/opt/rl/share/rlscope/python",
                             "CUDA_INJECTION64_PATH=/opt/rl/lib/librlscope_preload.so",
                             "LD_PRELOAD=/opt/rl/lib/librlscope_preload.so",
                         });
  // A null envp (Linux: empty) too.
  CHECK(ChildEnvironment::BytesNeeded(nullptr) > 0);
}

TEST_CASE("ChildEnvironment keeps the child's own values and extends its path lists", "[child_environment]") {
  CaptureRun();
  CHECK(Completed({"PATH=/usr/bin", "LD_PRELOAD=/mine.so", "PYTHONPATH=/p", "RLSCOPE_SOCKET=/elsewhere",
                   "RLSCOPE_RULES=/r", "CUDA_INJECTION64_PATH=/theirs.so"}) ==
        std::vector<std::string>{
            "PATH=/usr/bin",
            "LD_PRELOAD=/opt/rl/lib/librlscope_preload.so:/mine.so",
            "PYTHONPATH=/opt/rl/share/rlscope/python:/p",
            "RLSCOPE_SOCKET=/elsewhere",
            "RLSCOPE_RULES=/r",
            "CUDA_INJECTION64_PATH=/theirs.so",
        });
}

TEST_CASE("ChildEnvironment leaves a complete environment alone", "[child_environment]") {
  CaptureRun();
  const char* envp[] = {"RLSCOPE_SOCKET=/tmp/rlscope-1/socket",
                        "RLSCOPE_RULES=/run/rules/default.rules",
                        "PYTHONPATH=/x:/opt/rl/share/rlscope/python",
                        "CUDA_INJECTION64_PATH=/opt/rl/lib/librlscope_preload.so",
                        "LD_PRELOAD=/usr/lib/libjemalloc.so /opt/rl/lib/librlscope_preload.so",
                        nullptr};
  CHECK(ChildEnvironment::BytesNeeded(const_cast<char* const*>(envp)) == 0);
}
