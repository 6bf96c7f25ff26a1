#include "report/run_metadata.h"

#include <limits>
#include <utility>

#include "absl/strings/str_format.h"
#include "format/input_file.h"
#include "format/output_file.h"
#include "nlohmann/json.hpp"

namespace rlscope::report {

namespace {
constexpr const char* kMetadataSchema = "rlscope.meta/1";

// Integer: the integer at `key` (0 when absent), or why it is unusable; a
// float or an out-of-range number is refused, never converted (undefined
// behaviour for a double beyond the integer's range).
absl::StatusOr<int64_t> Integer(const nlohmann::json& json, const char* key, int64_t min, int64_t max) {
  auto it = json.find(key);
  if (it == json.end()) return 0;
  if (!it->is_number_integer()) return absl::InvalidArgumentError(absl::StrFormat("%s is not an integer", key));
  if (it->is_number_unsigned() ? it->get<uint64_t>() > static_cast<uint64_t>(max)
                               : it->get<int64_t>() < min || it->get<int64_t>() > max) {
    return absl::InvalidArgumentError(absl::StrFormat("%s = %s is out of range [%d, %d]", key, it->dump(), min, max));
  }
  return it->get<int64_t>();
}
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
      {"working_directory", metadata.working_directory},
      {"capture_request", metadata.capture_request},
      {"capture_delay_ns", metadata.capture_delay_ns},
      {"trace_decoded_during_run_bytes", metadata.trace_decoded_during_run_bytes},
  };
  // argv may hold any bytes: invalid UTF-8 is replaced, never fatal.
  std::string error;
  if (!ReplaceFile(path, json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", &error)) {
    return absl::InternalError(absl::StrFormat("cannot write %s", error));
  }
  return absl::OkStatus();
}

absl::StatusOr<RunMetadata> ReadRunMetadata(const std::string& path) {
  // A link is refused: rlscope wrote this file itself, as a regular file.
  std::string text, error;
  if (!ReadInputFile(path, kMaxJsonFileBytes, Symlinks::kRefuse, &text, &error)) {
    return absl::NotFoundError(absl::StrFormat("%s: cannot be read: %s", path, error));
  }
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return absl::DataLossError(absl::StrFormat("%s: not valid JSON", path));
  }
  // value() throws on a field of another type; every read is inside the try.
  RunMetadata metadata;
  try {
    const auto schema = json.find("schema");
    if (schema == json.end() || !schema->is_string() || *schema != kMetadataSchema) {
      return absl::FailedPreconditionError(absl::StrFormat("%s: unknown schema %s (expected \"%s\")", path,
                                                           schema == json.end() ? "(none)" : schema->dump(),
                                                           kMetadataSchema));
    }
    metadata.command = json.value("command", std::vector<std::string>{});
    absl::StatusOr<int64_t> exit_code = Integer(json, "exit_code", -1'000'000, 1'000'000);
    if (!exit_code.ok()) return absl::DataLossError(absl::StrFormat("%s: %s", path, exit_code.status().message()));
    metadata.exit_code = static_cast<int>(*exit_code);
    for (auto [key, field] : {std::pair{"wall_ns", &metadata.wall_ns},
                              {"start_unix_ns", &metadata.start_unix_ns},
                              {"capture_delay_ns", &metadata.capture_delay_ns},
                              {"trace_decoded_during_run_bytes", &metadata.trace_decoded_during_run_bytes}}) {
      absl::StatusOr<int64_t> value = Integer(json, key, 0, std::numeric_limits<int64_t>::max());
      if (!value.ok()) return absl::DataLossError(absl::StrFormat("%s: %s", path, value.status().message()));
      *field = *value;
    }
    metadata.rlscope_version = json.value("rlscope_version", "");
    metadata.collector_problems = json.value("collector_problems", std::vector<std::string>{});
    metadata.gpu_capture = json.value("gpu_capture", "");
    metadata.working_directory = json.value("working_directory", "");
    metadata.capture_request = json.value("capture_request", "");
  } catch (const nlohmann::json::exception& error) {
    return absl::DataLossError(absl::StrFormat("%s: malformed field: %s", path, error.what()));
  }
  return metadata;
}

}  // namespace rlscope::report
