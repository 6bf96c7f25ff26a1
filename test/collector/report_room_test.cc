#include "collector/report_room.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>

namespace {

std::filesystem::path TemporaryDirectory() {
  char pattern[] = "/tmp/rlscope-report-room-XXXXXX";
  return mkdtemp(pattern);
}

}  // namespace

TEST_CASE("The report's room is really held, then given back", "[report_room]") {
  const std::filesystem::path dir = TemporaryDirectory();
  const std::filesystem::path file = dir / rlscope::ReportRoom::kFileName;
  {
    rlscope::ReportRoom room(dir.string(), true);
    REQUIRE(room.bytes() > 0);
    CHECK(room.bytes() <= rlscope::ReportRoom::kMaxBytes);
    struct stat info {};
    REQUIRE(stat(file.c_str(), &info) == 0);
    CHECK(static_cast<uint64_t>(info.st_size) == room.bytes());
    // Allocated, not sparse: the blocks are the filesystem's.
    CHECK(static_cast<uint64_t>(info.st_blocks) * 512 >= room.bytes());
    room.Release();
    CHECK(!std::filesystem::exists(file));
    room.Release();  // Idempotent.
  }
  {
    rlscope::ReportRoom room(dir.string(), true);
    CHECK(std::filesystem::exists(file));
  }
  CHECK(!std::filesystem::exists(file));  // The destructor gives it back too.
  std::filesystem::remove_all(dir);
}

TEST_CASE("A room left behind is removed once", "[report_room]") {
  const std::filesystem::path dir = TemporaryDirectory();
  CHECK(!rlscope::StaleReportRoomRemoved(dir.string()));
  { rlscope::ReportRoom room(dir.string(), true); }
  CHECK(!rlscope::StaleReportRoomRemoved(dir.string()));  // Given back: nothing left.
  // What a killed collector leaves: the file, never released.
  std::FILE* left = std::fopen((dir / rlscope::ReportRoom::kFileName).c_str(), "w");
  REQUIRE(left != nullptr);
  std::fclose(left);
  CHECK(rlscope::StaleReportRoomRemoved(dir.string()));
  CHECK(!std::filesystem::exists(dir / rlscope::ReportRoom::kFileName));
  std::filesystem::remove_all(dir);
}

TEST_CASE("Room is held only when asked for", "[report_room]") {
  const std::filesystem::path dir = TemporaryDirectory();
  {
    rlscope::ReportRoom room(dir.string(), false);
    CHECK(room.bytes() == 0);
    CHECK(!std::filesystem::exists(dir / rlscope::ReportRoom::kFileName));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("A directory where nothing can be held gets no room", "[report_room]") {
  rlscope::ReportRoom room("/nonexistent/rlscope-run", true);
  CHECK(room.bytes() == 0);
}
