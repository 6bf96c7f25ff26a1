#include "report/package_records.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

#include "absl/strings/string_view.h"
#include "format/code_origin.h"
#include "format/input_file.h"

namespace rlscope::report {

namespace {

// RecordPath: the first field of one RECORD line (CSV: path,hash,size; a
// path with a comma or quote is quoted, quotes doubled), or "" for a line
// that is damaged or names no file inside the folder.
std::string RecordPath(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string path;
  if (line.starts_with('"')) {
    size_t i = 1;
    for (;; ++i) {
      if (i >= line.size()) return "";  // Unterminated.
      if (line[i] != '"') {
        path += line[i];
      } else if (i + 1 < line.size() && line[i + 1] == '"') {
        path += '"';
        ++i;
      } else {
        break;
      }
    }
    if (i + 1 < line.size() && line[i + 1] != ',') return "";
  } else {
    path = std::string(line.substr(0, line.find(',')));
  }
  // Scripts and data installed elsewhere ("../../../bin/x", "/usr/...").
  if (path.starts_with('/') || path.starts_with("../") || path.find('\0') != std::string::npos) return "";
  return path;
}

// TopLevelName: the import name a RECORD path is under, or "" for the
// distribution's own metadata and caches.
std::string TopLevelName(const std::string& path) {
  const std::string_view first = std::string_view(path).substr(0, path.find('/'));
  if (first.ends_with(".dist-info") || first.ends_with(".data") || first == "__pycache__") return "";
  return OriginOfPath("/site-packages/" + path).package;
}

// IsSharedObject: "libcudnn.so.9", "_C.cpython-311-x86_64-linux-gnu.so".
bool IsSharedObject(std::string_view path) {
  const size_t slash = path.rfind('/');
  return path.substr(slash == std::string_view::npos ? 0 : slash + 1).find(".so") != std::string_view::npos;
}

}  // namespace

std::string NormalizedDistributionName(std::string_view name) {
  std::string normalized;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (normalized.empty() || normalized.back() != '-') normalized += '-';
    } else {
      normalized += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return normalized;
}

const Distribution* PackageRecords::OwnerOf(std::string_view path) {
  const CodeOrigin origin = OriginOfPath(path);
  if (origin.kind != CodeOrigin::Kind::kPackage) return nullptr;
  const Folder& folder = Load(std::string(path.substr(0, origin.package_path_offset)));
  const std::string_view inside = path.substr(origin.package_path_offset);
  auto it = folder.owner.find(absl::string_view(inside.data(), inside.size()));
  return it != folder.owner.end() ? &folder.distributions[it->second] : nullptr;
}

const PackageRecords::Folder& PackageRecords::Load(const std::string& folder) {
  namespace fs = std::filesystem;
  auto [cached, inserted] = folders_.try_emplace(folder);
  if (!inserted) return *cached->second;
  cached->second = std::make_unique<Folder>();
  Folder& loaded = *cached->second;
  // Sorted, so that a file two RECORDs claim has the same owner every run.
  std::vector<std::string> metadata_folders;
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    std::string name = it->path().filename().string();
    if (name.ends_with(".dist-info")) metadata_folders.push_back(std::move(name));
  }
  std::sort(metadata_folders.begin(), metadata_folders.end());
  for (const std::string& metadata : metadata_folders) {
    // Its name is NAME-VERSION.dist-info, NAME with '-' escaped as '_'.
    const std::string_view stem = std::string_view(metadata).substr(0, metadata.size() - 10);
    Distribution distribution{NormalizedDistributionName(stem.substr(0, stem.find('-'))), {}};
    std::string content, why;
    if (distribution.name.empty() ||
        !ReadInputFile(folder + metadata + "/RECORD", kMaxRecordBytes, Symlinks::kFollow, &content, &why)) {
      continue;  // Its files stay known by their folder's name only.
    }
    const size_t index = loaded.distributions.size();
    for (size_t begin = 0; begin < content.size();) {
      size_t end = content.find('\n', begin);
      if (end == std::string::npos) end = content.size();
      std::string path = RecordPath(std::string_view(content).substr(begin, end - begin));
      begin = end + 1;
      if (path.empty()) continue;
      std::string top_level = TopLevelName(path);
      if (!top_level.empty() && std::find(distribution.top_level.begin(), distribution.top_level.end(), top_level) ==
                                    distribution.top_level.end()) {
        distribution.top_level.push_back(std::move(top_level));
      }
      if (IsSharedObject(path)) loaded.owner.try_emplace(std::move(path), index);
    }
    loaded.distributions.push_back(std::move(distribution));
  }
  return loaded;
}

}  // namespace rlscope::report
