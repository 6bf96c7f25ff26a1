// OutputFile: how rlscope writes the files of a run directory and its
// calibrations, so that writing never follows a link or writes through a
// device, FIFO or directory someone put at the name: a new file is created
// exclusively (O_EXCL, mode 0600) beside the target and renamed over it.
// libc and the standard library only, like input_file.h.
#ifndef RLSCOPE_PRELOAD_OUTPUT_FILE_H_
#define RLSCOPE_PRELOAD_OUTPUT_FILE_H_

#include <string>
#include <string_view>

namespace rlscope {

// CheckReplaceable: true when `path` is absent or a regular file (not a
// link, a device, a FIFO or a directory), else false with *error saying
// what it is (without the path, which callers put in front). For paths the
// user names (`calibrate --calibration`), checked before any work.
bool CheckReplaceable(const std::string& path, std::string* error);

// ReplaceFile: `path` replaced, atomically, by a file of mode 0600 holding
// `content`: written to a temporary file created exclusively (O_EXCL,
// unpredictable name) in the same directory, then renamed over `path`,
// both relative to one descriptor of that directory (openat, renameat). A
// link at `path` is replaced, never followed; a directory, FIFO or device
// there is refused. A failure leaves
// `path` as it was and nothing else behind; false with *error set
// ("PATH: ...").
bool ReplaceFile(const std::string& path, std::string_view content, std::string* error);

// UnpredictableLetters: `count` lowercase letters and digits from
// getrandom(), for names another user must not guess (temporary files,
// default run directories); a time- and pid-mixed fallback where getrandom
// fails (never expected: no entropy before boot), which O_EXCL and an
// exclusive mkdir keep safe anyway.
std::string UnpredictableLetters(int count);

}  // namespace rlscope

#endif  // RLSCOPE_PRELOAD_OUTPUT_FILE_H_
