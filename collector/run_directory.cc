#include "collector/run_directory.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "absl/strings/str_format.h"
#include "format/input_file.h"
#include "format/output_file.h"
#include "format/run_layout.h"

namespace rlscope::collector {

namespace fs = std::filesystem;

namespace {

bool HoldsRun(const fs::path& dir) {
  std::error_code error;
  return fs::exists(dir / run_layout::kTraceDir, error) || fs::exists(dir / run_layout::kMeta, error);
}

// Keeps the name readable in a listing: letters, digits, '-', '_', '.'.
std::string SafeName(const std::string& text) {
  std::string safe;
  for (char c : text) safe += (isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return safe.empty() ? "run" : safe.substr(0, 40);
}

// UsableExistingDirectory: whether an --out that exists already may hold
// this run. Accepted: a directory of this user that holds no run and that
// no other user can write to (nobody else can then plant links in it).
// Refused: a link (even to a directory), anything else, a run's directory,
// another user's or a group- or world-writable directory.
absl::Status UsableExistingDirectory(const fs::path& dir) {
  struct stat info {};
  if (lstat(dir.c_str(), &info) != 0) {
    return absl::PermissionDeniedError(absl::StrFormat("cannot use %s: %s", dir.string(), strerror(errno)));
  }
  if (S_ISLNK(info.st_mode)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s is a symbolic link: rlscope does not write through links; give the directory itself or another --out",
        dir.string()));
  }
  if (!S_ISDIR(info.st_mode)) {
    return absl::AlreadyExistsError(
        absl::StrFormat("%s exists and is not a directory; choose another --out", dir.string()));
  }
  if (HoldsRun(dir)) {
    return absl::AlreadyExistsError(
        absl::StrFormat("%s already holds an rlscope run; choose another --out or remove it first", dir.string()));
  }
  if (info.st_uid != geteuid() || (info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s exists and %s: another user could plant links in it; choose a new --out (rlscope creates it)", dir.string(),
        info.st_uid != geteuid() ? "belongs to another user" : "is writable by other users"));
  }
  return absl::OkStatus();
}

// SafeAncestors: whether every existing directory above `dir` is one
// whose entries no other user can rename or replace: owned by root or this
// user, and writable by everyone only with the sticky bit (/tmp).
// Otherwise another user could move DIR away mid-run and put a link in its
// place, and files written by name would land elsewhere. Group-writable
// directories are trusted, like the group.
absl::Status SafeAncestors(const fs::path& dir) {
  std::error_code error;
  // Links on the way are the user's own naming: their targets are checked.
  const fs::path parent = fs::weakly_canonical(fs::absolute(dir, error).parent_path(), error);
  if (error) return absl::OkStatus();  // Creating DIR reports the problem.
  fs::path walked = "/";
  for (const fs::path& part : parent.relative_path()) {
    walked /= part;
    struct stat info {};
    if (lstat(walked.c_str(), &info) != 0) break;  // Not there yet: created by us.
    const bool foreign_owner = info.st_uid != 0 && info.st_uid != geteuid();
    if (foreign_owner || ((info.st_mode & S_IWOTH) != 0 && (info.st_mode & S_ISVTX) == 0)) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "not writing into %s: %s %s, so another user could swap it for a link to elsewhere; choose an output "
          "directory whose parents are yours (or root's)",
          dir.string(), walked.string(),
          foreign_owner ? "belongs to another user" : "is writable by everyone (without the sticky bit)"));
    }
  }
  return absl::OkStatus();
}

absl::Status CreateParents(const fs::path& dir) {
  if (absl::Status safe = SafeAncestors(dir); !safe.ok()) return safe;
  std::error_code error;
  if (!dir.parent_path().empty()) fs::create_directories(dir.parent_path(), error);
  if (error) {
    return absl::PermissionDeniedError(
        absl::StrFormat("cannot create the output directory %s: %s", dir.parent_path().string(), error.message()));
  }
  return absl::OkStatus();
}

