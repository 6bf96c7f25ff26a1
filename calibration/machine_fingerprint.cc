#include "calibration/machine_fingerprint.h"

#include <sys/utsname.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rlscope::calibration {

namespace {

std::string Trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return "";
  const size_t end = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(begin, end - begin + 1));
}

// FirstValue: the value after "key" and a colon on the first line of
// `path` that starts with `key` ("" if none).
std::string FirstValue(const std::string& path, std::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const std::string view = Trim(line);
    if (view.compare(0, key.size(), key) != 0) continue;
    const size_t colon = view.find(':');
    if (colon == std::string::npos) continue;
    return Trim(std::string_view(view).substr(colon + 1));
  }
  return "";
}

// NvidiaDriverVersion: from "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun ..." .
std::string NvidiaDriverVersion() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return "none";
  const size_t module = line.find("Kernel Module");
  if (module == std::string::npos) return Trim(line);
  const std::string rest = Trim(std::string_view(line).substr(module + 13));
  return rest.substr(0, rest.find(' '));
}

std::string NvidiaGpuModel() {
  std::error_code error;
  std::vector<std::filesystem::path> gpus;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", error)) {
    gpus.push_back(entry.path());
  }
  if (gpus.empty()) return "none";
  std::sort(gpus.begin(), gpus.end());
  const std::string model = FirstValue((gpus.front() / "information").string(), "Model");
  return model.empty() ? "unknown NVIDIA GPU" : absl::StrFormat("%s (x%d)", model, gpus.size());
}

}  // namespace

std::string MachineFingerprint::Key() const { return absl::StrCat(cpu, "|", kernel, "|", gpu, "|", driver); }

std::vector<std::string> MachineFingerprint::Differences(const MachineFingerprint& other) const {
  std::vector<std::string> differences;
  auto compare = [&](std::string_view field, const std::string& a, const std::string& b) {
    if (a != b) differences.push_back(absl::StrFormat("%s '%s' vs '%s'", field, a, b));
  };
  compare("CPU", cpu, other.cpu);
  compare("kernel", kernel, other.kernel);
  compare("GPU", gpu, other.gpu);
  compare("driver", driver, other.driver);
  return differences;
}

MachineFingerprint CurrentMachine() {
  MachineFingerprint fingerprint;
  fingerprint.cpu = FirstValue("/proc/cpuinfo", "model name");
  if (fingerprint.cpu.empty()) fingerprint.cpu = "unknown CPU";
  utsname name{};
  fingerprint.kernel = uname(&name) == 0 ? name.release : "unknown";
  fingerprint.gpu = NvidiaGpuModel();
  fingerprint.driver = fingerprint.gpu == "none" ? "none" : NvidiaDriverVersion();
  return fingerprint;
}

}  // namespace rlscope::calibration
