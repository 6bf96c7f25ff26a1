#include "calibration/overhead_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "format/input_file.h"
#include "format/output_file.h"
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

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

MeasuredCost CostFromRepetitions(const std::vector<Repetition>& repetitions, double events,
                                 double subtract_ns_per_event, uint64_t stored_events) {
  MeasuredCost cost;
  cost.repetitions = static_cast<int>(repetitions.size());
  cost.events = stored_events;
  if (repetitions.empty() || events <= 0) return cost;
  double fastest_measured = repetitions[0].measured_ns, fastest_base = repetitions[0].base_ns;
  for (const Repetition& r : repetitions) {
    fastest_measured = std::min(fastest_measured, r.measured_ns);
    fastest_base = std::min(fastest_base, r.base_ns);
  }
  struct Ranked {
    double disturbance;
    double cost;                // Per event.
    double measured_per_event;  // The profiled side's whole loop, per event.
  };
  std::vector<Ranked> by_disturbance;
  for (const Repetition& r : repetitions) {
    // In ns, not relative: contention adds time, whichever side it hits.
    by_disturbance.push_back({(r.measured_ns - fastest_measured) + (r.base_ns - fastest_base),
                              (r.measured_ns - r.base_ns) / events - subtract_ns_per_event, r.measured_ns / events});
  }
  // Stable: among equally disturbed repetitions the earlier ones.
  std::stable_sort(by_disturbance.begin(), by_disturbance.end(),
                   [](const Ranked& a, const Ranked& b) { return a.disturbance < b.disturbance; });
  const size_t n = by_disturbance.size();
  const size_t kept = std::min(n, std::max<size_t>(2, (n + 1) / 2));
  std::vector<double> costs, loops;
  double sum = 0;
  for (size_t i = 0; i < kept; ++i) {
    costs.push_back(by_disturbance[i].cost);
    loops.push_back(by_disturbance[i].measured_per_event);
    sum += costs.back();
  }
  cost.loop_ns = Median(std::move(loops));
  // The standard error of their mean: half the range for two, and smaller
  // as rounds add agreeing repetitions (a range only ever grows).
  const double mean = sum / static_cast<double>(kept);
  double squares = 0;
  for (double c : costs) squares += (c - mean) * (c - mean);
  cost.spread_ns = kept > 1 ? std::sqrt(squares / static_cast<double>(kept - 1) / static_cast<double>(kept)) : 0;
  cost.ns = Median(std::move(costs));
  return cost;
}

bool Uncertain(const MeasuredCost& cost) {
  const double bound = std::max(std::abs(cost.ns), kUncertainFloorNs);
  return cost.spread_ns > bound || cost.ns < -std::max(cost.spread_ns, kUncertainFloorNs);
}

std::string PythonSite(std::string_view site, std::string_view version) {
  return std::string(site) + "@" + std::string(version);
}

std::optional<double> OverheadModel::Cost(std::string_view site) const {
  auto it = costs.find(site);
  if (it == costs.end()) return std::nullopt;
  return std::max(0.0, it->second.ns);
}

std::string OverheadModel::CuptiSite(std::string_view api, bool driver) const {
  std::string lower(api);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  const Family* family = nullptr;
  for (const Family& candidate : kFamilies) {
    if (lower.find(candidate.fragment) != std::string::npos) {
      family = &candidate;
      break;
    }
  }
  // A driver call is priced as its family's calibrated driver call first:
  // a runtime call seen through the driver call inside it (the runtime's
  // callbacks off, preload/cupti_injection.cc) carries that call's name
  // but had only the driver's callbacks.
  if (driver && family != nullptr) {
    const std::string member = std::string(kCuptiPrefix) + std::string(family->driver_member);
    if (Cost(member)) return member;
  }
  const std::string own = std::string(kCuptiPrefix) + std::string(api);
  if (Cost(own)) return own;
  if (family == nullptr) return "";
  const std::string member = std::string(kCuptiPrefix) + std::string(family->runtime_member);
  return Cost(member) ? member : "";
}

std::optional<double> OverheadModel::CuptiCost(std::string_view api, bool driver) const {
  const std::string site = CuptiSite(api, driver);
  return site.empty() ? std::nullopt : Cost(site);
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
  std::string text, error;
  if (!ReadInputFile(path, kMaxJsonFileBytes, Symlinks::kFollow, &text, &error)) {
    return absl::NotFoundError(absl::StrFormat("%s: cannot be read: %s", path, error));
  }
  return ParseOverheadModel(text, path);
}

double MaxCostNs(std::string_view site) {
  const std::string_view base = site.substr(0, site.find('@'));  // As PythonSite names them.
  return base == kNativeProcess || base == kPythonProcess ? kMaxProcessCostNs : kMaxCostNs;
}

