// PackageRecords: which installed distribution a file in a site-packages
// folder belongs to, from the folder's *.dist-info/RECORD files (the list
// of files pip installed for each distribution). The folder name alone
// cannot tell: every nvidia-* wheel installs under site-packages/nvidia/,
// and a wheel's vendored libraries sit in "<distribution>.libs/". Read by
// the analysis only (the preload never reads them), once per folder, when
// the report is made: a report made on another machine, or after the
// environment changed, sees what is there then (or only folder names).
#ifndef RLSCOPE_REPORT_PACKAGE_RECORDS_H_
#define RLSCOPE_REPORT_PACKAGE_RECORDS_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace rlscope::report {

struct Distribution {
  // As PEP 503 normalizes it: lowercase, each run of '-', '_', '.' one '-'
  // ("nvidia_cudnn_cu12-9.1.0.70.dist-info" is nvidia-cudnn-cu12).
  std::string name;
  // The first path components of its files, reduced as CodeOrigin reduces
  // them ("Box2D", "box2d_py" for box2d_py.libs/): its import names.
  std::vector<std::string> top_level;
};

// A RECORD larger than this is not read (torch's is about 3 MiB).
inline constexpr size_t kMaxRecordBytes = size_t{64} << 20;

class PackageRecords {
 public:
  // OwnerOf: the distribution whose RECORD lists `path`, a shared object
  // (".so" in its file name) in a site-packages or dist-packages folder, or
  // nullptr: not in such a folder, or no readable RECORD there lists it.
  // Only shared objects are kept (torch's RECORD lists some 15,000 files,
  // a dozen of them shared objects): the analysis looks up no other file.
  // An unreadable or damaged RECORD only leaves its files unknown.
  const Distribution* OwnerOf(std::string_view path);

 private:
  struct Folder {
    std::vector<Distribution> distributions;
    absl::flat_hash_map<std::string, size_t> owner;  // Shared object's path inside the folder -> distribution.
  };
  const Folder& Load(const std::string& folder);

  absl::flat_hash_map<std::string, std::unique_ptr<Folder>> folders_;
};

// NormalizedDistributionName: PEP 503's form of a distribution's name.
std::string NormalizedDistributionName(std::string_view name);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_PACKAGE_RECORDS_H_
