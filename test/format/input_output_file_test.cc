// InputFile and OutputFile: every kind of file rlscope may meet at a name
// it reads or writes (format/input_file.h, format/output_file.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "format/input_file.h"
#include "format/output_file.h"

namespace fs = std::filesystem;
using rlscope::ReadInputFile;
using rlscope::ReplaceFile;
using rlscope::Symlinks;

namespace {

// A fresh directory for one test case, removed at its end.
struct ScratchDir {
  ScratchDir() {
    std::string pattern = "/tmp/rlscope_io_test_XXXXXX";
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~ScratchDir() { fs::remove_all(path); }
  std::string Join(const std::string& name) const { return path + "/" + name; }
  std::string path;
};

void Write(const std::string& path, const std::string& content) { std::ofstream(path) << content; }

std::string Read(const std::string& path) {
  std::string content, error;
  REQUIRE(ReadInputFile(path, 1 << 20, Symlinks::kFollow, &content, &error));
  return content;
}

}  // namespace

TEST_CASE("ReadInputFile reads a regular file whole and refuses everything else", "[input_file]") {
  ScratchDir dir;
  Write(dir.Join("file"), "hello\n");
  CHECK(Read(dir.Join("file")) == "hello\n");
  REQUIRE(mkfifo(dir.Join("fifo").c_str(), 0600) == 0);
  REQUIRE(symlink(dir.Join("file").c_str(), dir.Join("link").c_str()) == 0);
  const struct {
    std::string path;
    Symlinks symlinks;
    const char* why;
  } cases[] = {
      {dir.Join("fifo"), Symlinks::kFollow, "is a FIFO"},  // Must not block.
      {"/dev/zero", Symlinks::kFollow, "is a device"},     // Must not read without end.
      {dir.path, Symlinks::kFollow, "is a directory"},
      {dir.Join("link"), Symlinks::kRefuse, "is a symbolic link"},
      {dir.Join("absent"), Symlinks::kFollow, "No such file"},
  };
  for (const auto& c : cases) {
    std::string content = "untouched", error;
    CHECK_FALSE(ReadInputFile(c.path, 1 << 20, c.symlinks, &content, &error));
    CHECK(error.find(c.why) != std::string::npos);
  }
  std::string content, error;
  CHECK(ReadInputFile(dir.Join("link"), 1 << 20, Symlinks::kFollow, &content, &error));
  CHECK(content == "hello\n");
}

TEST_CASE("ReadInputFile refuses a file over its bound", "[input_file]") {
  ScratchDir dir;
  Write(dir.Join("big"), std::string(4097, 'x'));
  std::string content, error;
  CHECK_FALSE(ReadInputFile(dir.Join("big"), 4096, Symlinks::kFollow, &content, &error));
  CHECK(error.find("is larger than") != std::string::npos);
  CHECK(ReadInputFile(dir.Join("big"), 4097, Symlinks::kFollow, &content, &error));
  CHECK(content.size() == 4097);
}

TEST_CASE("ReplaceFile writes a private file and replaces a link instead of following it", "[output_file]") {
  ScratchDir dir;
  Write(dir.Join("victim"), "precious");
  REQUIRE(symlink(dir.Join("victim").c_str(), dir.Join("report.txt").c_str()) == 0);
  const mode_t old_umask = umask(0);
  std::string error;
  const bool replaced = ReplaceFile(dir.Join("report.txt"), "report", &error);
  umask(old_umask);
  REQUIRE(replaced);
  CHECK(Read(dir.Join("victim")) == "precious");
  struct stat info {};
  REQUIRE(lstat(dir.Join("report.txt").c_str(), &info) == 0);
  CHECK(S_ISREG(info.st_mode));
  CHECK((info.st_mode & 07777) == 0600);
  CHECK(Read(dir.Join("report.txt")) == "report");
  // Only the two names: no temporary file is left behind.
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 2);
}

TEST_CASE("ReplaceFile refuses a FIFO or a directory and leaves nothing behind", "[output_file]") {
  ScratchDir dir;
  REQUIRE(mkfifo(dir.Join("fifo").c_str(), 0600) == 0);
  REQUIRE(mkdir(dir.Join("dir").c_str(), 0700) == 0);
  for (const auto& [name, why] : {std::pair{"fifo", "is a FIFO"}, {"dir", "is a directory"}}) {
    std::string error;
    CHECK_FALSE(ReplaceFile(dir.Join(name), "x", &error));
    CHECK(error.find(why) != std::string::npos);
  }
  std::string error;
  CHECK_FALSE(rlscope::CheckReplaceable("/dev/null", &error));
  CHECK(error.find("is a device") != std::string::npos);
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 2);
}
