// CodeOrigin: whose code a file is, from its path alone: an installed
// package's (the first path component after site-packages/ or
// dist-packages/, so no virtualenv, conda or /opt prefix changes it), the
// Python standard library's, or the user's own. Used by the preload (rules
// that apply to the user's code, once per code object) and by the analysis
// (the stack level of a shared object, the user's line behind a call).
#ifndef RLSCOPE_PRELOAD_CODE_ORIGIN_H_
#define RLSCOPE_PRELOAD_CODE_ORIGIN_H_

#include <string>
#include <string_view>

namespace rlscope {

struct CodeOrigin {
  enum class Kind { kUser, kPackage, kStandardLibrary };
  Kind kind = Kind::kUser;
  // kPackage: the top-level import name ("torch", "numpy", "nvidia"),
  // without an extension-module suffix (".cpython-311-x86_64-linux-gnu.so")
  // or a wheel's ".libs" folder suffix ("numpy.libs" is numpy's).
  std::string package;
  // kPackage: where the path inside the site-packages folder begins
  // ("torch/optim/adam.py"); what comes before is that folder, with its
  // trailing '/'.
  size_t package_path_offset = 0;
};

// OriginOfPath: the origin of a source file (co_filename) or shared object.
// Standard library: under lib/pythonX.Y/ (outside site-packages), or a
// pseudo-file made by the interpreter or a library ("<frozen
// importlib._bootstrap>", "<__array_function__ internals>"); the user's
// own pseudo-files ("<string>", "<stdin>", "<console>", notebook cells
// "<ipython-input-...>") are the user's.
CodeOrigin OriginOfPath(std::string_view path);

// ModuleOfPath: the dotted module a file is, from its path: for a
// package's file its path inside site-packages ("torch/optim/adam.py" is
// torch.optim.adam, "torch/autograd/__init__.py" torch.autograd,
// "torch/lib/libtorch_cpu.so" torch.lib.libtorch_cpu), for the standard
// library its path inside lib/pythonX.Y ("json/decoder.py", a frozen
// "<frozen importlib._bootstrap>"). Empty for the user's code, where the
// path alone cannot tell which folder of sys.path it was imported from,
// and for a path with a folder no import could name ("numpy.libs").
std::string ModuleOfPath(std::string_view path);

}  // namespace rlscope

#endif  // RLSCOPE_PRELOAD_CODE_ORIGIN_H_
