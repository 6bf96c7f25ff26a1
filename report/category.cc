#include "report/category.h"

namespace rlscope::report {

std::string_view CategoryName(Category category) {
  switch (category) {
    case Category::kPython: return "Python";
    case Category::kBackend: return "Backend";
    case Category::kSimulator: return "Simulator";
    case Category::kNative: return "Native";
    case Category::kCudaApi: return "CUDA API";
    case Category::kProfiler: return "Profiler";
    case Category::kGpuKernel: return "Kernel";
    case Category::kGpuMemcpy: return "Memcpy";
    case Category::kGpuMemset: return "Memset";
    case Category::kWait: return "Wait";
    case Category::kCommunication: return "Communication";
    case Category::kCount: break;
  }
  return "?";
}

std::string_view ResourceName(Resource resource) {
  switch (resource) {
    case Resource::kCpu: return "CPU";
    case Resource::kGpu: return "GPU";
    case Resource::kCpuGpu: return "CPU+GPU";
    case Resource::kCount: break;
  }
  return "?";
}

}  // namespace rlscope::report
