#include "preload/child_environment.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
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
  // Most needed first (see the capacity tests below).
  CHECK(Completed({}) == std::vector<std::string>{
                             "LD_PRELOAD=/opt/rl/lib/librlscope_preload.so",
                             "PYTHONPATH=/opt/rl/share/rlscope/python",
                             "CUDA_INJECTION64_PATH=/opt/rl/lib/librlscope_preload.so",
                             "RLSCOPE_SOCKET=/tmp/rlscope-1/socket",
                             "RLSCOPE_RULES=/run/rules/default.rules",
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

namespace {

// Scratch memory of `bytes` with guard regions on both sides, which
// Complete must leave as they were.
class GuardedScratch {
 public:
  explicit GuardedScratch(size_t bytes) : bytes_(bytes), memory_((kGuard * 2 + bytes) / sizeof(void*) + 1) {
    memset(memory_.data(), kPattern, memory_.size() * sizeof(void*));
  }
  void* data() { return reinterpret_cast<char*>(memory_.data()) + kGuard; }
  bool GuardsIntact() const {
    const auto* bytes = reinterpret_cast<const unsigned char*>(memory_.data());
    const size_t total = memory_.size() * sizeof(void*);
    for (size_t i = 0; i < total; ++i) {
      if ((i < kGuard || i >= kGuard + bytes_) && bytes[i] != kPattern) return false;
    }
    return true;
  }

 private:
  static constexpr size_t kGuard = 64 * 1024;
  static constexpr unsigned char kPattern = 0xA5;
  size_t bytes_;
  std::vector<void*> memory_;
};

std::vector<std::string> Strings(char* const* envp) {
  std::vector<std::string> out;
  for (char* const* at = envp; *at != nullptr; ++at) out.emplace_back(*at);
  return out;
}

}  // namespace

// The environment may change between BytesNeeded and Complete: execv
// passes the live environ, and in a vfork() child the parent's other
// threads keep running.
TEST_CASE("ChildEnvironment never writes past its scratch when environ grows after sizing", "[child_environment]") {
  CaptureRun();
  std::vector<std::string> grown;
  for (int i = 0; i < 200; ++i) grown.push_back("VAR_" + std::to_string(i) + "=value");
  std::vector<char*> envp = {const_cast<char*>("PATH=/usr/bin"), nullptr};
  const size_t bytes = ChildEnvironment::BytesNeeded(envp.data());
  REQUIRE(bytes > 0);
  envp.pop_back();
  for (std::string& entry : grown) envp.push_back(entry.data());
  envp.push_back(nullptr);
  GuardedScratch scratch(bytes);
  char* const* completed = ChildEnvironment::Complete(envp.data(), scratch.data(), bytes);
  CHECK(scratch.GuardsIntact());
  CHECK(completed == envp.data());  // Too large now: passed on unchanged.
}

TEST_CASE("ChildEnvironment never writes past its scratch when a path list grows after sizing", "[child_environment]") {
  CaptureRun();
  std::string pythonpath = "PYTHONPATH=/p";
  std::vector<char*> envp = {const_cast<char*>("PATH=/usr/bin"), pythonpath.data(), nullptr};
  const size_t bytes = ChildEnvironment::BytesNeeded(envp.data());
  REQUIRE(bytes > 0);
  std::string longer = "PYTHONPATH=/p:" + std::string(32 * 1024, 'x');
  envp[1] = longer.data();  // os.environ["PYTHONPATH"] = ... in another thread.
  GuardedScratch scratch(bytes);
  char* const* completed = ChildEnvironment::Complete(envp.data(), scratch.data(), bytes);
  CHECK(scratch.GuardsIntact());
  CHECK(completed == envp.data());
}

TEST_CASE("ChildEnvironment completes an environment that grew a little after sizing", "[child_environment]") {
  CaptureRun();
  std::vector<char*> envp = {const_cast<char*>("PATH=/usr/bin"), nullptr};
  const size_t bytes = ChildEnvironment::BytesNeeded(envp.data());
  envp.back() = const_cast<char*>("EXTRA=1");
  envp.push_back(nullptr);
  GuardedScratch scratch(bytes);
  char* const* completed = ChildEnvironment::Complete(envp.data(), scratch.data(), bytes);
  CHECK(scratch.GuardsIntact());
  const std::vector<std::string> strings = Strings(completed);
  CHECK(strings.size() == 7);
  CHECK(strings[1] == "EXTRA=1");
  CHECK(strings[2] == "LD_PRELOAD=/opt/rl/lib/librlscope_preload.so");
}

namespace {

// The launcher's environment for `rules` rules files.
std::vector<std::string> ManyRulesEnvironment(int rules) {
  std::vector<std::string> out = {"RLSCOPE_SOCKET=/tmp/rlscope-1/socket",
                                  "RLSCOPE_RULES_COUNT=" + std::to_string(rules)};
  for (int i = 0; i < rules; ++i) {
    out.push_back("RLSCOPE_RULES_" + std::to_string(i) + "=/home/me/experiments/rl-baselines/config/rules/" +
                  std::string(120, 'r') + std::to_string(i) + ".rules");
  }
  out.push_back("PYTHONPATH=/opt/rl/share/rlscope/python");
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& entry : strings) out.push_back(entry.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

TEST_CASE("ChildEnvironment keeps every variable of a run with 100 rules files", "[child_environment]") {
  std::vector<std::string> start = ManyRulesEnvironment(100);
  const std::vector<char*> pointers = Pointers(start);
  CHECK(ChildEnvironment::CaptureAtStart(pointers.data(), "/opt/rl/lib/librlscope_preload.so").empty());
  const std::vector<std::string> completed = Completed({});
  CHECK(completed.size() == start.size() + 1);
  for (const std::string& entry : start) {
    CHECK(std::find(completed.begin(), completed.end(), entry) != completed.end());
  }
  CHECK(std::find(completed.begin(), completed.end(), "LD_PRELOAD=/opt/rl/lib/librlscope_preload.so") !=
        completed.end());
}

TEST_CASE("ChildEnvironment keeps LD_PRELOAD first and names what it could not keep", "[child_environment]") {
  std::vector<std::string> start = ManyRulesEnvironment(100);
  const std::vector<char*> pointers = Pointers(start);
  const std::string dropped =
      ChildEnvironment::CaptureWithin(pointers.data(), "/opt/rl/lib/librlscope_preload.so", 4, 16384);
  CHECK(dropped.find("RLSCOPE_RULES_1,") != std::string::npos);
  CHECK(dropped.find("LD_PRELOAD") == std::string::npos);
  CHECK(dropped.find("PYTHONPATH") == std::string::npos);
  CHECK(Completed({}) == std::vector<std::string>{
                             "LD_PRELOAD=/opt/rl/lib/librlscope_preload.so",
                             "PYTHONPATH=/opt/rl/share/rlscope/python",
                             "RLSCOPE_SOCKET=/tmp/rlscope-1/socket",
                             "RLSCOPE_RULES_COUNT=100",
                         });
}