namespace {

// CheckedCost: one entry of "costs", or why it is unusable.
absl::StatusOr<MeasuredCost> CheckedCost(const std::string& site, const nlohmann::json& cost) {
  if (!cost.is_object()) return absl::InvalidArgumentError(absl::StrFormat("cost '%s' is not an object", site));
  auto number = [&](const char* key, double fallback, double max) -> absl::StatusOr<double> {
    auto it = cost.find(key);
    if (it == cost.end()) return fallback;
    if (!it->is_number())
      return absl::InvalidArgumentError(absl::StrFormat("cost '%s': %s is not a number", site, key));
    const double value = it->get<double>();
    if (!std::isfinite(value) || value < -max || value > max) {
      return absl::InvalidArgumentError(
          absl::StrFormat("cost '%s': %s = %g is out of range (|value| <= %g)", site, key, value, max));
    }
    return value;
  };
  if (!cost.contains("ns")) return absl::InvalidArgumentError(absl::StrFormat("cost '%s' has no ns", site));
  absl::StatusOr<double> ns = number("ns", 0, MaxCostNs(site));
  absl::StatusOr<double> spread_ns = number("spread_ns", 0, MaxCostNs(site));
  absl::StatusOr<double> repetitions = number("repetitions", 0, 1e6);
  absl::StatusOr<double> events = number("events", 0, 1e15);
  absl::StatusOr<double> loop_ns = number("loop_ns", 0, MaxCostNs(site));
  for (const absl::StatusOr<double>* value : {&ns, &spread_ns, &repetitions, &events, &loop_ns}) {
    if (!value->ok()) return value->status();
  }
  return MeasuredCost{*ns, *spread_ns, static_cast<int>(*repetitions), static_cast<uint64_t>(std::max(0.0, *events)),
                      std::max(0.0, *loop_ns)};
}

// Text: the string at `key` of `object`, "" when absent; a non-string is an error.
absl::StatusOr<std::string> Text(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end()) return std::string();
  if (!it->is_string()) return absl::InvalidArgumentError(absl::StrFormat("'%s' is not a string", key));
  return it->get<std::string>();
}

// Strings: the array of strings at `key` of `object` (empty when absent).
absl::StatusOr<std::vector<std::string>> Strings(const nlohmann::json& object, const char* key) {
  std::vector<std::string> strings;
  auto it = object.find(key);
  if (it == object.end()) return strings;
  if (!it->is_array()) return absl::InvalidArgumentError(absl::StrFormat("quality: '%s' is not an array", key));
  for (const nlohmann::json& item : *it) {
    if (!item.is_string()) return absl::InvalidArgumentError(absl::StrFormat("quality: '%s' holds a non-string", key));
    strings.push_back(item.get<std::string>());
  }
  return strings;
}

// The contention figures' keys; null in the file is -1 here (unknown).
struct FigureKey {
  const char* key;
  double ContentionFigures::*field;
};
constexpr FigureKey kFigureKeys[] = {
    {"load_average_begin", &ContentionFigures::load_average_begin},
    {"load_average_max", &ContentionFigures::load_average_max},
    {"steal_fraction", &ContentionFigures::steal_fraction},
    {"other_busy_cpus", &ContentionFigures::other_busy_cpus},
    {"involuntary_switches_per_cpu_s", &ContentionFigures::involuntary_switches_per_cpu_s},
    {"lowest_kept_fraction", &ContentionFigures::lowest_kept_fraction},
};

// ParseQuality: the "quality" object; every field is optional (files of
// older rlscopes have uncertain_costs only, which is derived, not read).
absl::StatusOr<CalibrationQuality> ParseQuality(const nlohmann::json& json) {
  CalibrationQuality quality;
  if (!json.is_object()) return absl::InvalidArgumentError("'quality' is not an object");
  absl::StatusOr<std::string> verdict = Text(json, "verdict");
  if (!verdict.ok()) return absl::InvalidArgumentError(absl::StrCat("quality: ", verdict.status().message()));
  quality.verdict = *verdict;
  for (auto [key, field] :
       {std::pair{"reasons", &quality.reasons}, {"warnings", &quality.warnings}, {"remeasured", &quality.remeasured}}) {
    absl::StatusOr<std::vector<std::string>> strings = Strings(json, key);
    if (!strings.ok()) return strings.status();
    *field = *std::move(strings);
  }
  auto contention = json.find("contention");
  if (contention == json.end()) return quality;
  if (!contention->is_object()) return absl::InvalidArgumentError("quality: 'contention' is not an object");
  ContentionFigures figures;
  for (const FigureKey& figure : kFigureKeys) {
    auto it = contention->find(figure.key);
    if (it == contention->end() || it->is_null()) continue;
    if (!it->is_number() || !std::isfinite(it->get<double>())) {
      return absl::InvalidArgumentError(absl::StrFormat("quality.contention: %s is not a number", figure.key));
    }
    figures.*figure.field = it->get<double>();
  }
  if (auto cpus = contention->find("cpus"); cpus != contention->end()) {
    if (!cpus->is_number_integer()) return absl::InvalidArgumentError("quality.contention: cpus is not an integer");
    figures.cpus = cpus->get<int>();
  }
  absl::StatusOr<std::string> site = Text(*contention, "lowest_kept_site");
  if (!site.ok()) return absl::InvalidArgumentError(absl::StrCat("quality.contention: ", site.status().message()));
  figures.lowest_kept_site = *site;
  quality.contention = figures;
  return quality;
}

}  // namespace

