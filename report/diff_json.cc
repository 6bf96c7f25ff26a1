#include "report/diff_json.h"

#include <cmath>

#include "nlohmann/json.hpp"

namespace rlscope::report {

namespace {

using Json = nlohmann::ordered_json;

Json Number(std::optional<double> value, bool integral) {
  if (!value.has_value()) return nullptr;
  if (integral) return static_cast<int64_t>(std::llround(*value));
  return *value;
}

// {"values": [...], "shares": [...] (when applicable), "changes": [null,
// {"status", "ratio", "delta", "verdict"}, ...]}: one entry per run, baseline first.
Json ValuesJson(const DiffValues& values) {
  Json json = Json::object();
  Json list = Json::array();
  for (const auto& value : values.values) list.push_back(Number(value, values.integral));
  json["values"] = std::move(list);
  if (!values.shares.empty()) {
    Json shares = Json::array();
    for (const auto& share : values.shares) shares.push_back(Number(share, false));
    json["shares"] = std::move(shares);
  }
  Json changes = Json::array();
  for (size_t i = 0; i < values.changes.size(); ++i) {
    if (i == 0) {
      changes.push_back(nullptr);
      continue;
    }
    const Change& change = values.changes[i];
    Json entry = Json::object();
    entry["status"] = std::string(ChangeStatusName(change.status));
    entry["ratio"] = Number(change.ratio, false);
    entry["verdict"] = std::string(VerdictName(change.verdict));
    entry["delta"] = Number(change.delta, values.integral);
    changes.push_back(std::move(entry));
  }
  json["changes"] = std::move(changes);
  return json;
}

}  // namespace

std::string FormatDiffJson(const RunDiff& diff) {
  Json json = Json::object();
  json["schema"] = kDiffSchema;
  json["baseline"] = 0;
  Json runs = Json::array();
  for (const DiffRunSummary& run : diff.runs) {
    Json entry = Json::object();
    entry["label"] = run.label;
    entry["dir"] = run.dir;
    entry["command"] = run.command;
    entry["exit_code"] = run.exit_code;
    entry["corrected"] = run.corrected;
    entry["data_damaged"] = run.data_damaged;
    entry["wall_ns"] = run.wall_ns;
    entry["corrected_wall_ns"] = run.corrected_wall_ns.has_value() ? Json(*run.corrected_wall_ns) : Json(nullptr);
    entry["total_wall_ns"] = run.total_wall_ns;
    entry["thread_ns"] = run.thread_ns;
    entry["gpu_ns"] = run.gpu_ns;
    entry["gpu_busy_ns"] = run.gpu_busy_ns.has_value() ? Json(*run.gpu_busy_ns) : Json(nullptr);
    entry["gpu_busy_fraction"] = Number(run.gpu_busy_fraction, false);
    entry["nvidia_smi_gpu"] = run.nvidia_smi_gpu.has_value() ? Json(*run.nvidia_smi_gpu) : Json(nullptr);
    entry["nvidia_smi_mean_fraction"] = Number(run.nvidia_smi_mean, false);
    entry["nvidia_smi_max_fraction"] = Number(run.nvidia_smi_max, false);
    runs.push_back(std::move(entry));
  }
  json["runs"] = std::move(runs);
  json["mixed_correction"] = diff.mixed_correction;
  json["warnings"] = diff.warnings;
  Json totals = Json::object();
  totals["total_wall_ns"] = ValuesJson(diff.total_wall);
  totals["thread_ns"] = ValuesJson(diff.thread_time);
  totals["gpu_ns"] = ValuesJson(diff.gpu_time);
  totals["gpu_busy_ns"] = ValuesJson(diff.gpu_busy);
  totals["gpu_busy_fraction"] = ValuesJson(diff.gpu_busy_fraction);
  totals["nvidia_smi_mean_fraction"] = ValuesJson(diff.nvidia_smi_mean);
  // Added in place, never renamed: readers of rlscope.diff/1 keep working.
  totals["step_operation"] = diff.step_operation;
  totals["steps"] = ValuesJson(diff.steps);
  totals["wall_ns_per_step"] = ValuesJson(diff.wall_per_step);
  json["totals"] = std::move(totals);
  json["per_step"] = diff.per_step;
  json["per_step_why"] = diff.per_step_why;
  Json operations = Json::array();
  for (const DiffOperation& op : diff.operations) {
    Json entry = Json::object();
    entry["operation"] = op.name;
    entry["cpu_ns"] = ValuesJson(op.cpu_time);
    entry["gpu_ns"] = ValuesJson(op.gpu_time);
    Json categories = Json::array();
    for (const DiffCategory& category : op.categories) {
      Json cell = Json::object();
      cell["category"] = std::string(CategoryName(category.category));
      cell["resource"] = category.gpu ? "GPU" : "CPU";
      cell.update(ValuesJson(category.time));
      categories.push_back(std::move(cell));
    }
    entry["categories"] = std::move(categories);
    entry["instances"] = ValuesJson(op.instances);
    Json transitions = Json::array();
    for (const DiffTransition& transition : op.transitions) {
      Json cell = Json::object();
      cell["from"] = std::string(CategoryName(transition.from));
      cell["to"] = std::string(CategoryName(transition.to));
      cell.update(ValuesJson(transition.per_instance));
      transitions.push_back(std::move(cell));
    }
    entry["transitions"] = std::move(transitions);
    operations.push_back(std::move(entry));
  }
  json["operations"] = std::move(operations);
  return json.dump(2) + "\n";
}

}  // namespace rlscope::report
