#include "overhead_model.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <set>

#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace rlscope::calibration {

namespace {

// The calibrated member of each family of functions CUPTI's callbacks are
// enabled for (preload/cupti_injection.cc selects them by name). A function
// without its own calibration costs what its family's member does: the
// callbacks do the same work for all of them.
struct Family {
  std::string_view fragment;  // In the lower-cased name.
  std::string_view runtime_member;
  std::string_view driver_member;
};
constexpr Family kFamilies[] = {
    {"graphlaunch", "cudaLaunchKernel", "cuLaunchKernel"},
    {"launch", "cudaLaunchKernel", "cuLaunchKernel"},
    {"memcpy", "cudaMemcpyAsync", "cudaMemcpyAsync"},
    {"memset", "cudaMemsetAsync", "cudaMemsetAsync"},
    {"synchronize", "cudaStreamSynchronize", "cudaStreamSynchronize"},
};

}  // namespace

MeasuredCost CostFromSamples(std::vector<double> per_event_ns, uint64_t events) {
  MeasuredCost cost;
  cost.repetitions = static_cast<int>(per_event_ns.size());
  cost.events = events;
  if (per_event_ns.empty()) return cost;
  std::sort(per_event_ns.begin(), per_event_ns.end());
  const size_t n = per_event_ns.size();
  cost.ns = n % 2 == 1 ? per_event_ns[n / 2] : (per_event_ns[n / 2 - 1] + per_event_ns[n / 2]) / 2;
  cost.spread_ns = (per_event_ns.back() - per_event_ns.front()) / 2;
  return cost;
}

std::string PythonSite(std::string_view site, std::string_view version) { return std::string(site) + "@" + std::string(version); }

std::optional<double> OverheadModel::Cost(std::string_view site) const {
  auto it = costs.find(site);
  if (it == costs.end()) return std::nullopt;
  return std::max(0.0, it->second.ns);
}

std::optional<double> OverheadModel::CuptiCost(std::string_view api, bool driver) const {
  if (std::optional<double> own = Cost(std::string(kCuptiPrefix) + std::string(api))) return own;
  std::string lower(api);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const Family& family : kFamilies) {
    if (lower.find(family.fragment) == std::string::npos) continue;
    if (driver) {
      if (std::optional<double> member = Cost(std::string(kCuptiPrefix) + std::string(family.driver_member))) return member;
    }
    return Cost(std::string(kCuptiPrefix) + std::string(family.runtime_member));
  }
  return std::nullopt;
}

std::vector<std::string> OverheadModel::PythonVersions() const {
  std::set<std::string> versions;
  for (const auto& [site, cost] : costs) {
    const size_t at = site.find('@');
    if (at != std::string::npos) versions.insert(site.substr(at + 1));
  }
  return {versions.begin(), versions.end()};
}

absl::StatusOr<OverheadModel> ReadOverheadModel(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrFormat("%s: cannot be read", path));
  nlohmann::json json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: not a JSON object (damaged calibration file?)", path));
  }
  const std::string schema = json.value("schema", "");
  if (schema != kCalibrationSchema) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: calibration schema '%s' is not the '%s' this rlscope reads; run `rlscope calibrate` again", path,
        schema, kCalibrationSchema));
  }
  try {
    OverheadModel model;
    model.rlscope_version = json.value("rlscope_version", "");
    model.created_unix_s = json.value("created_unix_s", int64_t{0});
    const nlohmann::json& machine = json.at("machine");
    model.fingerprint.cpu = machine.value("cpu", "");
    model.fingerprint.kernel = machine.value("kernel", "");
    model.fingerprint.gpu = machine.value("gpu", "");
    model.fingerprint.driver = machine.value("driver", "");
    model.fingerprint.cuda_runtime = machine.value("cuda_runtime", "");
    for (const auto& [site, cost] : json.at("costs").items()) {
      model.costs[site] = {cost.at("ns").get<double>(), cost.value("spread_ns", 0.0), cost.value("repetitions", 0),
                           cost.value("events", uint64_t{0})};
    }
    return model;
  } catch (const nlohmann::json::exception& error) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: malformed calibration file (%s); run `rlscope calibrate` again", path, error.what()));
  }
}

absl::Status WriteOverheadModel(const std::string& path, const OverheadModel& model) {
  nlohmann::ordered_json json;
  json["schema"] = kCalibrationSchema;
  json["rlscope_version"] = model.rlscope_version;
  json["created_unix_s"] = model.created_unix_s;
  json["machine"] = {{"cpu", model.fingerprint.cpu},
                     {"kernel", model.fingerprint.kernel},
                     {"gpu", model.fingerprint.gpu},
                     {"driver", model.fingerprint.driver},
                     {"cuda_runtime", model.fingerprint.cuda_runtime}};
  nlohmann::ordered_json costs = nlohmann::ordered_json::object();
  for (const auto& [site, cost] : model.costs) {
    costs[site] = {{"ns", cost.ns}, {"spread_ns", cost.spread_ns}, {"repetitions", cost.repetitions},
                   {"events", cost.events}};
  }
  json["costs"] = std::move(costs);
  // Written aside and renamed: a crash never leaves half a calibration.
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    if (!out) return absl::PermissionDeniedError(absl::StrFormat("%s: cannot be written", temporary));
    out << json.dump(2) << "\n";
    if (!out.flush()) return absl::ResourceExhaustedError(absl::StrFormat("%s: write failed (disk full?)", temporary));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    return absl::PermissionDeniedError(absl::StrFormat("%s: cannot be replaced", path));
  }
  return absl::OkStatus();
}

}  // namespace rlscope::calibration
