// Stack levels of shared objects: by installed package and file name under
// the default rules, by distribution where a RECORD file says, and by the
// users' own rules (old path globs included) before the defaults.
#include "report/library_classifier.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "format/rule_file.h"
#include "report/package_records.h"

namespace rlscope::report {
namespace {

namespace fs = std::filesystem;

RuleSet DefaultRules() {
  RuleSet rules;
  std::string error;
  REQUIRE(LoadRuleFile(RLSCOPE_DEFAULT_RULES, rules, &error));
  return rules;
}

RuleSet WithUserRules(const std::string& text) {
  RuleSet rules = DefaultRules();
  std::string error;
  REQUIRE(ParseRules(text, "mine.rules", rules, &error));
  return rules;
}

// A scratch site-packages folder, removed at the end of the test.
class FakeSitePackages {
 public:
  FakeSitePackages()
      : root_(fs::temp_directory_path() /
              ("rlscope-site-" + std::to_string(getpid()) + "-" + std::to_string(counter_++))) {
    fs::create_directories(site());
  }
  ~FakeSitePackages() {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }
  fs::path site() const { return root_ / "env/lib/python3.11/site-packages"; }
  std::string Path(const std::string& relative) const { return (site() / relative).string(); }
  void Write(const std::string& relative, const std::string& content) const {
    fs::create_directories((site() / relative).parent_path());
    std::ofstream(site() / relative, std::ios::binary) << content;
  }

