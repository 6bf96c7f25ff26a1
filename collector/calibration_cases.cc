#include "collector/calibration_cases.h"

#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_format.h"
#include "calibration/overhead_model.h"
#include "collector/run_directory.h"
#include "nlohmann/json.hpp"

namespace rlscope::collector::calibrate {

namespace fs = std::filesystem;
namespace cal = rlscope::calibration;

absl::StatusOr<Layout> FindLayout() {
  absl::StatusOr<std::string> prefix = InstallationPrefix();
  if (!prefix.ok()) return prefix.status();
  const fs::path root = *prefix;
  return Layout{root / "bin", root / "lib", root / "share" / "rlscope"};
}

std::map<std::string, std::string> PythonVersions(const std::vector<std::string>& requested, const fs::path& scratch,
                                                  std::vector<std::string>* problems) {
  std::vector<std::string> candidates = requested;
  if (candidates.empty()) candidates = {"python3", "/usr/bin/python3"};
  std::map<std::string, std::string> versions;
  for (const std::string& python : candidates) {
    // The interpreter itself, not a launcher script in front of it (pyenv's
    // shims run a shell and more under rlscope, which is not Python's cost).
    std::optional<std::string> answer =
        CaptureOutput({python, "-c", "import sys; print('%d.%d' % sys.version_info[:2], sys.executable)"}, {}, scratch);
    const std::string line = answer ? Trimmed(*answer) : "";
    const size_t space = line.find(' ');
    if (space == std::string::npos || space + 1 == line.size()) {
      if (!requested.empty() || python == "python3") problems->push_back(python + " could not be run");
      continue;
    }
    versions.emplace(line.substr(0, space), line.substr(space + 1));
  }
  return versions;
}

CudaSetup FindCuda(const Layout& layout, const fs::path& scratch) {
  CudaSetup setup;
  const std::string binary = (layout.bin / "rlscope-calibrate-cuda").string();
  if (access(binary.c_str(), X_OK) != 0) return setup;  // Built without a CUDA toolkit.
  auto info = [&](const std::vector<std::string>& environment) -> std::optional<nlohmann::json> {
    std::optional<std::string> text = CaptureOutput({binary, "--info"}, environment, scratch);
    if (!text) return std::nullopt;
    nlohmann::json json = nlohmann::json::parse(*text, nullptr, false);
    if (json.is_discarded() || json.value("device_count", 0) < 1) return std::nullopt;
    return json;
  };
  std::optional<nlohmann::json> found = info({});
  if (found && found->value("runtime", "") == "real") {
    setup.runtime = absl::StrFormat("CUDA runtime %d, driver %d", found->value("runtime_version", 0),
                                    found->value("driver_version", 0));
  } else {
    // No GPU here: the hooks still cost what they cost; time them on the
    // fake runtime (and its fake CUPTI), which rlscope ships for this.
    const fs::path fake = layout.lib / "rlscope" / "fake_cuda";
    std::string library_path = fake.string();
    if (const char* existing = getenv("LD_LIBRARY_PATH"); existing != nullptr && *existing != '\0') {
      library_path += std::string(":") + existing;
    }
    setup.environment = {"LD_LIBRARY_PATH=" + library_path};
    setup.cupti_path = (fake / "cupti" / "libcupti.so.13").string();
    found = info(setup.environment);
    if (!found) return setup;
    setup.fake = true;
    setup.runtime = "fake (no GPU)";
  }
  setup.cases = ListCases({binary}, setup.environment, scratch);
  setup.available = !setup.cases.empty();
  return setup;
}

std::vector<Case> BuildCases(const Layout& layout, const CudaSetup& cuda, const std::vector<std::string>& native_cases,
                             const std::map<std::string, std::string>& pythons, const fs::path& scratch) {
  std::vector<Case> cases;
  const std::string native = (layout.bin / "rlscope-calibrate-native").string();
  const std::string sim_pattern = "*librlscope_calibrate_sim*:rlscope_calibrate_*";
  {
    Case c(std::string(cal::kTrampoline), {native, "--case", "trampoline"});
    c.simulator_patterns = {sim_pattern};
    c.ring_events_per_iteration = 1;
    cases.push_back(c);
    // Outer call recorded, inner one nested: minus the recorded one.
    Case nested(std::string(cal::kNestedHook), {native, "--case", "trampoline_nested"});
    nested.simulator_patterns = {sim_pattern};
    nested.subtract = {{std::string(cal::kTrampoline), 1}};
    nested.ring_events_per_iteration = 1;
    cases.push_back(nested);
  }
  if (cuda.available) {
    const std::string binary = (layout.bin / "rlscope-calibrate-cuda").string();
    auto has = [&](const std::string& name) {
      return std::find(cuda.cases.begin(), cuda.cases.end(), name) != cuda.cases.end();
    };
    // The hook alone (CUPTI off): a call the libcudart hook intercepts and
    // that is cheap on an idle stream.
    if (has("cudaStreamSynchronize")) {
      Case hook(std::string(cal::kCudaHook), {binary, "--case", "cudaStreamSynchronize"});
      hook.environment = cuda.environment;
      // On the fake, bare calls whatever the caller asked for: with CUPTI
      // off nothing runs inside the call's busy-wait, so the hook's cost
      // (~20 ns) is the same either way, but as the difference of two
      // loops of 40 us calls it drowns in their jitter (seen: 1.4 +- 4.1 us
      // where bare calls give 16-20 ns; every CUDA call of a corrected run
      // then lost about as much too many).
      if (cuda.fake) hook.environment.push_back("RLSCOPE_FAKE_CUDART_SCALE=0");
      hook.ring_events_per_iteration = 1;
      cases.push_back(hook);
    }
    // CUPTI's callbacks run only for these families (preload/cupti_injection.cc).
    for (const char* api :
         {"cudaLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync", "cudaStreamSynchronize", "cuLaunchKernel"}) {
      if (!has(api)) continue;
      Case c(std::string(cal::kCuptiPrefix) + api, {binary, "--case", api}, Contrast::kCupti);
      c.environment = cuda.environment;
      c.cupti_path = cuda.cupti_path;
      c.matters = !cuda.fake;  // No program here pays the fake CUPTI's costs.
      // The hooked call and CUPTI's view of it (with the runtime's callbacks on
      // too, a nested driver call as well).
      c.ring_events_per_iteration = 3;
      cases.push_back(c);
    }
  }
  if (std::find(native_cases.begin(), native_cases.end(), "nvtx_range") != native_cases.end()) {
    // Push and pop: two boundaries per iteration.
    Case nvtx(std::string(cal::kNvtxRange), {native, "--case", "nvtx_range"});
    nvtx.events_per_iteration = 2;
    nvtx.ring_events_per_iteration = 2;
    cases.push_back(nvtx);
  }
  const std::string script = (layout.share / "calibration" / "calibrate_python.py").string();
  const std::string rules = (layout.share / "calibration" / "calibrate.rules").string();
  for (const auto& [version_binding, python] : pythons) {
    // A copy: clang < 16 cannot capture a structured binding in a lambda.
    const std::string& version = version_binding;
    auto site = [&](std::string_view name) { return cal::PythonSite(name, version); };
    // The cases this interpreter can run (one whose every C function lives
    // inside the interpreter has no transition to price, nor any to make).
    const std::vector<std::string> available = ListCases({python, script}, {}, scratch);
    auto can = [&](std::string_view name) {
      return std::find(available.begin(), available.end(), name) != available.end();
    };
    // Per-call costs include the slowdown of the loop's own few bytecodes
    // (CPython 3.11 runs all bytecode slower while a profile function is
    // set; see calibration/README.md for why that is not modelled apart).
    // python_call_site (3.12+) before python_call, whose calls are also
    // seen at their site: priced apart, it is subtracted there.
    for (std::string_view name :
         {cal::kPythonCallSite, cal::kPythonCall, cal::kPythonBuiltin, cal::kPythonTransition}) {
      if (!can(name)) continue;
      Case c(site(name), {python, script, "--case", std::string(name)});
      c.ring_events_per_iteration = name == cal::kPythonTransition ? 1 : 0;
      if (name == cal::kPythonCall && can(cal::kPythonCallSite)) {
        c.subtract = {{site(cal::kPythonCallSite), 1}};
      }
      cases.push_back(c);
    }
    if (!can("python_operation")) continue;
    // Each iteration is a Python call too, and two boundaries.
    Case operation(site(cal::kPythonOperation), {python, script, "--case", "python_operation"});
    operation.events_per_iteration = 2;
    operation.subtract = {{site(cal::kPythonCall), 1}};
    if (can(cal::kPythonCallSite)) operation.subtract.push_back({site(cal::kPythonCallSite), 1});
    operation.ring_events_per_iteration = 2;
    operation.rule_files = {rules};
    cases.push_back(operation);
  }
  // Start-up last: its cost is the rest the per-event costs leave.
  cases.push_back(Case(std::string(cal::kNativeProcess), {native, "--case", "process"}, Contrast::kProcess));
  for (const auto& [version, python] : pythons) {
    cases.push_back(
        Case(cal::PythonSite(cal::kPythonProcess, version), {python, script, "--case", "process"}, Contrast::kProcess));
  }
  return cases;
}

}  // namespace rlscope::collector::calibrate
