// What the trace reader's and the trace blocks' tests both need: a
// scratch path, a frame appended to a byte stream, the sample process's
// identity, and bytes written to a file.
#ifndef RLSCOPE_TEST_COLLECTOR_TRACE_TEST_SUPPORT_H_
#define RLSCOPE_TEST_COLLECTOR_TRACE_TEST_SUPPORT_H_

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "preload/batch_encoder.h"

namespace rlscope::trace_test {

inline std::string TempPath(const std::string& prefix, const std::string& name) {
  return "/tmp/" + prefix + "_" + std::to_string(getpid()) + "_" + name;
}

inline void Append(std::vector<uint8_t>& stream, preload::BatchEncoder::Frame frame) {
  stream.insert(stream.end(), frame.begin(), frame.end());
}

// The sample stream's process: python3 train.py, pid 4242, started at 1000 ns.
inline preload::ProcessIdentity SampleIdentity() {
  preload::ProcessIdentity identity;
  identity.pid = 4242;
  identity.ppid = 1;
  identity.start_ns = 1000;
  identity.argv = {"python3", "train.py"};
  identity.executable = "/usr/bin/python3";
  return identity;
}

inline void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace rlscope::trace_test

#endif  // RLSCOPE_TEST_COLLECTOR_TRACE_TEST_SUPPORT_H_
