#include "code_origin.h"

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
}

TEST_CASE("Everything else is the user's code", "[code_origin]") {
  for (const char* path : {"/home/u/rl/train.py", "train.py", "<string>", "<stdin>", "/srv/python/agent.py",
                           "/home/u/python3.11/notes/agent.py", "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0",
                           "/work/site-packages-backup/x.py"}) {
    INFO(path);
    CHECK(OriginOfPath(path).kind == Kind::kUser);
  }
}

}  // namespace
}  // namespace rlscope
