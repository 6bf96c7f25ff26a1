#include "report/report_html.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "calibration/calibration_verdict.h"
#include "report/headline.h"
#include "report/html_page.h"
#include "report/report_html_breakdown.h"
#include "report/report_html_process.h"
#include "report/report_vocabulary.h"

namespace rlscope::report {

namespace {

using html::CappedNote;
using html::Cell;
using html::Escape;
using html::Note;
using html::Number;
using html::Raw;
using html::Text;

// Caps that keep a big run's page small; report.json has everything.
constexpr size_t kMaxDetailedProcesses = 8;
constexpr size_t kMaxSites = 20;

std::string ViewSwitch() {
  return absl::StrFormat(
      "<div class=\"switch\" role=\"group\" aria-label=\"view\">"
      "<button type=\"button\" data-show-view=\"%s\" aria-pressed=\"true\">corrected (estimated without "
      "rlscope)</button><button type=\"button\" data-show-view=\"%s\" aria-pressed=\"false\">uncorrected (as "
      "measured)</button></div>",
      kCorrectedView, kUncorrectedView);
}

std::string UtcTime(int64_t unix_ns) {
  if (unix_ns <= 0) return "unknown";
  const std::time_t seconds = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &utc);
  return text;
}

// GpuCaptureFact: how the GPU was captured, as the processes' GPU level
// says it went: "cupti" alone would claim a capture on a machine where no
// process used CUDA.
std::string GpuCaptureFact(const RunReport& report) {
  const std::string& asked = report.metadata.gpu_capture;
  if (asked.empty()) return "not recorded";
  std::set<std::string> statuses;
  for (const ProcessReport& process : report.processes) {
    if (!process.gpu.status.empty()) statuses.insert(process.gpu.status);
  }
  if (statuses.empty() || statuses == std::set<std::string>{"unused"}) {
    return absl::StrCat(asked, " (no process used CUDA)");
  }
  statuses.erase("unused");
  return absl::StrCat(asked, " (GPU level: ", absl::StrJoin(statuses, ", "), ")");
}

// UsedGpu: some process used CUDA or nvidia-smi was sampled, so the GPU
// section has something to say.
bool UsedGpu(const RunReport& report) {
  if (report.nvidia_smi.has_value() && !report.nvidia_smi->gpus.empty()) return true;
  for (const ProcessReport& process : report.processes) {
    if (!process.gpu.status.empty() && process.gpu.status != "unused") return true;
  }
  return report.gpu_busy_ns > 0;
}

std::string MetadataSection(const RunReport& report) {
  const RunMetadata& meta = report.metadata;
  uint64_t events = 0, dropped = 0;
  size_t threads = 0;
  for (const ProcessReport& process : report.processes) {
    events += process.events;
    dropped += process.dropped_events;
    threads += process.threads.size();
  }
  // The command is under the page's title, not repeated here.
  std::vector<std::pair<std::string, std::string>> facts = {
      {"exit status", meta.recorded ? absl::StrCat(meta.exit_code) : "unknown (meta.json unreadable)"},
      {"started", Escape(UtcTime(meta.start_unix_ns))},
      {"wall time (profiled)", Escape(FormatDuration(meta.wall_ns))},
  };
  if (report.corrected_wall_ns.has_value()) {
    facts.push_back({"wall time without rlscope (estimate)",
                     Escape(absl::StrFormat("%s \u00b1 %s", FormatDuration(*report.corrected_wall_ns),
                                            FormatDuration(report.corrected_wall_spread_ns)))});
  }
  facts.push_back({"overhead correction", report.corrected ? "corrected" : "<strong>not corrected</strong>"});
  facts.push_back({"processes, threads", absl::StrFormat("%d, %d", report.processes.size(), threads)});
  facts.push_back({"events", absl::StrFormat("%s (%s dropped)", FormatCount(events), FormatCount(dropped))});
  facts.push_back({"GPU capture", Escape(GpuCaptureFact(report))});
  facts.push_back({"rlscope version", Escape(meta.rlscope_version.empty() ? "unknown" : meta.rlscope_version)});
  std::string out = "<dl class=\"meta\">";
  for (const auto& [name, value] : facts) out += absl::StrCat("<dt>", Escape(name), "</dt><dd>", value, "</dd>");
  return out + "</dl>";
}

// Banners: what makes the numbers below incomplete or biased, first.
std::string Banners(const RunReport& report) {
  std::string out;
  if (report.data_damaged) {
    out +=
        "<div class=\"banner bad\" id=\"damaged\"><strong>Some trace data was damaged.</strong> The report covers "
        "what could be read; see <a href=\"#problems\">problems</a>.</div>";
  }
  if (!report.corrected) {
    out += absl::StrCat(
        "<div class=\"banner warn\" id=\"not-corrected\"><strong>Not corrected for rlscope's "
        "overhead:</strong> times include the profiler's own cost. ",
        Escape(report.correction_message), "</div>");
  }
  size_t problems = report.problems.size();
  for (const ProcessReport& process : report.processes) problems += process.problems.size();
  if (problems > 0) {
    out += absl::StrFormat(
        "<div class=\"banner warn\">%d problem(s) with this run's data: see <a "
        "href=\"#problems\">problems</a>.</div>",
        problems);
  }
  return out;
}

std::string GpuBusySection(const RunReport& report) {
  std::set<std::string> statuses;
  bool captured = false;
  for (const ProcessReport& process : report.processes) {
    if (!process.gpu.status.empty()) statuses.insert(process.gpu.status);
    captured = captured || process.gpu.status == "captured" || process.gpu.busy_ns > 0;
  }
  const bool sampled = report.nvidia_smi.has_value() && !report.nvidia_smi->gpus.empty();
  std::string out;
  if (!captured) {
    out += Note(absl::StrFormat("No GPU activity was captured in this run (GPU level: %s).",
                                statuses.empty() ? "unknown" : absl::StrJoin(statuses, ", ")));
  } else {
    out += absl::StrFormat(
        "<p>Some GPU was busy for <strong>%s</strong> of the %s run (%s), as measured from the "
        "trace (the union of kernels, copies and memsets).</p>",
        Escape(FormatDuration(report.gpu_busy_ns)), Escape(FormatDuration(report.metadata.wall_ns)),
        Escape(FormatPercent(report.gpu_busy_ns, report.metadata.wall_ns)));
  }
  if (!sampled) {
    out += Note(
        "nvidia-smi's utilization was not sampled for this run (nvidia-smi absent, or no samples in the "
        "run's window).");
    if (report.nvidia_smi.has_value()) {
      for (const std::string& problem : report.nvidia_smi->problems) out += Note(problem);
    }
    return out;
  }
  html::BarChart chart;
  chart.description = "GPU busy: the trace against nvidia-smi";
  chart.format_value = [](double percent) { return absl::StrFormat("%.0f%%", percent); };
  const double traced = report.metadata.wall_ns > 0 ? 100.0 * static_cast<double>(report.gpu_busy_ns) /
                                                          static_cast<double>(report.metadata.wall_ns)
                                                    : 0;
  auto bar = [](std::string label, std::string series, double percent, std::string title) {
    return html::ChartBar{std::move(label), {{std::move(series), percent, std::move(title)}}, ""};
  };
  chart.groups.push_back({"measured by rlscope",
                          {bar("any GPU", "GPU busy (trace)", traced,
                               absl::StrFormat("GPU busy from the trace: %.2f%% (%d ns of %d ns)", traced,
                                               report.gpu_busy_ns, report.metadata.wall_ns))}});
  for (const GpuUtilizationSummary& gpu : report.nvidia_smi->gpus) {
    chart.groups.push_back(
        {absl::StrFormat("nvidia-smi, GPU %d", gpu.gpu_index),
         {bar("mean", "nvidia-smi", gpu.mean_percent,
              absl::StrFormat("nvidia-smi utilization.gpu mean %.1f%% over %d samples", gpu.mean_percent, gpu.samples)),
          bar("max", "nvidia-smi", gpu.max_percent,
              absl::StrFormat("nvidia-smi utilization.gpu max %d%%", gpu.max_percent))}});
  }
  out += html::StackedBarChart(chart);
  out += Note(kNvidiaSmiCaveat);
  for (const std::string& problem : report.nvidia_smi->problems) out += Note(problem);
  return out;
}

// AnswerSection: the answer first (headline.h).
std::string AnswerSection(const Headline& headline) {
  std::string out = "<h2 id=\"answer\">The answer</h2><ul class=\"answer\">";
  for (const std::string& finding : headline.findings) out += "<li>" + Escape(finding) + "</li>";
  for (const std::string& step : headline.next_steps) out += "<li><strong>Next:</strong> " + Escape(step) + "</li>";
  out += "</ul>" + Note(headline.correction);
  return out;
}

std::string CorrectionSection(const RunReport& report) {
  if (!report.corrected) {
    return absl::StrCat("<p><strong>Uncorrected.</strong> ", Escape(report.correction_message), "</p>");
  }
  const ProcessCorrection& overhead = report.overhead;
  std::string out = absl::StrFormat(
      "<p>Calibration <code>%s</code>: rlscope's estimated cost %s, of which %s was removed from the timelines "
      "(%s had no time left to be removed from).</p>",
      Escape(report.calibration_file), Escape(FormatDuration(static_cast<int64_t>(overhead.estimated_ns))),
      Escape(FormatDuration(static_cast<int64_t>(overhead.removed_ns))),
      Escape(FormatDuration(static_cast<int64_t>(overhead.unplaced_ns))));
  if (overhead.cpu_wait_ns >= 1e6) {
    out += absl::StrFormat(
        "<p>%s of the estimate are waits for a CPU: the machine was busy, and each of rlscope's costs took the "
        "program's threads that much longer in wall time (their share of a CPU).</p>",
        Escape(FormatDuration(static_cast<int64_t>(overhead.cpu_wait_ns))));
  }
  if (overhead.wait_restored_ns >= 1e6) {
    out += absl::StrFormat(
        "<p>%s of the removed time was given back to CUDA calls that waited for queued GPU work: "
        "unprofiled, they would have waited that much longer.</p>",
        Escape(FormatDuration(static_cast<int64_t>(overhead.wait_restored_ns))));
  }
  out += absl::StrCat("<p>Calibration quality: ", Escape(calibration::DescribeQuality(report.calibration_quality)),
                      "</p>");
  std::vector<std::pair<std::string, SiteOverhead>> sites(overhead.by_site.begin(), overhead.by_site.end());
  std::sort(sites.begin(), sites.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  std::vector<std::vector<Cell>> table;
  for (size_t i = 0; i < sites.size() && i < kMaxSites; ++i) {
    const SiteOverhead& site = sites[i].second;
    // A cost its calibration did not pin down is marked, never shown as fine.
    table.push_back(
        {Raw(absl::StrCat("<code>", Escape(sites[i].first), "</code>", site.uncertain() ? " (uncertain)" : "")),
         Number(FormatCount(site.events)), Number(FormatDuration(static_cast<int64_t>(site.ns))),
         Number(FormatDuration(static_cast<int64_t>(site.spread_ns)))});
  }
  if (!table.empty()) {
    out += html::Table({"overhead site", "events", "estimated cost", "\u00b1 spread"}, table);
    out += CappedNote(std::min(sites.size(), kMaxSites), sites.size(), "sites");
  }
  if (!overhead.uncalibrated.empty()) {
    std::vector<std::string> names;
    for (const auto& [site, events] : overhead.uncalibrated) names.push_back(absl::StrFormat("%s (%d)", site, events));
    out += Note("Sites without a calibrated cost (not removed): " + absl::StrJoin(names, ", "));
  }
  return out;
}

std::string ProblemsSection(const RunReport& report) {
  std::string items;
  for (const std::string& problem : report.problems) items += absl::StrCat("<li>", Escape(problem), "</li>");
  for (const ProcessReport& process : report.processes) {
    for (const std::string& problem : process.problems) {
      items += absl::StrFormat("<li>process %d: %s</li>", process.pid, Escape(problem));
    }
  }
  if (items.empty()) return "<p>None: the trace was read completely and no events were dropped.</p>";
  return absl::StrCat("<ul>", items, "</ul>");
}

}  // namespace

std::string FormatReportHtml(const RunReport& report) {
  std::string body = absl::StrFormat("<h1>rlscope report</h1><p class=\"mono\">%s</p>",
                                     Escape(FormatCommandLine(report.metadata.command)));
  body += Banners(report);
  body += AnswerSection(MakeHeadline(report));
  body += MetadataSection(report);
  body += "<h2 id=\"breakdown\">Where the time went</h2>";
  if (report.corrected) {
    body += ViewSwitch() +
            Note(
                "Corrected: rlscope's own overhead removed where it happened (estimate); uncorrected: as measured, "
                "with the profiler's cost as category Profiler. The switch applies to every breakdown on the page; "
                "report.html#uncorrected opens that view.");
  }
  body += BreakdownViews(report);
  if (UsedGpu(report)) {
    body += "<h2 id=\"gpu\">GPU busy: the trace against nvidia-smi</h2>" + GpuBusySection(report);
  } else {
    body += Note("No process used CUDA and nvidia-smi was not sampled: this run has no GPU level.");
  }
  // Processes by thread time; quiet ones (nothing intercepted: compilers,
  // shells) are one summary line, as in report.txt, not a row each.
  const ProcessSplit split = SplitQuietProcesses(report);
  std::vector<const ProcessReport*> processes = split.shown;
  std::stable_sort(processes.begin(), processes.end(), [](const ProcessReport* a, const ProcessReport* b) {
    return a->traced_thread_ns > b->traced_thread_ns;
  });
  body += JobsSectionHtml(report);
  body += "<h2 id=\"processes\">Processes</h2>";
  if (!processes.empty()) body += ProcessTableHtml(processes);
  if (split.quiet_count > 0) {
    body += Note(absl::StrFormat("%d %sprocess(es) with nothing intercepted (%s of thread time): %s", split.quiet_count,
                                 processes.empty() ? "" : "more ", FormatDuration(split.quiet_thread_ns),
                                 split.quiet_commands));
  }
  if (report.processes.empty()) body += Note("No process was traced.");
  for (size_t i = 0; i < processes.size() && i < kMaxDetailedProcesses; ++i) {
    body += ProcessSectionHtml(report, *processes[i]);
  }
  if (processes.size() > kMaxDetailedProcesses) {
    body += Note(absl::StrFormat("%d more processes with intercepted activity are in the table above only.",
                                 processes.size() - kMaxDetailedProcesses));
  }
  // The correction's details after the processes, as in report.txt: the
  // answer and the breakdown first.
  body += "<h2 id=\"correction\">Overhead correction and calibration</h2>" + CorrectionSection(report);
  body += "<h2 id=\"problems\">Problems with this run's data</h2>" + ProblemsSection(report);
  const std::string title = html::Truncate(FormatCommandLine(report.metadata.command), 80);
  return html::Page(absl::StrCat("rlscope report: ", title), body);
}

}  // namespace rlscope::report
