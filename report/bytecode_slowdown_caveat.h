// What the correction of CPython 3.11's Python calls cannot know: under any
// profile function 3.11 runs every bytecode slower, a cost per bytecode
// that no callback sees (docs/overhead-correction.md, "What the correction
// cannot see").
#ifndef RLSCOPE_REPORT_BYTECODE_SLOWDOWN_CAVEAT_H_
#define RLSCOPE_REPORT_BYTECODE_SLOWDOWN_CAVEAT_H_

#include <optional>
#include <string>

#include "report/overhead_correction.h"

namespace rlscope::report {

// BytecodeSlowdownCaveat: for a correction that priced Python calls of
// CPython 3.11, what its price cannot know (no indent, no newline);
// nothing otherwise. Under any profile function 3.11 runs every bytecode
// slower (its specialised instructions are off while a profiler is set), a
// cost per bytecode, not per call. No callback sees how many bytecodes ran,
// so the calibration prices a call with a typical small function's body
// (calibrate_python.py); code far from that is off, in either direction.
// Measured (docs/overhead-correction.md): a call-free loop ran 1.8x slower
// and was corrected by almost nothing, a loop of one-line calls was
// over-corrected by 81 % of its time. 3.10 has no such slowdown, and on
// 3.12+ sys.monitoring leaves uninstrumented bytecode as fast as unprofiled.
std::optional<std::string> BytecodeSlowdownCaveat(const ProcessCorrection& correction);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_BYTECODE_SLOWDOWN_CAVEAT_H_