absl::StatusOr<OverheadModel> ParseOverheadModel(std::string_view text, const std::string& path) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: not a JSON object (damaged calibration file?)", path));
  }
  auto malformed = [&](const absl::Status& status) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: malformed calibration file (%s); run `rlscope calibrate` again", path, status.message()));
  };
  absl::StatusOr<std::string> schema = Text(json, "schema");
  if (!schema.ok() || *schema != kCalibrationSchema) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: calibration schema '%s' is not the '%s' this rlscope reads; run `rlscope calibrate` again",
                        path, schema.ok() ? *schema : json["schema"].dump(), kCalibrationSchema));
  }
  OverheadModel model;
  absl::StatusOr<std::string> version = Text(json, "rlscope_version");
  if (!version.ok()) return malformed(version.status());
  model.rlscope_version = *version;
  if (auto created = json.find("created_unix_s"); created != json.end()) {
    if (!created->is_number_integer()) return malformed(absl::InvalidArgumentError("created_unix_s is not an integer"));
    model.created_unix_s = created->get<int64_t>();
  }
  auto machine = json.find("machine");
  if (machine == json.end() || !machine->is_object()) {
    return malformed(absl::InvalidArgumentError("'machine' is missing or not an object"));
  }
  for (auto [key, field] : {std::pair{"cpu", &model.fingerprint.cpu},
                            {"kernel", &model.fingerprint.kernel},
                            {"gpu", &model.fingerprint.gpu},
                            {"driver", &model.fingerprint.driver},
                            {"cuda_runtime", &model.fingerprint.cuda_runtime}}) {
    absl::StatusOr<std::string> value = Text(*machine, key);
    if (!value.ok()) return malformed(absl::InvalidArgumentError(absl::StrCat("machine: ", value.status().message())));
    *field = *value;
  }
  auto costs = json.find("costs");
  if (costs == json.end() || !costs->is_object()) {
    return malformed(absl::InvalidArgumentError("'costs' is missing or not an object"));
  }
  for (const auto& [site, cost] : costs->items()) {
    absl::StatusOr<MeasuredCost> checked = CheckedCost(site, cost);
    if (!checked.ok()) return malformed(checked.status());
    model.costs[site] = *checked;
  }
  if (auto quality = json.find("quality"); quality != json.end()) {
    absl::StatusOr<CalibrationQuality> parsed = ParseQuality(*quality);
    if (!parsed.ok()) return malformed(parsed.status());
    model.quality = *std::move(parsed);
  }
  return model;
}

nlohmann::ordered_json ContentionJson(const ContentionFigures& figures) {
  nlohmann::ordered_json json = {{"cpus", figures.cpus}};
  for (const FigureKey& figure : kFigureKeys) {
    const double value = figures.*figure.field;
    json[figure.key] = value < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(value);
  }
  json["lowest_kept_site"] = figures.lowest_kept_site;
  return json;
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
  nlohmann::ordered_json uncertain = nlohmann::ordered_json::array();
  for (const auto& [site, cost] : model.costs) {
    costs[site] = {{"ns", cost.ns},
                   {"spread_ns", cost.spread_ns},
                   {"repetitions", cost.repetitions},
                   {"events", cost.events},
                   {"uncertain", Uncertain(cost)}};
    if (cost.loop_ns > 0) costs[site]["loop_ns"] = cost.loop_ns;
    if (Uncertain(cost)) uncertain.push_back(site);
  }
  json["costs"] = std::move(costs);
  // The calibration's quality, as measured: the costs its repetitions did
  // not pin down (Uncertain), and, from `rlscope calibrate`, its verdict,
  // what made it so and the contention seen (calibration_verdict.h).
  nlohmann::ordered_json quality = {{"uncertain_costs", uncertain}};
  if (!model.quality.verdict.empty()) {
    quality["verdict"] = model.quality.verdict;
    quality["reasons"] = model.quality.reasons;
    quality["warnings"] = model.quality.warnings;
    quality["remeasured"] = model.quality.remeasured;
  }
  if (model.quality.contention) quality["contention"] = ContentionJson(*model.quality.contention);
  json["quality"] = std::move(quality);
  // Written aside and renamed: a crash never leaves half a calibration; a
  // device, FIFO or directory at `path` is refused and a link is replaced,
  // never written through (`calibrate` refuses a link before measuring:
  // CheckReplaceable).
  const std::string text = json.dump(2) + "\n";
  if (absl::StatusOr<OverheadModel> again = ParseOverheadModel(text, path); !again.ok()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("not stored, it would not read back: %s; calibrate again "
                        "on a quieter machine",
                        again.status().message()));
  }
  std::string error;
  if (!ReplaceFile(path, text, &error)) return absl::PermissionDeniedError(error);
  return absl::OkStatus();
}

}  // namespace rlscope::calibration
