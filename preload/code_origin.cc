#include "code_origin.h"

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

// FollowsPythonVersion: "python3.11/" or "python3.12t/" at `at` (a
// standard library folder when under lib/ or lib64/).
bool FollowsPythonVersion(std::string_view path, size_t at) {
  size_t i = at + 6;  // After "python".
  if (i >= path.size() || !std::isdigit(static_cast<unsigned char>(path[i]))) return false;
  while (i < path.size() && path[i] != '/') {
    const char c = path[i];
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != 't' && c != 'd') return false;
    ++i;
  }
  return i < path.size();
}

}  // namespace

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
      return origin;
    }
  }
  if (path.starts_with("<frozen ")) {
    origin.kind = CodeOrigin::Kind::kStandardLibrary;
    return origin;
  }
  for (size_t at = path.find("/python"); at != std::string_view::npos; at = path.find("/python", at + 1)) {
    const bool under_lib = (at >= 4 && path.substr(at - 4, 4) == "/lib") || (at >= 6 && path.substr(at - 6, 6) == "/lib64");
    if (under_lib && FollowsPythonVersion(path, at + 1)) {
      origin.kind = CodeOrigin::Kind::kStandardLibrary;
      return origin;
    }
  }
  return origin;
}

}  // namespace rlscope
