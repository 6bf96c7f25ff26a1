#include "report/report_html.h"

#include <catch2/catch.hpp>
#include <regex>
#include <string>

#include "report/html_page.h"
#include "report/report_text.h"
#include "report/report_vocabulary.h"

using namespace rlscope::report;

namespace {

BreakdownRow Row(const std::string& operation, Resource resource, Category category, int64_t ns, int pid = 7) {
  BreakdownRow row;
  row.pid = pid;
  row.operation = operation;
  row.resource = resource;
  row.category = category;
  row.ns = ns;
  return row;
}

RunReport Report(std::vector<BreakdownRow> rows) {
  RunReport report;
  report.metadata.command = {"python3", "train.py"};
  report.metadata.wall_ns = 5'000'000;
  report.metadata.rlscope_version = "test";
  report.correction_message = "no calibration for this machine: run `rlscope calibrate`";
  ProcessReport process;
  process.pid = 7;
  process.argv = report.metadata.command;
  process.gpu.status = "unused";
  for (const BreakdownRow& row : rows) {
    if (row.resource != Resource::kGpu) process.traced_thread_ns += row.ns;
  }
  ThreadReport thread;
  thread.tid = 7;
  thread.name = "python3";
  thread.rows = rows;
  process.threads.push_back(thread);
  report.processes.push_back(process);
  report.rows = std::move(rows);
  return report;
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

// The part of the page between two markers (a view's <div> and the next).
std::string Between(const std::string& text, const std::string& begin, const std::string& end) {
  const size_t from = text.find(begin);
  REQUIRE(from != std::string::npos);
  const size_t to = text.find(end, from + begin.size());
  return text.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

}  // namespace

TEST_CASE("Escape: the five HTML-special characters", "[html]") {
  CHECK(html::Escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
  CHECK(html::Truncate("abcdef", 4) == "abc\u2026");
  CHECK(html::Truncate("abc", 4) == "abc");
  CHECK(html::Truncate("\u00e9\u00e9\u00e9\u00e9\u00e9", 3) == "\u00e9\u00e9\u2026");  // Cut between code points.
  CHECK(html::SeriesColor("CUDA API") == html::SeriesColor("CUDA API"));
  CHECK(html::SeriesColor("Python") != html::SeriesColor("Kernel"));
}

TEST_CASE("report.html escapes operation names and the command", "[html]") {
  RunReport report = Report({Row("<script>alert(\"op\")</script>&", Resource::kCpu, Category::kPython, 1000)});
  report.metadata.command = {"python3", "-c", "print('<b>&</b>')"};
  report.processes[0].argv = report.metadata.command;
  report.problems = {"file <x>.rlt damaged"};
  const std::string page = FormatReportHtml(report);
  CHECK(page.find("<script>alert") == std::string::npos);
  CHECK(page.find("<b>&</b>") == std::string::npos);
  CHECK(page.find("&lt;script&gt;alert(&quot;op&quot;)&lt;/script&gt;&amp;") != std::string::npos);
  CHECK(page.find("print(&#39;&lt;b&gt;&amp;&lt;/b&gt;&#39;)") != std::string::npos);
  CHECK(page.find("file &lt;x&gt;.rlt damaged") != std::string::npos);
  // Only the page's own two scripts.
  CHECK(Count(page, "<script>") == 2);
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("http") == std::string::npos);
}

TEST_CASE("report.html of a corrected run has both views and a switch", "[html]") {
  RunReport report = Report({Row("train", Resource::kCpu, Category::kPython, 900)});
  report.corrected = true;
  report.corrected_wall_ns = 4'000'000;
  report.corrected_wall_spread_ns = 20'000;
  report.calibration_file = "/cache/calibration.json";
  report.overhead.by_site["cuda_hook"] = {12, 345.0, 6.0};
  report.uncorrected_rows = {Row("train", Resource::kCpu, Category::kPython, 900),
                             Row("train", Resource::kCpu, Category::kProfiler, 111111)};
  const std::string page = FormatReportHtml(report);
  CHECK(page.find("data-show-view=\"corrected\"") != std::string::npos);
  CHECK(page.find("data-show-view=\"uncorrected\"") != std::string::npos);
  // One pair of views for the run (its only process's would repeat it).
  CHECK(Count(page, "<div data-view=\"corrected\">") == 1);
  CHECK(Count(page, "<div data-view=\"uncorrected\" hidden>") == 1);
  const std::string corrected = Between(page, "<div data-view=\"corrected\">", "<div data-view=\"uncorrected\"");
  const std::string uncorrected = Between(page, "<div data-view=\"uncorrected\" hidden>", "</svg>");
  CHECK(corrected.find("111111 ns") == std::string::npos);
  CHECK(uncorrected.find("train \u00b7 CPU \u00b7 Profiler: 111.1 us = 111111 ns") != std::string::npos);
  CHECK(page.find("/cache/calibration.json") != std::string::npos);
  CHECK(page.find("cuda_hook") != std::string::npos);
  CHECK(page.find("4.00 ms \u00b1 20.0 us") != std::string::npos);
  CHECK(page.find("Not corrected for rlscope") == std::string::npos);
}

TEST_CASE("report.html of an uncorrected run says why, with no switch", "[html]") {
  const std::string page = FormatReportHtml(Report({Row("train", Resource::kCpu, Category::kPython, 900)}));
  CHECK(page.find("data-view=") == std::string::npos);
  CHECK(page.find("data-show-view=") == std::string::npos);
  CHECK(page.find("banner warn\" id=\"not-corrected\"") != std::string::npos);
  CHECK(page.find("no calibration for this machine: run `rlscope calibrate`") != std::string::npos);
}

TEST_CASE("report.html chart titles and values are the rows' numbers", "[html]") {
  const std::vector<BreakdownRow> rows = {
      Row("inference", Resource::kCpu, Category::kPython, 1'234'567),
      Row("inference", Resource::kCpuGpu, Category::kCudaApi, 2'000'001),
      Row("inference", Resource::kGpu, Category::kGpuKernel, 777'777),
      Row("step", Resource::kCpu, Category::kSimulator, 3'000'000),
  };
  RunReport report = Report(rows);
  report.processes[0].gpu.status = "captured";
  report.gpu_busy_ns = 800'000;
  const std::string page = FormatReportHtml(report);
  const std::string chart = Between(page, "<svg class=\"chart\"", "</svg>");
  for (const BreakdownRow& row : rows) {
    const std::string title = std::string(row.operation) + " \u00b7 " + std::string(ResourceName(row.resource)) +
                              " \u00b7 " + std::string(CategoryName(row.category)) + ": " + FormatDuration(row.ns) +
                              " = " + std::to_string(row.ns) + " ns";
    CHECK(chart.find(title) != std::string::npos);
  }
  // Every segment's exact value, summed, is the rows' total.
  const std::regex value("data-value=\"([0-9]+)\"");
  int64_t sum = 0;
  for (auto it = std::sregex_iterator(chart.begin(), chart.end(), value); it != std::sregex_iterator(); ++it) {
    sum += std::stoll((*it)[1]);
  }
  CHECK(sum == 1'234'567 + 2'000'001 + 777'777 + 3'000'000);
  // Same category, same colour, in the chart and its legend.
  const std::string kernel_color = html::SeriesColor("Kernel");
  CHECK(page.find("fill=\"" + kernel_color + "\" data-series=\"Kernel\"") != std::string::npos);
  CHECK(page.find("background:" + kernel_color) != std::string::npos);
  CHECK(page.find("nvidia-smi&#39;s utilization was not sampled") != std::string::npos);
}

TEST_CASE("report.html shows transitions per iteration and Python lines", "[html]") {
  RunReport report = Report({Row("inference", Resource::kCpu, Category::kBackend, 5000)});
  report.processes[0].transitions.push_back({"inference", Category::kPython, Category::kBackend, 30, 10});
  LineRow line;
  line.operation = "inference";
  line.location = "act (/src/agent.py:12)";
  line.line = 15;
  line.ns = 4000;
  line.calls = 9;
  report.processes[0].python_lines.push_back(line);
  GpuUtilization smi;
  smi.gpus.push_back({0, 40, 87.5, 100, 0});
  report.nvidia_smi = smi;
  report.processes[0].gpu.status = "captured";
  report.gpu_busy_ns = 1'000'000;
  const std::string page = FormatReportHtml(report);
  CHECK(page.find(">Python\u2192Backend</th>") != std::string::npos);
  CHECK(page.find("<td class=\"num\">3.0</td>") != std::string::npos);  // 30 crossings / 10 instances.
  CHECK(page.find("agent.py:15  act") != std::string::npos);
  CHECK(page.find("nvidia-smi utilization.gpu mean 87.5% over 40 samples") != std::string::npos);
  CHECK(page.find("GPU busy from the trace: 20.00%") != std::string::npos);
}

TEST_CASE("report.html of an empty run", "[html]") {
  RunReport report;
  report.correction_message = "nothing to correct";
  const std::string page = FormatReportHtml(report);
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("No time was recorded") != std::string::npos);
  CHECK(page.find("No process was traced") != std::string::npos);
  CHECK(page.find("this run has no GPU level") != std::string::npos);
  CHECK(page.find("id=\"gpu\"") == std::string::npos);  // No empty GPU section.
  CHECK(page.find("data-rendered") != std::string::npos);
  CHECK(page.find("</html>") != std::string::npos);
}

TEST_CASE("report.html caps the operations of a big run", "[html]") {
  std::vector<BreakdownRow> rows;
  for (int i = 0; i < 400; ++i) {
    rows.push_back(Row("op" + std::to_string(i), Resource::kCpu, Category::kNative, 1000 + i));
  }
  const std::string page = FormatReportHtml(Report(rows));
  CHECK(page.find("(385 more operations)") != std::string::npos);
  CHECK(page.find(">op399<") != std::string::npos);  // The largest is shown...
  CHECK(page.find(">op0<") == std::string::npos);    // ...the smallest folded.
  CHECK(page.size() < 200'000);
}

TEST_CASE("report.html of a corrected run with two processes switches every breakdown", "[html]") {
  RunReport report = Report({Row("train", Resource::kCpu, Category::kPython, 900),
                             Row("actor", Resource::kCpu, Category::kSimulator, 400, /*pid=*/8)});
  ProcessReport actor = report.processes[0];
  actor.pid = 8;
  actor.forked_from = 7;
  report.processes.push_back(actor);
  report.corrected = true;
  report.uncorrected_rows = report.rows;
  const std::string page = FormatReportHtml(report);
  // The run's figure, then one per process.
  CHECK(Count(page, "<div data-view=\"corrected\">") == 3);
  CHECK(Count(page, "<div data-view=\"uncorrected\" hidden>") == 3);
  CHECK(page.find("Process 8 (fork of 7)") != std::string::npos);
  const std::string actor_section = Between(page, "<h2 id=\"process-8\">", "<h2 id=\"process-7\">");
  CHECK(actor_section.find("train \u00b7") == std::string::npos);  // Only its own rows.
}

TEST_CASE("report.html sums quiet processes in one line, as report.txt does", "[html]") {
  RunReport report = Report({Row("inference", Resource::kCpu, Category::kPython, 4000)});
  for (int pid = 100; pid < 103; ++pid) {  // Three compiler runs: nothing intercepted.
    ProcessReport compiler;
    compiler.pid = pid;
    compiler.argv = {"/usr/local/cuda/bin/ptxas", "-arch", "sm_90a"};
    compiler.traced_thread_ns = 2'000'000;
    report.processes.push_back(compiler);
    // The analysis calls a compiler helper's time compile; an older report, (none).
    report.rows.push_back(Row(pid == 100 ? "(none)" : "compile", Resource::kCpu, Category::kNative, 2'000'000, pid));
  }
  const ProcessSplit split = SplitQuietProcesses(report);
  REQUIRE(split.shown.size() == 1);
  CHECK(split.shown[0]->pid == 7);
  CHECK(split.quiet_count == 3);
  CHECK(split.quiet_thread_ns == 6'000'000);
  CHECK(split.quiet_commands == "ptxas x3");
  const std::string page = FormatReportHtml(report);
  CHECK(page.find("sm_90a") == std::string::npos);  // No row of their own.
  CHECK(page.find("3 more process(es) with nothing intercepted (6.00 ms of thread time): ptxas x3") !=
        std::string::npos);
  CHECK(FormatReportText(report).find(
            "3 more process(es) with nothing intercepted (6.00 ms of thread time): ptxas x3") != std::string::npos);
}

TEST_CASE("Chart axes label round values without trailing zeros", "[html]") {
  const std::string page =
      FormatReportHtml(Report({Row("inference", Resource::kCpu, Category::kPython, 5'000'000'000)}));
  // Ticks only: a bar's total keeps the table's precision ("5.000 s").
  CHECK(std::regex_search(page, std::regex("class=\"tick\"[^>]*>0</text>")));
  CHECK_FALSE(std::regex_search(page, std::regex("class=\"tick\"[^>]*>[^<]*(0 ns|\\.000 s)</text>")));
  CHECK(std::regex_search(page, std::regex("class=\"tick\"[^>]*>[1-5] s</text>")));
}

TEST_CASE("report.html: the command once, GPU capture as it went, instances, correction after processes", "[html]") {
  RunReport report = Report({Row("simulation", Resource::kCpu, Category::kPython, 3'000'000)});
  report.metadata.gpu_capture = "cupti";
  report.processes[0].events = 1'639'248;
  report.processes[0].instance_stats = {{"simulation", 12'000, 3'000'000, 250, 200, 400, 9'000}};
  report.steps = 12'000;
  const std::string page = FormatReportHtml(report);
  const std::string body = page.substr(page.find("<body"));
  // Under the title only, not again in the facts.
  const std::string command = "python3 train.py";
  const size_t first = body.find(command);
  REQUIRE(first != std::string::npos);
  CHECK(body.find("<dt>command</dt>") == std::string::npos);
  CHECK(page.find("cupti (no process used CUDA)") != std::string::npos);
  CHECK(page.find("1,639,248 (0 dropped)") != std::string::npos);
  CHECK(page.find("<h3>Operation instances</h3>") != std::string::npos);
  CHECK(page.find("<td class=\"num\">12,000</td>") != std::string::npos);
  CHECK(page.find("<td class=\"num\">250 ns</td>") != std::string::npos);
  CHECK(page.find("12,000 environment steps") != std::string::npos);
  CHECK(page.find("id=\"correction\"") > page.find("id=\"processes\""));
}

TEST_CASE("report.txt and report.html name the time given back to waits from 1 ms", "[html]") {
  RunReport report = Report({Row("train", Resource::kCpu, Category::kPython, 900)});
  report.corrected = true;
  report.corrected_wall_ns = 4'000'000;
  report.calibration_file = "/cache/calibration.json";
  report.overhead.wait_restored_ns = 999'999;
  CHECK(FormatReportText(report).find("given back to CUDA calls") == std::string::npos);
  CHECK(FormatReportHtml(report).find("given back to CUDA calls") == std::string::npos);
  report.overhead.wait_restored_ns = 2'500'000;
  const std::string text = FormatReportText(report);
  CHECK(text.find("2.50 ms of the removed time was given back to CUDA calls that waited for queued GPU work:\n"
                  "  unprofiled, they would have waited that much longer\n") != std::string::npos);
  CHECK(FormatReportHtml(report).find("<p>2.50 ms of the removed time was given back to CUDA calls that waited for "
                                      "queued GPU work: unprofiled, they would have waited that much longer.</p>") !=
        std::string::npos);
}
