// How the report shows the user's lines (source_lines.h).
#include "report/source_lines.h"

#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

namespace rlscope::report {
namespace {

TEST_CASE("Lines are shown relative to the working directory, with their text", "[source_lines]") {
  char folder[] = "/tmp/rlscope-source-lines-XXXXXX";
  REQUIRE(mkdtemp(folder) != nullptr);
  const std::string dir = folder;
  {
    std::ofstream script(dir + "/train.py");
    script << "import torch\n\n    loss.backward()   \n" << std::string(300, 'x') << "\n";
  }
  SourceLines sources(dir);
  CHECK(sources.DisplayPath(dir + "/train.py") == "train.py");
  CHECK(sources.DisplayPath("/elsewhere/train.py") == "/elsewhere/train.py");
  CHECK(sources.DisplayPath("train.py") == "train.py");
  // Relative names are the working directory's; text is trimmed and cut.
  CHECK(sources.Text("train.py", 3) == "loss.backward()");
  CHECK(sources.Text(dir + "/train.py", 1) == "import torch");
  CHECK(sources.Text("train.py", 4).size() == SourceLines::kMaxTextChars);
  // Unknown: past the end, line 0, a missing file, a pseudo-file.
  CHECK(sources.Text("train.py", 5).empty());
  CHECK(sources.Text("train.py", 0).empty());
  CHECK(sources.Text("gone.py", 1).empty());
  CHECK(sources.Text("<string>", 1).empty());
  CHECK(SplitCodeLocation("Agent.act (/home/u/a:b.py:12)").file == "/home/u/a:b.py");
  CHECK(SplitCodeLocation("Agent.act (/home/u/a:b.py:12)").function == "Agent.act");
  CHECK(SplitCodeLocation("garbage").function == "garbage");
  unlink((dir + "/train.py").c_str());
  rmdir(folder);
}

}  // namespace
}  // namespace rlscope::report