 private:
  static inline int counter_ = 0;
  fs::path root_;
};

TEST_CASE("Default rules level a shared object by its package, whatever the prefix", "[library]") {
  LibraryClassifier classifier(DefaultRules().libraries);
  // A virtualenv under /opt/torch: numpy stays numpy.
  CHECK(classifier.Classify("/opt/torch/.venv/lib/python3.12/site-packages/numpy/core/"
                            "_multiarray_umath.cpython-312-x86_64-linux-gnu.so") == Category::kNative);
  CHECK(classifier.Classify("/opt/torch/.venv/lib/python3.12/site-packages/numpy.libs/"
                            "libopenblas64_p-r0-0cf96a72.3.23.dev.so") == Category::kNative);
  CHECK(classifier.Classify("/home/u/torch/build/libmy_helpers.so") == Category::kNative);
  CHECK(classifier.Classify("/opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so") ==
        Category::kBackend);
  CHECK(classifier.Classify("/home/u/miniconda3/envs/rl/lib/python3.11/site-packages/torch/"
                            "_C.cpython-311-x86_64-linux-gnu.so") == Category::kBackend);
  CHECK(classifier.Classify("/usr/lib/python3/dist-packages/torch/_C.cpython-311-x86_64-linux-gnu.so") ==
        Category::kBackend);
  CHECK(classifier.Classify("/v/site-packages/jaxlib/xla_extension.so") == Category::kBackend);
  CHECK(classifier.Classify("/v/site-packages/jax_plugins/xla_cuda12/xla_cuda_plugin.so") == Category::kBackend);
  CHECK(classifier.Classify("/v/site-packages/mujoco/libmujoco.so.3.1.6") == Category::kSimulator);
  CHECK(classifier.Classify("/usr/lib/python3/dist-packages/ode.cpython-311-x86_64-linux-gnu.so") ==
        Category::kSimulator);
  // Outside packages: by file name.
  CHECK(classifier.Classify("/usr/lib/x86_64-linux-gnu/libmujoco.so.2.2.2") == Category::kSimulator);
  CHECK(classifier.Classify("/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13") == Category::kBackend);
  CHECK(classifier.Classify("/opt/libtorch/lib/libc10.so") == Category::kBackend);
  CHECK(classifier.Classify("/usr/local/cuda/lib64/libcublasLt.so.13") == Category::kBackend);
  // A CUDA library from a wheel, without a RECORD to say whose: its name.
  CHECK(classifier.Classify("/v/site-packages/nvidia/cudnn/lib/libcudnn_graph.so.9") == Category::kBackend);
  CHECK(classifier.Classify("/usr/lib/x86_64-linux-gnu/libm.so.6") == Category::kNative);
}

TEST_CASE("A RECORD file tells whose a file of a shared folder is", "[library]") {
  FakeSitePackages site;
  // Both install under nvidia/: CUPTI's is a CUDA library, DALI a data loader.
  site.Write("nvidia_cuda_cupti_cu12-12.1.105.dist-info/RECORD",
             "nvidia/__init__.py,,\n"
             "nvidia/cuda_cupti/lib/libnvperf_host.so,sha256=abc,123\r\n"
             "nvidia_cuda_cupti_cu12-12.1.105.dist-info/RECORD,,\n");
  site.Write("nvidia_dali_cuda120-1.40.0.dist-info/RECORD", "\"nvidia/dali/libdali.so\",sha256=def,456\n");
  // CUDA 13's wheels share nvidia/cu13/, some without a -cuNN suffix.
  site.Write("nvidia_nvjitlink-13.0.88.dist-info/RECORD", "nvidia/cu13/lib/libnvjitlink_extra.so.13,,\n");
  site.Write("nvidia_nvshmem_cu13-3.4.5.dist-info/RECORD", "nvidia/nvshmem/lib/nvshmem_bootstrap_pmi.so.3,,\n");
  // A wheel's vendored libraries are in "<distribution>.libs/".
  site.Write("box2d_py-2.3.8.dist-info/RECORD",
             "Box2D/__init__.py,,\nBox2D/_Box2D.cpython-311-x86_64-linux-gnu.so,,\nbox2d_py.libs/libgcc_s-1.so,,\n");
  LibraryClassifier classifier(DefaultRules().libraries);
  CHECK(classifier.Classify(site.Path("nvidia/cuda_cupti/lib/libnvperf_host.so")) == Category::kBackend);
  CHECK(classifier.Classify(site.Path("nvidia/dali/libdali.so")) == Category::kNative);
  CHECK(classifier.Classify(site.Path("nvidia/cu13/lib/libnvjitlink_extra.so.13")) == Category::kBackend);
  CHECK(classifier.Classify(site.Path("nvidia/nvshmem/lib/nvshmem_bootstrap_pmi.so.3")) == Category::kBackend);
  CHECK(classifier.Classify(site.Path("box2d_py.libs/libgcc_s-1.so")) == Category::kSimulator);
  // Not in any RECORD: by its folder alone.
  CHECK(classifier.Classify(site.Path("nvidia/other/libnvperf_host.so")) == Category::kNative);
}

TEST_CASE("Damaged or missing RECORD files leave files known by their folder", "[library]") {
  FakeSitePackages site;
  static constexpr char kBroken[] = "\0\xff.so,\n\"nvidia/unterminated.so\nnvidia/after_damage/libok.so,,\n";
  site.Write("broken-1.0.dist-info/RECORD", std::string(kBroken, sizeof(kBroken) - 1));
  fs::create_directories(site.site() / "adirectory-1.0.dist-info/RECORD");  // Not a file.
  fs::create_directories(site.site() / "empty-1.0.dist-info");
  site.Write("odd.dist-info/RECORD", "torch/lib/libodd.so,,\n../../../bin/tool,,\n/abs/path,,\n");
  PackageRecords records;
  CHECK(records.OwnerOf(site.Path("nvidia/unterminated.so")) == nullptr);
  CHECK(records.OwnerOf(site.Path("nvidia/after_damage/libok.so"))->name == "broken");
  CHECK(records.OwnerOf(site.Path("torch/lib/libodd.so"))->name == "odd");
  CHECK(records.OwnerOf("/nowhere/site-packages/torch/lib/libtorch.so") == nullptr);
  CHECK(records.OwnerOf("/usr/lib/libm.so.6") == nullptr);
  LibraryClassifier classifier(DefaultRules().libraries);
  CHECK(classifier.Classify(site.Path("torch/lib/libodd.so")) == Category::kBackend);
  CHECK(classifier.Classify(site.Path("nvidia/unterminated.so")) == Category::kNative);
}

TEST_CASE("RECORD files are read once per folder", "[library]") {
  FakeSitePackages site;
  site.Write("nvidia_nccl_cu12-2.20.5.dist-info/RECORD", "nvidia/nccl/__init__.py,,\nnvidia/nccl/lib/libnccl.so.2,,\n");
  PackageRecords records;
  const Distribution* owner = records.OwnerOf(site.Path("nvidia/nccl/lib/libnccl.so.2"));
  REQUIRE(owner != nullptr);
  CHECK(owner->name == "nvidia-nccl-cu12");
  CHECK(owner->top_level == std::vector<std::string>{"nvidia"});
  // Only shared objects are kept: nothing else is looked up.
  CHECK(records.OwnerOf(site.Path("nvidia/nccl/__init__.py")) == nullptr);
  fs::remove(site.site() / "nvidia_nccl_cu12-2.20.5.dist-info/RECORD");
  CHECK(records.OwnerOf(site.Path("nvidia/nccl/lib/libnccl.so.2")) == owner);
}

TEST_CASE("Distribution names are compared in their normalized form", "[library]") {
  CHECK(NormalizedDistributionName("Box2D_py") == "box2d-py");
  CHECK(NormalizedDistributionName("zope.interface") == "zope-interface");
  CHECK(NormalizedDistributionName("a__-.b") == "a-b");
}

TEST_CASE("Users' rules come first, old path globs included", "[library]") {
  LibraryClassifier classifier(WithUserRules("library Simulator */my_sim/*\n"
                                             "library Native package=torch lib=libgomp*\n"
                                             "library Simulator lib=libphysics*\n")
                                   .libraries);
  CHECK(classifier.Classify("/home/u/my_sim/build/libstep.so") == Category::kSimulator);
  CHECK(classifier.Classify("/v/site-packages/torch/lib/libgomp-a34b3233.so.1") == Category::kNative);
  CHECK(classifier.Classify("/v/site-packages/torch/lib/libtorch_cpu.so") == Category::kBackend);
  CHECK(classifier.Classify("/opt/physics/lib/libphysics.so.4") == Category::kSimulator);
}

TEST_CASE("torch's calls made by torch.distributed are Communication; its others stay Backend", "[library]") {
  LibraryClassifier classifier(DefaultRules().libraries);
  REQUIRE(classifier.HasCallerRules());
  const std::string torch_c = "/usr/lib/python3/dist-packages/torch/_C.cpython-311-x86_64-linux-gnu.so";
  CHECK(classifier.Classify(torch_c, "torch.distributed.distributed_c10d") == Category::kCommunication);
  CHECK(classifier.Classify(torch_c, "torch.distributed.c10d_logger") == Category::kCommunication);
  CHECK(classifier.Classify(torch_c, "torch.nn.modules.linear") == Category::kBackend);
  // The user's own code has no module; native frames no caller.
  CHECK(classifier.Classify(torch_c, "") == Category::kBackend);
  CHECK(classifier.Classify(torch_c) == Category::kBackend);
  // What torch.distributed calls outside torch (a builtin) keeps its level.
  CHECK(classifier.Classify("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", "torch.distributed.distributed_c10d") ==
        Category::kNative);
  // The cache keeps callers apart.
  CHECK(classifier.Classify(torch_c, "torch.distributed.distributed_c10d") == Category::kCommunication);
  CHECK(classifier.Classify(torch_c, "torch.optim.adam") == Category::kBackend);
  // Debian's torch keeps its bindings outside the package folder.
  const std::string debian = "/lib/x86_64-linux-gnu/libtorch_python.so.1.13";
  CHECK(classifier.Classify(debian, "torch.distributed.distributed_c10d") == Category::kCommunication);
  CHECK(classifier.Classify(debian, "torch._tensor") == Category::kBackend);
  // MPI and NCCL by package and file name.
  CHECK(classifier.Classify("/v/site-packages/mpi4py/MPI.cpython-311-x86_64-linux-gnu.so") == Category::kCommunication);
  CHECK(classifier.Classify("/usr/lib/x86_64-linux-gnu/libmpi.so.40") == Category::kCommunication);
  CHECK(classifier.Classify("/usr/lib/x86_64-linux-gnu/libnccl.so.2") == Category::kCommunication);
}

TEST_CASE("A user's caller= rule tells one library's calls by the module calling", "[library]") {
  LibraryClassifier classifier(WithUserRules("library Communication caller=myteam.comm* lib=libhelpers*\n").libraries);
  CHECK(classifier.Classify("/opt/lib/libhelpers.so", "myteam.comm.ring") == Category::kCommunication);
  CHECK(classifier.Classify("/opt/lib/libhelpers.so", "myteam.model") == Category::kNative);
  CHECK(classifier.Classify("/opt/lib/libhelpers.so") == Category::kNative);
}

TEST_CASE("Without caller= rules the caller is not asked for", "[library]") {
  LibraryClassifier classifier({LibraryRule{"Backend", "", "torch", "", ""}});
  CHECK_FALSE(classifier.HasCallerRules());
  CHECK(classifier.Classify("/v/site-packages/torch/lib/libtorch_cpu.so", "torch.distributed") == Category::kBackend);
}

TEST_CASE("Every category a library rule may name is the report's category of that name", "[library]") {
  for (const std::string_view name : rlscope::kLibraryCategories) {
    CAPTURE(name);
    CHECK(CategoryName(LibraryCategoryNamed(name)) == name);
  }
  CHECK(LibraryCategoryNamed("Python") == Category::kPython);  // Named alike, though no rule may say it.
  CHECK(LibraryCategoryNamed("Backendish") == Category::kNative);
}

}  // namespace
}  // namespace rlscope::report
