#include "run_directory.h"

#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "absl/strings/str_format.h"

namespace rlscope::collector {

namespace fs = std::filesystem;

namespace {

bool HoldsRun(const fs::path& dir) {
  std::error_code error;
  return fs::exists(dir / "trace", error) || fs::exists(dir / "meta.json", error);
}

// Keeps the name readable in a listing: letters, digits, '-', '_', '.'.
std::string SafeName(const std::string& text) {
  std::string safe;
  for (char c : text) safe += (isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return safe.empty() ? "run" : safe.substr(0, 40);
}

}  // namespace

std::string DefaultRunDirectory(const std::vector<std::string>& command, const std::string& kind) {
  const time_t now = time(nullptr);
  tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &local);
  // "python3 train.py" is better named by the script than the interpreter.
  std::string name = command.empty() ? "run" : fs::path(command[0]).filename().string();
  if (command.size() > 1 && name.rfind("python", 0) == 0 && command[1].size() > 0 && command[1][0] != '-') {
    name = fs::path(command[1]).stem().string();
  }
  if (!kind.empty()) return (fs::path("rlscope-out") / absl::StrFormat("%s-%s-%s", stamp, kind, SafeName(name))).string();
  return (fs::path("rlscope-out") / absl::StrFormat("%s-%s", stamp, SafeName(name))).string();
}

absl::StatusOr<std::string> PrepareRunDirectory(const std::optional<std::string>& requested,
                                                const std::vector<std::string>& command) {
  fs::path dir;
  if (requested) {
    dir = *requested;
    if (dir.empty()) return absl::InvalidArgumentError("--out needs a directory name");
    if (HoldsRun(dir)) {
      return absl::AlreadyExistsError(absl::StrFormat(
          "%s already holds an rlscope run; choose another --out or remove it first", dir.string()));
    }
  } else {
    const fs::path base = DefaultRunDirectory(command);
    dir = base;
    for (int suffix = 2; HoldsRun(dir); ++suffix) dir = base.string() + absl::StrFormat("-%d", suffix);
  }
  std::error_code error;
  fs::create_directories(dir / "trace", error);
  if (error) {
    return absl::PermissionDeniedError(
        absl::StrFormat("cannot create the output directory %s: %s", (dir / "trace").string(), error.message()));
  }
  if (access((dir / "trace").c_str(), W_OK) != 0) {
    return absl::PermissionDeniedError(
        absl::StrFormat("cannot write into %s: %s", (dir / "trace").string(), strerror(errno)));
  }
  return dir.string();
}

absl::StatusOr<Installation> FindInstallation() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (error) return absl::InternalError(absl::StrFormat("cannot locate the rlscope executable: %s", error.message()));
  const fs::path prefix = self.parent_path().parent_path();
  Installation installation;
  installation.preload = (prefix / "lib" / "librlscope_preload.so").string();
  if (const char* override_path = getenv("RLSCOPE_PRELOAD"); override_path != nullptr && *override_path) {
    installation.preload = fs::absolute(override_path).string();
  }
  installation.python_dir = (prefix / "share" / "rlscope" / "python").string();
  installation.default_rules = (prefix / "share" / "rlscope" / "rules" / "default.rules").string();
  for (const std::string& path : {installation.preload, installation.python_dir, installation.default_rules}) {
    if (access(path.c_str(), R_OK) != 0) {
      return absl::NotFoundError(absl::StrFormat(
          "cannot find %s: %s (rlscope expects bin/, lib/ and share/rlscope/ side by side, as the build "
          "and `cmake --install` lay them out; RLSCOPE_PRELOAD overrides the preload)",
          path, strerror(errno)));
    }
  }
  return installation;
}

absl::Status CopyRules(const std::string& run_dir, const std::vector<std::string>& rule_files) {
  const fs::path dir = fs::path(run_dir) / "rules";
  std::error_code error;
  fs::create_directories(dir, error);
  for (size_t i = 0; i < rule_files.size() && !error; ++i) {
    const std::string name = absl::StrFormat("%02d-%s", i, fs::path(rule_files[i]).filename().string());
    fs::copy_file(rule_files[i], dir / name, fs::copy_options::overwrite_existing, error);
  }
  if (error) return absl::InternalError(absl::StrFormat("cannot copy rules into %s: %s", dir.string(), error.message()));
  return absl::OkStatus();
}

absl::StatusOr<std::string> MakeSocketPath() {
  // An abstract name: nothing on disk, so a collector killed with SIGKILL
  // leaves nothing behind. Random, so runs side by side never collide.
  uint64_t random = 0;
  if (getrandom(&random, sizeof(random), 0) != static_cast<ssize_t>(sizeof(random))) {
    return absl::InternalError(absl::StrFormat("cannot name the collector's socket: getrandom: %s", strerror(errno)));
  }
  return absl::StrFormat("@rlscope-%d-%016x", getpid(), random);
}

}  // namespace rlscope::collector
