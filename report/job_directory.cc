#include "report/job_directory.h"

#include <filesystem>
#include <vector>

#include "absl/strings/str_format.h"
#include "format/input_file.h"
#include "format/run_layout.h"
#include "nlohmann/json.hpp"
#include "report/node_summary.h"

namespace rlscope::report {

namespace {

namespace fs = std::filesystem;

// job.json lists nodes and jobs (ranks), never collectives: a few MB for
// thousands of ranks. Far above that it is not one rlscope wrote.
constexpr size_t kMaxJobJsonBytes = size_t{1} << 30;

}  // namespace

bool IsJobDirectory(const std::string& dir) {
  std::error_code error;
  return fs::exists(fs::path(dir) / run_layout::kJobJson, error) &&
         !fs::is_directory(fs::path(dir) / run_layout::kTraceDir, error);
}

std::string NodeCopyDir(const std::string& job_dir, size_t n) {
  return (fs::path(job_dir) / run_layout::kJobNodesDir / std::to_string(n + 1)).string();
}

absl::StatusOr<MergedJob> LoadJobDirectory(const std::string& job_dir) {
  const std::string path = (fs::path(job_dir) / run_layout::kJobJson).string();
  std::string text, why;
  if (!ReadInputFile(path, kMaxJobJsonBytes, Symlinks::kRefuse, &text, &why)) {
    return absl::NotFoundError(absl::StrFormat("cannot read %s: %s", path, why));
  }
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto not_a_job = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not a job rlscope can read (%s): merge the nodes' run directories again ('rlscope merge DIR DIR... "
        "--out %s')",
        path, what, job_dir));
  };
  if (json.is_discarded() || !json.is_object()) return not_a_job("not valid JSON");
  if (!json.contains("schema") || json["schema"] != kJobSchema)
    return not_a_job(absl::StrFormat("no schema \"%s\"", kJobSchema));
  if (!json.contains("nodes") || !json["nodes"].is_array()) return not_a_job("no \"nodes\" list");
  const nlohmann::json& listed = json["nodes"];
  if (listed.size() < 2) return not_a_job("fewer than two nodes");
  for (const nlohmann::json& node : listed) {
    if (!node.is_object() || !node.contains("dir") || !node["dir"].is_string()) {
      return not_a_job("a node without its \"dir\"");
    }
  }
  std::vector<NodeSummary> nodes;
  for (size_t n = 0; n < listed.size(); ++n) {
    const std::string node_dir = listed[n]["dir"].get<std::string>();
    const std::string copy = NodeCopyDir(job_dir, n);
    std::error_code error;
    const bool copied = fs::exists(fs::path(copy) / run_layout::kReportJson, error);
    absl::StatusOr<NodeSummary> node = ReadNodeSummary(copied ? copy : node_dir);
    if (!node.ok()) {
      if (copied) return node.status();
      return absl::NotFoundError(absl::StrFormat(
          "node %d of %s has no copy of its report in %s, and its own directory could not be read (%s): merge the "
          "nodes' run directories again ('rlscope merge DIR DIR... --out %s')",
          n + 1, job_dir, copy, node.status().message(), job_dir));
    }
    node->dir = node_dir;  // Labels and messages name the node, not the copy.
    nodes.push_back(*std::move(node));
  }
  return MergeNodes(std::move(nodes));
}

}  // namespace rlscope::report
