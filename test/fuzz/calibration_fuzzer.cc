// libFuzzer target: arbitrary text as a calibration file (calibration.json),
// through the parser `rlscope report` and `rlscope run` use. It must return
// a model or one error; never throw, crash or trip a sanitizer.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "calibration/overhead_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<rlscope::calibration::OverheadModel> model = rlscope::calibration::ParseOverheadModel(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
  if (model.ok()) {
    model->CuptiCost("cudaLaunchKernel", /*driver=*/true);
    model->PythonVersions();
  }
  return 0;
}
