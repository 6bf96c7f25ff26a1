#include "run_metadata.h"

#include <fstream>

#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace rlscope::report {

namespace {
constexpr const char* kMetadataSchema = "rlscope.meta/1";
}  // namespace

absl::Status WriteRunMetadata(const std::string& path, const RunMetadata& metadata) {
  nlohmann::json json = {
      {"schema", kMetadataSchema},
      {"command", metadata.command},
      {"exit_code", metadata.exit_code},
      {"wall_ns", metadata.wall_ns},
      {"start_unix_ns", metadata.start_unix_ns},
      {"rlscope_version", metadata.rlscope_version},
      {"collector_problems", metadata.collector_problems},
      {"gpu_capture", metadata.gpu_capture},
  };
  std::ofstream out(path);
  // argv may hold any bytes: invalid UTF-8 is replaced, never fatal.
  out << json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  out.close();
  if (!out) return absl::InternalError(absl::StrFormat("cannot write %s", path));
  return absl::OkStatus();
}

absl::StatusOr<RunMetadata> ReadRunMetadata(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrFormat("%s: cannot open", path));
  nlohmann::json json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return absl::DataLossError(absl::StrFormat("%s: not valid JSON", path));
  }
  if (json.value("schema", "") != kMetadataSchema) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: unknown schema '%s' (expected %s)", path, json.value("schema", ""), kMetadataSchema));
  }
  RunMetadata metadata;
  try {
    metadata.command = json.value("command", std::vector<std::string>{});
    metadata.exit_code = json.value("exit_code", 0);
    metadata.wall_ns = json.value("wall_ns", int64_t{0});
    metadata.start_unix_ns = json.value("start_unix_ns", int64_t{0});
    metadata.rlscope_version = json.value("rlscope_version", "");
    metadata.collector_problems = json.value("collector_problems", std::vector<std::string>{});
    metadata.gpu_capture = json.value("gpu_capture", "");
  } catch (const nlohmann::json::exception& error) {
    return absl::DataLossError(absl::StrFormat("%s: malformed field: %s", path, error.what()));
  }
  return metadata;
}

}  // namespace rlscope::report
