// ReportRoom: disk space held for what a run writes after its trace
// (meta.json, the rules, the reports) where the trace may fill its
// filesystem (--keep-free 0; otherwise the space kept free is that room).
// The run then still can be read, and reported on again by a later
// `rlscope report`.
//
// A file in the run directory, allocated at the start of the run with
// posix_fallocate (really reserved, not sparse) and removed just before
// those writes: the smaller of kMaxBytes and a quarter of the space free
// then. Best effort: where it cannot be allocated, nothing is held. A
// collector killed before removing it leaves it behind: `rlscope report`
// removes a stale one (StaleReportRoomRemoved).
#ifndef RLSCOPE_COLLECTOR_REPORT_ROOM_H_
#define RLSCOPE_COLLECTOR_REPORT_ROOM_H_

#include <cstdint>
#include <string>

#include "format/run_layout.h"

namespace rlscope {

class ReportRoom {
 public:
  static constexpr uint64_t kMaxBytes = 8u << 20;
  static constexpr const char* kFileName = run_layout::kReportRoom;

  // `hold` false: holds nothing (bytes() 0).
  ReportRoom(const std::string& run_dir, bool hold);
  ~ReportRoom() { Release(); }
  ReportRoom(const ReportRoom&) = delete;
  ReportRoom& operator=(const ReportRoom&) = delete;

  // Release: gives the space back (idempotent).
  void Release();
  uint64_t bytes() const { return bytes_; }

 private:
  std::string path_;
  uint64_t bytes_ = 0;
};

// StaleReportRoomRemoved: removes the room a killed collector left in
// `run_dir`; whether there was one.
bool StaleReportRoomRemoved(const std::string& run_dir);

}  // namespace rlscope

#endif  // RLSCOPE_COLLECTOR_REPORT_ROOM_H_
