#include "report/node_summary.h"

#include <filesystem>
#include <optional>

#include "absl/strings/str_format.h"
#include "format/input_file.h"
#include "format/run_layout.h"
#include "nlohmann/json.hpp"
#include "report/category.h"
#include "report/report_json.h"

namespace rlscope::report {

namespace {

using Json = nlohmann::json;

// Times the merge accepts: 0 to 2^61 ns (73 years of uptime, or a wall
// clock until 2043), so the clock arithmetic cannot overflow whatever two
// nodes hold (job_merge.h); beyond that the file is damaged or forged.
constexpr int64_t kMaxTimeNs = int64_t{1} << 61;

bool PlausibleTime(int64_t ns) { return ns >= 0 && ns < kMaxTimeNs; }

// Field readers: each says which field is wrong, so a damaged or foreign
// file gets a message naming what to look at.
class Fields {
 public:
  explicit Fields(std::string where) : where_(std::move(where)) {}

  const Json* Get(const Json& object, const char* name, Json::value_t type, bool required = true) {
    const auto it = object.find(name);
    if (it == object.end() || it->is_null()) {
      if (required) Fail(absl::StrFormat("\"%s\" is missing", name));
      return nullptr;
    }
    const bool number = type == Json::value_t::number_integer;
    if (number ? !it->is_number_integer() : it->type() != type) {
      Fail(absl::StrFormat("\"%s\" has the wrong type", name));
      return nullptr;
    }
    return &*it;
  }
  int64_t Integer(const Json& object, const char* name, int64_t fallback = 0, bool required = true) {
    const Json* value = Get(object, name, Json::value_t::number_integer, required);
    return value == nullptr ? fallback : value->get<int64_t>();
  }
  std::string String(const Json& object, const char* name) {
    const Json* value = Get(object, name, Json::value_t::string);
    return value == nullptr ? "" : value->get<std::string>();
  }
  void Fail(const std::string& why) {
    if (problem_.empty()) problem_ = why;
  }
  absl::Status status() const {
    if (problem_.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is not a report rlscope merge can read: %s", where_, problem_));
  }
  bool ok() const { return problem_.empty(); }

 private:
  std::string where_;
  std::string problem_;
};

std::optional<Category> CategoryNamed(const std::string& name) {
  for (int i = 0; i < static_cast<int>(Category::kCount); ++i) {
    if (CategoryName(static_cast<Category>(i)) == name) return static_cast<Category>(i);
  }
  return std::nullopt;
}

std::optional<Resource> ResourceNamed(const std::string& name) {
  for (int i = 0; i < static_cast<int>(Resource::kCount); ++i) {
    if (ResourceName(static_cast<Resource>(i)) == name) return static_cast<Resource>(i);
  }
  return std::nullopt;
}

std::vector<std::string> Strings(const Json& array) {
  std::vector<std::string> strings;
  for (const Json& item : array) {
    if (item.is_string()) strings.push_back(item.get<std::string>());
  }
  return strings;
}

void ReadRows(const Json& rows, Fields& fields, std::vector<BreakdownRow>& out) {
  for (const Json& row : rows) {
    if (!row.is_object()) return fields.Fail("a row is not an object");
    const std::optional<Category> category = CategoryNamed(fields.String(row, "category"));
    const std::optional<Resource> resource = ResourceNamed(fields.String(row, "resource"));
    if (!fields.ok()) return;
    if (!category || !resource) return fields.Fail("a row has an unknown category or resource");
    BreakdownRow entry;
    entry.pid = static_cast<int>(fields.Integer(row, "process"));
    entry.operation = fields.String(row, "operation");
    entry.category = *category;
    entry.resource = *resource;
    entry.ns = fields.Integer(row, "ns");
    out.push_back(std::move(entry));
  }
}

void ReadCollectives(const Json& collectives, Fields& fields, ProcessReport& process) {
  const Json* names = fields.Get(collectives, "operations", Json::value_t::array);
  const Json* calls = fields.Get(collectives, "calls", Json::value_t::array);
  if (names == nullptr || calls == nullptr) return;
  process.collective_operations = Strings(*names);
  if (process.collective_operations.size() != names->size())
    return fields.Fail("a collective's operation is no string");
  for (const Json& call : *calls) {
    // A fourth element, true, marks a queued one; summaries before it had three.
    const bool well_formed = call.is_array() && (call.size() == 3 || (call.size() == 4 && call[3].is_boolean())) &&
                             call[0].is_number_integer() && call[1].is_number_integer() &&
                             call[2].is_number_integer() && call[2].get<int64_t>() >= 0 &&
                             call[2].get<uint64_t>() < process.collective_operations.size();
    if (!well_formed) return fields.Fail("a collective is not [begin_ns, end_ns, operation index(, queued)]");
    const int64_t begin = call[0].get<int64_t>(), end = call[1].get<int64_t>();
    if (!PlausibleTime(begin) || !PlausibleTime(end) || end < begin) {
      return fields.Fail("a collective's times are not 0 <= begin_ns <= end_ns < 2^61");
    }
    CollectiveCall read{begin, end, static_cast<int32_t>(call[2].get<int64_t>())};
    read.queued = call.size() == 4 && call[3].get<bool>();
    process.collectives.push_back(read);
  }
}

void ReadTransitions(const Json& transitions, Fields& fields, ProcessReport& process) {
  for (const Json& entry : transitions) {
    if (!entry.is_object()) return fields.Fail("a transition is not an object");
    TransitionRow row;
    row.operation = fields.String(entry, "operation");
    const std::optional<Category> from = CategoryNamed(fields.String(entry, "from"));
    const std::optional<Category> to = CategoryNamed(fields.String(entry, "to"));
    const int64_t count = fields.Integer(entry, "count");
    const int64_t instances = fields.Integer(entry, "operation_instances", 0, /*required=*/false);
    if (!fields.ok()) return;
    if (!from || !to) return fields.Fail("a transition has an unknown category");
    if (count < 0 || instances < 0) return fields.Fail("a transition's count is negative");
    row.from = *from;
    row.to = *to;
    row.count = static_cast<uint64_t>(count);
    row.operation_instances = static_cast<uint64_t>(instances);
    process.transitions.push_back(std::move(row));
  }
}

void ReadProcess(const Json& json, Fields& fields, ProcessReport& process) {
  process.pid = static_cast<int>(fields.Integer(json, "pid"));
  process.ppid = static_cast<int>(fields.Integer(json, "ppid"));
  if (const Json* argv = fields.Get(json, "argv", Json::value_t::array)) process.argv = Strings(*argv);
  process.begin_ns = fields.Integer(json, "begin_ns");
  process.end_ns = fields.Integer(json, "end_ns");
  process.traced_thread_ns = fields.Integer(json, "traced_thread_ns");
  // Written by every report since clock pairs were kept: null when the
  // trace had none, absent in older reports (ParseNodeSummary says so).
  process.begin_unix_ns = fields.Integer(json, "begin_unix_ns", 0, /*required=*/false);
  if (!PlausibleTime(process.begin_ns) || !PlausibleTime(process.end_ns) || !PlausibleTime(process.begin_unix_ns)) {
    return fields.Fail("a process's begin_ns, end_ns or begin_unix_ns is not from 0 to 2^61");
  }
  if (const Json* rank = fields.Get(json, "launcher_rank", Json::value_t::object, /*required=*/false)) {
    process.rank.launcher = fields.String(*rank, "launcher");
    process.rank.rank = static_cast<int>(fields.Integer(*rank, "rank"));
    process.rank.world_size = static_cast<int>(fields.Integer(*rank, "world_size"));
    process.rank.local_rank = static_cast<int>(fields.Integer(*rank, "local_rank", -1, /*required=*/false));
  }
  if (const Json* collectives = fields.Get(json, "collectives", Json::value_t::object, /*required=*/false)) {
    ReadCollectives(*collectives, fields, process);
  }
  if (const Json* transitions = fields.Get(json, "transitions", Json::value_t::array, /*required=*/false)) {
    ReadTransitions(*transitions, fields, process);
  }
  // The times each operation was entered: instance_stats counts every
  // instance the analysis timed, which is every entry (report.json does not
  // list operation_instances on their own).
  if (const Json* stats = fields.Get(json, "instance_stats", Json::value_t::array, /*required=*/false)) {
    for (const Json& entry : *stats) {
      if (!entry.is_object()) return fields.Fail("an instance_stats entry is not an object");
      const std::string operation = fields.String(entry, "operation");
      const int64_t instances = fields.Integer(entry, "instances");
      if (!fields.ok()) return;
      if (instances < 0) return fields.Fail("an operation's instances are negative");
      process.operation_instances[operation] += static_cast<uint64_t>(instances);
    }
  }
}

// ReadRunFigures: the run's own figures a job's comparison needs (wall
// time, exit status, the corrected wall time, capture windows).
void ReadRunFigures(const Json& json, Fields& fields, RunReport& report) {
  report.metadata.exit_code = static_cast<int>(fields.Integer(json, "exit_code", 0, /*required=*/false));
  report.metadata.wall_ns = fields.Integer(json, "wall_ns", 0, /*required=*/false);
  if (json.contains("corrected_wall_ns") && !json["corrected_wall_ns"].is_null()) {
    report.corrected_wall_ns = fields.Integer(json, "corrected_wall_ns");
  }
  if (const Json* capture = fields.Get(json, "capture", Json::value_t::object, /*required=*/false)) {
    if (const Json* windowed = fields.Get(*capture, "windowed", Json::value_t::boolean, /*required=*/false)) {
      report.windowed = windowed->get<bool>();
    }
    if (report.windowed) report.captured_ns = fields.Integer(*capture, "captured_ns");
  }
  const bool plausible = PlausibleTime(report.metadata.wall_ns) && PlausibleTime(report.captured_ns) &&
                         PlausibleTime(report.corrected_wall_ns.value_or(0));
  if (!plausible) fields.Fail("wall_ns, corrected_wall_ns or captured_ns is not from 0 to 2^61");
}

}  // namespace

absl::StatusOr<NodeSummary> ParseNodeSummary(std::string_view text, const std::string& dir) {
  const std::string where = (std::filesystem::path(dir) / run_layout::kReportJson).string();
  const Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s is not valid JSON", where));
  }
  Fields fields(where);
  const std::string schema = fields.String(json, "schema");
  if (fields.ok() && schema != kReportSchema) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s has schema \"%s\"; rlscope merge reads \"%s\"", where, schema, kReportSchema));
  }
  NodeSummary node;
  node.dir = dir;
  if (const Json* command = fields.Get(json, "command", Json::value_t::array)) node.command = Strings(*command);
  if (const Json* corrected = fields.Get(json, "corrected", Json::value_t::boolean)) {
    node.corrected = corrected->get<bool>();
  }
  node.report.metadata.command = node.command;
  node.report.corrected = node.corrected;
  ReadRunFigures(json, fields, node.report);
  if (const Json* rows = fields.Get(json, "rows", Json::value_t::array)) ReadRows(*rows, fields, node.report.rows);
  bool any_clock_pair_field = false;
  if (const Json* processes = fields.Get(json, "processes", Json::value_t::array)) {
    for (const Json& entry : *processes) {
      if (!entry.is_object()) {
        fields.Fail("a process is not an object");
        break;
      }
      any_clock_pair_field = any_clock_pair_field || entry.contains("begin_unix_ns");
      ReadProcess(entry, fields, node.report.processes.emplace_back());
      if (!fields.ok()) break;
    }
  }
  if (!fields.ok()) return fields.status();
  if (!node.report.processes.empty() && !any_clock_pair_field) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s was written by an older rlscope, without the clock pairs and collectives a merge needs: run "
        "'rlscope report %s' again on the node that made it",
        where, dir));
  }
  return node;
}

absl::StatusOr<NodeSummary> ReadNodeSummary(const std::string& dir) {
  const std::filesystem::path path = std::filesystem::path(dir) / run_layout::kReportJson;
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    return absl::NotFoundError(absl::StrFormat("%s is not a directory (a run directory of 'rlscope run --out')", dir));
  }
  if (!std::filesystem::exists(path, error)) {
    return absl::NotFoundError(absl::StrFormat(
        "%s has no report.json: run 'rlscope report %s' on the node that made the run (the merge reads each "
        "node's analysed report, not its traces)",
        dir, dir));
  }
  // Through InputFile, as every input: a FIFO or a device at the name
  // cannot block or exhaust the merge. A link is followed: users gather the
  // nodes' report.json files by copying or linking them.
  std::string text, why;
  if (!ReadInputFile(path.string(), kMaxNodeReportBytes, Symlinks::kFollow, &text, &why)) {
    return absl::InvalidArgumentError(absl::StrFormat("cannot read %s: %s", path.string(), why));
  }
  return ParseNodeSummary(text, dir);
}

}  // namespace rlscope::report
