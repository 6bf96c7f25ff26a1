#include "format/code_origin.h"

#include <catch2/catch.hpp>

namespace rlscope {
namespace {

using Kind = CodeOrigin::Kind;

TEST_CASE("Installed packages are named by the folder after site-packages, whatever the prefix", "[code_origin]") {
  for (const char* path : {"/opt/torch/.venv/lib/python3.12/site-packages/numpy/core/_multiarray_umath.so",
                           "/home/u/miniconda3/envs/torch/lib/python3.11/site-packages/numpy/__init__.py",
                           "/usr/lib/python3/dist-packages/numpy/linalg/linalg.py",
                           "/x/site-packages/numpy.libs/libopenblas64_p-r0-0cf96a72.3.23.dev.so"}) {
    const CodeOrigin origin = OriginOfPath(path);
    INFO(path);
    CHECK(origin.kind == Kind::kPackage);
    CHECK(origin.package == "numpy");
  }
  CHECK(OriginOfPath("/v/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so").package == "torch");
  CHECK(OriginOfPath("/v/site-packages/_cffi_backend.cpython-311-x86_64-linux-gnu.so").package == "_cffi_backend");
  CHECK(OriginOfPath("/v/site-packages/six.py").package == "six");
  CHECK(OriginOfPath("/v/site-packages/foo-1.0-py3.11.egg/foo/bar.py").package == "foo");
  // A package vendored inside another's folder is its own.
  CHECK(OriginOfPath("/v/site-packages/pip/_vendor/site-packages/rich/x.py").package == "rich");
}

TEST_CASE("The standard library is told by lib/pythonX.Y outside site-packages", "[code_origin]") {
  CHECK(OriginOfPath("/usr/lib/python3.11/threading.py").kind == Kind::kStandardLibrary);
  CHECK(OriginOfPath("/opt/py/lib64/python3.13t/queue.py").kind == Kind::kStandardLibrary);
  CHECK(OriginOfPath("/usr/lib/python3.11/lib-dynload/_ssl.cpython-311-x86_64-linux-gnu.so").kind ==
        Kind::kStandardLibrary);
  CHECK(OriginOfPath("<frozen importlib._bootstrap>").kind == Kind::kStandardLibrary);
  CHECK(OriginOfPath("<__array_function__ internals>").kind == Kind::kStandardLibrary);
  CHECK(OriginOfPath("<ipython-input-3-1f2e>").kind == Kind::kUser);
  // Generated code has no module (and must not trip the module parser).
  CHECK(ModuleOfPath("<__array_function__ internals>").empty());
  CHECK(ModuleOfPath("<string>").empty());
}

TEST_CASE("Everything else is the user's code", "[code_origin]") {
  for (const char* path : {"/home/u/rl/train.py", "train.py", "<string>", "<stdin>", "/srv/python/agent.py",
                           "/home/u/python3.11/notes/agent.py", "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0",
                           "/work/site-packages-backup/x.py"}) {
    INFO(path);
    CHECK(OriginOfPath(path).kind == Kind::kUser);
  }
}

TEST_CASE("rlscope's own Python files are a package, not the user's code", "[code_origin]") {
  const CodeOrigin origin = OriginOfPath("/work/main/build/share/rlscope/python/sitecustomize.py");
  CHECK(origin.kind == CodeOrigin::Kind::kPackage);
  CHECK(origin.package == "rlscope");
  CHECK(OriginOfPath("/usr/local/share/rlscope/python/rlscope/__init__.py").kind == CodeOrigin::Kind::kPackage);
  CHECK(OriginOfPath("/home/me/rlscope/train.py").kind == CodeOrigin::Kind::kUser);
}

TEST_CASE("A package's file tells where its path inside site-packages begins", "[code_origin]") {
  const std::string path = "/opt/torch/.venv/lib/python3.12/site-packages/torch/optim/adam.py";
  const CodeOrigin origin = OriginOfPath(path);
  REQUIRE(origin.kind == Kind::kPackage);
  CHECK(path.substr(0, origin.package_path_offset) == "/opt/torch/.venv/lib/python3.12/site-packages/");
  CHECK(path.substr(origin.package_path_offset) == "torch/optim/adam.py");
}

TEST_CASE("A file's module is its path inside its package, whatever the prefix", "[code_origin]") {
  CHECK(ModuleOfPath("/opt/torch/.venv/lib/python3.12/site-packages/torch/optim/adam.py") == "torch.optim.adam");
  CHECK(ModuleOfPath("/usr/lib/python3/dist-packages/torch/autograd/__init__.py") == "torch.autograd");
  CHECK(ModuleOfPath("/v/site-packages/torch/_tensor.py") == "torch._tensor");
  CHECK(ModuleOfPath("/v/site-packages/torch/_C.cpython-311-x86_64-linux-gnu.so") == "torch._C");
  CHECK(ModuleOfPath("/v/site-packages/torch/lib/libtorch_cpu.so") == "torch.lib.libtorch_cpu");
  CHECK(ModuleOfPath("/v/site-packages/six.py") == "six");
  CHECK(ModuleOfPath("/v/site-packages/foo-1.0-py3.11.egg/foo/bar.py") == "foo.bar");
  CHECK(ModuleOfPath("/usr/lib/python3.11/json/decoder.py") == "json.decoder");
  CHECK(ModuleOfPath("/usr/lib/python3.11/lib-dynload/_ssl.cpython-311-x86_64-linux-gnu.so") == "_ssl");
  CHECK(ModuleOfPath("<frozen importlib._bootstrap>") == "importlib._bootstrap");
}

TEST_CASE("A file no import could name has no module", "[code_origin]") {
  // The user's code: which sys.path folder it came from is unknown.
  for (const char* path :
       {"/home/u/rl/torch/optim/sgd.py", "train.py", "<string>", "<frozen bad name>",
        "/x/site-packages/numpy.libs/libopenblas64_p-r0-0cf96a72.3.23.dev.so", "/x/site-packages/my-tool/cli.py"}) {
    INFO(path);
    CHECK(ModuleOfPath(path).empty());
  }
}

}  // namespace
}  // namespace rlscope
