// InputFile: how every file rlscope is given to read (a trace, meta.json, a
// calibration, a rules file) is opened, so that no input can block the
// reader (a FIFO), exhaust memory (/dev/zero, a huge file) or throw (a
// directory): the open never blocks, only a regular file is read, and a
// whole-file read has a size bound. Shared by the preload (rules files), so
// it uses libc and the standard library only.
#ifndef RLSCOPE_PRELOAD_INPUT_FILE_H_
#define RLSCOPE_PRELOAD_INPUT_FILE_H_

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace rlscope {

// Bounds of the small inputs read whole: far above any real one (a
// calibration or meta.json is a few KiB, the default rules file 10 KiB),
// small enough that reading one never matters for memory.
inline constexpr size_t kMaxRulesFileBytes = size_t{4} << 20;
inline constexpr size_t kMaxJsonFileBytes = size_t{8} << 20;  // meta.json, calibration

enum class Symlinks {
  kFollow,  // A path the user named: a link to a file is fine.
  kRefuse,  // A file of a run directory, which rlscope wrote itself.
};

// OpenInputFile: a read-only, close-on-exec descriptor of the regular file
// `path` and its size, or -1 with *error set to why not ("is a FIFO, not a
// regular file", "No such file or directory", ...; without the path, which
// callers put in front). The descriptor is left non-blocking: harmless for
// a regular file, and the open itself never waits for a FIFO's writer.
int OpenInputFile(const std::string& path, Symlinks symlinks, off_t* size, std::string* error);

// ReadInputFile: the whole of the regular file `path`, at most `max_bytes`
// (a larger or growing file is refused, never read on), into *content; false
// with *error set as for OpenInputFile, or on a failing read.
bool ReadInputFile(const std::string& path, size_t max_bytes, Symlinks symlinks, std::string* content,
                   std::string* error);

}  // namespace rlscope

#endif  // RLSCOPE_PRELOAD_INPUT_FILE_H_