absl::Status CannotCreate(const fs::path& dir) {
  return absl::PermissionDeniedError(
      absl::StrFormat("cannot create the output directory %s: %s", dir.string(), strerror(errno)));
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
  const std::string kind_part = kind.empty() ? "" : kind + "-";
  // Six unpredictable letters: nobody sharing the working directory can
  // prepare the name (plant a link at it).
  return (fs::path("rlscope-out") /
          absl::StrFormat("%s-%s%s-%s", stamp, kind_part, SafeName(name), UnpredictableLetters(6)))
      .string();
}

absl::StatusOr<std::string> CreateOutputDirectory(const std::optional<std::string>& requested,
                                                  const std::vector<std::string>& command, const std::string& kind) {
  fs::path dir;
  if (requested) {
    dir = *requested;
    if (dir.empty()) return absl::InvalidArgumentError("--out needs a directory name");
    if (absl::Status parents = CreateParents(dir); !parents.ok()) return parents;
    if (mkdir(dir.c_str(), 0700) != 0) {
      if (errno != EEXIST) return CannotCreate(dir);
      if (absl::Status usable = UsableExistingDirectory(dir); !usable.ok()) return usable;
    }
  } else {
    for (int attempt = 0;; ++attempt) {
      dir = DefaultRunDirectory(command, kind);
      if (absl::Status parents = CreateParents(dir); !parents.ok()) return parents;
      if (mkdir(dir.c_str(), 0700) == 0) break;
      if (errno != EEXIST || attempt == 100) return CannotCreate(dir);
    }
  }
  return dir.string();
}

absl::StatusOr<std::string> PrepareRunDirectory(const std::optional<std::string>& requested,
                                                const std::vector<std::string>& command) {
  absl::StatusOr<std::string> created = CreateOutputDirectory(requested, command, "");
  if (!created.ok()) return created.status();
  const fs::path dir = *created;
  // Creating trace/ claims DIR: mkdir is atomic, so of two runs given the
  // same --out at once exactly one proceeds.
  const fs::path trace = dir / run_layout::kTraceDir;
  if (mkdir(trace.c_str(), 0700) != 0) {
    if (errno == EEXIST) {
      return absl::AlreadyExistsError(absl::StrFormat(
          "%s already holds an rlscope run (or another one is starting in it); choose another --out or remove it "
          "first",
          dir.string()));
    }
    return CannotCreate(trace);
  }
  return dir.string();
}

absl::StatusOr<std::string> InstallationPrefix() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (error) return absl::InternalError(absl::StrFormat("cannot locate the rlscope executable: %s", error.message()));
  return self.parent_path().parent_path().string();
}

absl::StatusOr<Installation> FindInstallation() {
  absl::StatusOr<std::string> found = InstallationPrefix();
  if (!found.ok()) return found.status();
  const fs::path prefix = *found;
  Installation installation;
  installation.preload = (prefix / "lib" / "librlscope_preload.so").string();
  if (const char* override_path = getenv("RLSCOPE_PRELOAD"); override_path != nullptr && *override_path) {
    installation.preload = fs::absolute(override_path).string();
  }
  installation.python_dir = (prefix / "share" / "rlscope" / "python").string();
  installation.module_dir = (prefix / "share" / "rlscope" / "module").string();
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
  const fs::path dir = fs::path(run_dir) / run_layout::kRulesDir;
  if (mkdir(dir.c_str(), 0700) != 0) {
    struct stat info {};
    if (errno != EEXIST || lstat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
      return absl::InternalError(
          absl::StrFormat("cannot create %s: %s", dir.string(),
                          errno == EEXIST ? "it exists and is not a directory" : strerror(errno)));
    }
  }
  for (size_t i = 0; i < rule_files.size(); ++i) {
    const std::string name = absl::StrFormat("%02d-%s", i, fs::path(rule_files[i]).filename().string());
    std::string content, error;
    if (!ReadInputFile(rule_files[i], kMaxRulesFileBytes, Symlinks::kFollow, &content, &error)) {
      return absl::InternalError(absl::StrFormat("cannot copy %s into %s: %s", rule_files[i], dir.string(), error));
    }
    if (!ReplaceFile((dir / name).string(), content, &error)) {
      return absl::InternalError(absl::StrFormat("cannot copy rules into %s: %s", dir.string(), error));
    }
  }
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
