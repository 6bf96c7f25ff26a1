#include "report/diff_html.h"

#include <catch2/catch.hpp>
#include <string>

#include "test/report/diff_test_runs.h"

using namespace rlscope::report;
using diff_test::Row;

namespace {

// A command line the page must escape.
RunReport Run(std::vector<BreakdownRow> rows) {
  return diff_test::Run(std::move(rows), 1000, {"python3", "train.py", "--tag=<a&b>"});
}

RunDiff Diff(const RunReport& a, const RunReport& b) {
  return DiffRuns({{"torch", "/runs/torch", &a}, {"jax<2>", "/runs/jax", &b}});
}

}  // namespace

TEST_CASE("diff html: absent sides are an em dash, with new and gone", "[diff][html]") {
  const RunReport a = Run({Row("inference", Category::kPython, 400), Row("only_a", Category::kNative, 50)});
  const RunReport b = Run({Row("inference", Category::kPython, 600), Row("only_b", Category::kBackend, 70)});
  const std::string page = FormatDiffHtml(Diff(a, b));
  // A regression is marked, in words and colour.
  CHECK(page.find("<td class=\"num\"><span class=\"worse\">1.50x worse</span></td>") != std::string::npos);
  CHECK(page.find(".worse {") != std::string::npos);
  CHECK(page.find("<td class=\"num\">new</td>") != std::string::npos);
  CHECK(page.find("<td class=\"num\">gone</td>") != std::string::npos);
  CHECK(page.find("<td class=\"num\">\u2014</td>") != std::string::npos);
  // The absent run's bar says so instead of drawing a zero.
  CHECK(page.find("class=\"total\"") != std::string::npos);
  CHECK(page.find(">\u2014</text>") != std::string::npos);
  CHECK(page.find("inference \u00b7 jax&lt;2&gt; \u00b7 Python: 600 ns = 600 ns") != std::string::npos);
}

TEST_CASE("diff html escapes labels and commands and loads nothing", "[diff][html]") {
  const RunReport a = Run({Row("<op>", Category::kPython, 400)});
  const RunReport b = Run({Row("<op>", Category::kPython, 500)});
  const std::string page = FormatDiffHtml(Diff(a, b));
  CHECK(page.find("<op>") == std::string::npos);
  CHECK(page.find("&lt;op&gt;") != std::string::npos);
  CHECK(page.find("--tag=&lt;a&amp;b&gt;") != std::string::npos);
  CHECK(page.find("jax&lt;2&gt;") != std::string::npos);
  CHECK(page.find("http") == std::string::npos);
}

TEST_CASE("diff html: GPU busy chart per run, trace against nvidia-smi", "[diff][html]") {
  RunReport a = Run({Row("step", Category::kCudaApi, 100)});
  RunReport b = Run({Row("step", Category::kCudaApi, 100)});
  a.processes[0].gpu.status = "captured";
  a.gpu_busy_ns = 250;  // Of a wall time of 1000 ns.
  GpuUtilization smi;
  smi.gpus.push_back({1, 6, 62.5, 90, 0});
  a.nvidia_smi = smi;
  const std::string page = FormatDiffHtml(Diff(a, b));
  CHECK(page.find("GPU busy: the trace against nvidia-smi</h2>") != std::string::npos);
  CHECK(page.find("data-series=\"GPU busy (trace)\" data-value=\"0.25\"") != std::string::npos);
  CHECK(page.find("data-series=\"nvidia-smi\" data-value=\"0.625\"") != std::string::npos);
  CHECK(page.find("torch: nvidia-smi utilization.gpu max 90.0% (GPU 1)") != std::string::npos);
  CHECK(page.find("nvidia-smi utilization (mean, busiest GPU)") != std::string::npos);
  // The run without GPU capture or samples: its bars say absent, not 0%.
  CHECK(page.find("jax&lt;2&gt;: nvidia-smi") == std::string::npos);
  // Neither run sampled nor captured: no chart at all.
  const RunReport c = Run({Row("step", Category::kCudaApi, 100)});
  CHECK(FormatDiffHtml(Diff(c, b)).find("GPU busy: the trace against nvidia-smi") == std::string::npos);
}

TEST_CASE("diff html of runs without operations", "[diff][html]") {
  const RunReport a = Run({});
  const RunReport b = Run({});
  const std::string page = FormatDiffHtml(Diff(a, b));
  CHECK(page.find("No run has any operation") != std::string::npos);
  CHECK(page.find("</html>") != std::string::npos);
}
