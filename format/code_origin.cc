#include "format/code_origin.h"

#include <algorithm>
#include <cctype>

namespace rlscope {

namespace {

// PackageAfter: the first path component after `marker` (".../site-packages/"),
// reduced to an import name.
std::string PackageAfter(std::string_view path, size_t marker_end) {
  std::string_view rest = path.substr(marker_end);
  rest = rest.substr(0, rest.find('/'));
  // Extension modules and single-file modules: "_cffi_backend.cpython-311-x86_64-linux-gnu.so", "six.py".
  // Wheels' vendored libraries: "numpy.libs", "torch.libs". Eggs: "foo-1.0-py3.11.egg" is foo.
  for (std::string_view suffix : {".libs", ".py", ".so"}) {
    if (rest.size() > suffix.size() && rest.substr(rest.size() - suffix.size()) == suffix) {
      rest.remove_suffix(suffix.size());
    }
  }
  if (size_t dot = rest.find('.'); dot != std::string_view::npos) rest = rest.substr(0, dot);
  if (size_t dash = rest.find('-'); dash != std::string_view::npos) rest = rest.substr(0, dash);
  return std::string(rest);
}

// StandardLibraryOffset: where the path inside lib/pythonX.Y/ (or
// lib64/, with a free-threaded "3.13t" or debug "d" suffix) begins, or npos.
size_t StandardLibraryOffset(std::string_view path) {
  for (size_t at = path.find("/python"); at != std::string_view::npos; at = path.find("/python", at + 1)) {
    const bool under_lib =
        (at >= 4 && path.substr(at - 4, 4) == "/lib") || (at >= 6 && path.substr(at - 6, 6) == "/lib64");
    if (!under_lib) continue;
    size_t i = at + 7;  // After "/python".
    if (i >= path.size() || !std::isdigit(static_cast<unsigned char>(path[i]))) continue;
    while (i < path.size() && path[i] != '/') {
      const char c = path[i];
      if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != 't' && c != 'd') break;
      ++i;
    }
    if (i < path.size() && path[i] == '/') return i + 1;
  }
  return std::string_view::npos;
}

// IsModuleName: a part of a dotted module name ("optim", "_C"); non-ASCII
// bytes are allowed, as Python identifiers allow them.
bool IsModuleName(std::string_view part) {
  if (part.empty()) return false;
  for (char c : part) {
    const auto byte = static_cast<unsigned char>(c);
    if (!std::isalnum(byte) && c != '_' && byte < 0x80) return false;
  }
  return true;
}

// DottedModule: "torch/optim/adam.py" -> "torch.optim.adam"; the file's
// name up to its first '.' ("_C.cpython-311-x86_64-linux-gnu.so" is _C),
// "__init__" naming its folder. Empty where a part is no module name.
std::string DottedModule(std::string_view inside) {
  std::string module;
  size_t begin = 0;
  for (size_t slash = inside.find('/'); slash != std::string_view::npos; slash = inside.find('/', begin)) {
    const std::string_view folder = inside.substr(begin, slash - begin);
    if (!IsModuleName(folder)) return "";
    if (!module.empty()) module += '.';
    module += folder;
    begin = slash + 1;
  }
  std::string_view file = inside.substr(begin);
  file = file.substr(0, file.find('.'));
  if (!IsModuleName(file)) return "";
  if (file != "__init__") {
    if (!module.empty()) module += '.';
    module += file;
  }
  return module;
}

}  // namespace

// Where rlscope's own Python files live (share/rlscope/python/ of the
// build or install tree; collector/run_directory.cc).
constexpr std::string_view kRlscopePythonDir = "/share/rlscope/python/";

CodeOrigin OriginOfPath(std::string_view path) {
  CodeOrigin origin;
  // The last marker wins: a package installed inside another's folder
  // (".../site-packages/foo/site-packages/bar") is bar's.
  size_t best = std::string_view::npos;
  size_t best_end = 0;
  for (std::string_view marker : {"/site-packages/", "/dist-packages/"}) {
    size_t at = path.rfind(marker);
    if (at != std::string_view::npos && (best == std::string_view::npos || at > best)) {
      best = at;
      best_end = at + marker.size();
    }
  }
  if (best != std::string_view::npos) {
    origin.package = PackageAfter(path, best_end);
    if (!origin.package.empty()) {
      origin.kind = CodeOrigin::Kind::kPackage;
      origin.package_path_offset = best_end;
      return origin;
    }
  }
  // rlscope's own Python (its sitecustomize, the rlscope module), in the
  // build or the install tree: a package, never the user's code.
  if (path.find(kRlscopePythonDir) != std::string_view::npos) {
    origin.kind = CodeOrigin::Kind::kPackage;
    origin.package = "rlscope";
    origin.package_path_offset = path.find(kRlscopePythonDir) + kRlscopePythonDir.size();
    return origin;
  }
  // Pseudo-files: the user's typed or exec'd code ("<string>", "<stdin>",
  // a notebook cell) is theirs; anything else in angle brackets is made by
  // the interpreter or a library ("<frozen importlib._bootstrap>", numpy's
  // "<__array_function__ internals>", attrs' generated methods).
  if (path.starts_with("<") && path != "<string>" && path != "<stdin>" && path != "<console>" &&
      !path.starts_with("<ipython-input-")) {
    origin.kind = CodeOrigin::Kind::kStandardLibrary;
    return origin;
  }
  if (StandardLibraryOffset(path) != std::string_view::npos) origin.kind = CodeOrigin::Kind::kStandardLibrary;
  return origin;
}

std::string ModuleOfPath(std::string_view path) {
  if (path.starts_with("<frozen ") && path.ends_with(">")) {
    // Already dotted: "<frozen importlib._bootstrap>".
    const std::string_view name = path.substr(8, path.size() - 9);
    for (size_t begin = 0; begin <= name.size();) {
      const size_t dot = std::min(name.find('.', begin), name.size());
      if (!IsModuleName(name.substr(begin, dot - begin))) return "";
      begin = dot + 1;
    }
    return std::string(name);
  }
  const CodeOrigin origin = OriginOfPath(path);
  std::string_view inside;
  if (origin.kind == CodeOrigin::Kind::kPackage) {
    inside = path.substr(origin.package_path_offset);
    // An egg's folder ("foo-1.0-py3.11.egg/foo/bar.py") is on sys.path itself.
    if (const size_t slash = inside.find('/');
        slash != std::string_view::npos && inside.substr(0, slash).ends_with(".egg")) {
      inside.remove_prefix(slash + 1);
    }
  } else if (origin.kind == CodeOrigin::Kind::kStandardLibrary) {
    // Pseudo-files other than "<frozen ...>" have no module.
    const size_t offset = StandardLibraryOffset(path);
    if (offset == std::string_view::npos) return "";
    inside = path.substr(offset);
    if (inside.starts_with("lib-dynload/")) inside.remove_prefix(12);
  } else {
    return "";
  }
  return DottedModule(inside);
}

}  // namespace rlscope
