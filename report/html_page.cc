#include "report/html_page.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rlscope::report::html {

namespace {

// Chart geometry (SVG user units = CSS pixels at 100 %). Labels are cut to
// what fits their column at the page's 12 px font (about 7 px a character).
constexpr double kChartWidth = 1000;
constexpr double kGroupLabelX = 4;
constexpr size_t kGroupLabelChars = 34;
constexpr double kBarLabelRight = 362;
constexpr size_t kBarLabelChars = 14;
constexpr double kPlotX = 370;
constexpr double kPlotWidth = 520;
constexpr double kAxisHeight = 28;
constexpr double kRowHeight = 20;
constexpr double kBarHeight = 14;
constexpr double kGroupGap = 10;
constexpr double kMiniBarWidth = 160;
constexpr double kMiniBarHeight = 10;

// Categories' colours: one hue family per stack level, GPU work in purples.
constexpr std::array<std::pair<std::string_view, std::string_view>, 11> kCategoryColors = {{
    {"Python", "#4e79a7"},
    {"Backend", "#f28e2b"},
    {"Simulator", "#59a14f"},
    {"Native", "#9c9c9c"},
    {"CUDA API", "#e15759"},
    {"Profiler", "#edc948"},
    {"Kernel", "#7b4ea3"},
    {"Memcpy", "#b07aa1"},
    {"Memset", "#d4a6c8"},
    {"Wait", "#e6e6e6"},  // Blocked: pale, not work.
    {"Communication", "#2a9d8f"},
}};
constexpr std::array<std::string_view, 6> kSpareColors = {"#76b7b2", "#ff9da7", "#9d7660",
                                                          "#bab0ac", "#499894", "#86bcb6"};

// NiceStep: 1, 2 or 5 times a power of ten, about a fifth of `max_value`.
double NiceStep(double max_value) {
  const double raw = max_value / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double normalized = raw / magnitude;
  const double nice = normalized <= 1 ? 1 : normalized <= 2 ? 2 : normalized <= 5 ? 5 : 10;
  return nice * magnitude;
}

double BarTotal(const ChartBar& bar) {
  double total = 0;
  for (const ChartSegment& segment : bar.segments) total += std::max(0.0, segment.value);
  return total;
}

std::string Num(double value) { return absl::StrFormat("%.1f", value); }

// TickLabel: an axis value without the trailing zeros a table keeps
// ("5.000 s" -> "5 s", "2.50 ms" -> "2.5 ms"); ticks are round numbers.
std::string TickLabel(std::string label) {
  const size_t number_end = label.find_first_not_of("0123456789.-");
  const size_t end = number_end == std::string::npos ? label.size() : number_end;
  const size_t dot = label.find('.');
  if (dot == std::string::npos || dot >= end) return label;
  size_t cut = end;
  while (cut > dot + 1 && label[cut - 1] == '0') --cut;
  if (cut == dot + 1) cut = dot;
  return label.erase(cut, end - cut);
}

// ExactValue: a segment's value for data-value: whole numbers (ns,
// counts) in full, fractions and percentages to 6 significant digits.
std::string ExactValue(double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e17) return absl::StrFormat("%.0f", value);
  return absl::StrFormat("%.6g", value);
}

std::string Rect(double x, double y, double width, double height, const ChartSegment& segment) {
  return absl::StrFormat(
      "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"%s\" data-series=\"%s\" data-value=\"%s\">"
      "<title>%s</title></rect>",
      Num(x), Num(y), Num(width), Num(height), SeriesColor(segment.series), Escape(segment.series),
      ExactValue(segment.value), Escape(segment.title));
}

// A label cut to fit, with the full text as its hover title when cut.
std::string SvgLabel(double x, double y, std::string_view anchor, std::string_view css_class, std::string_view text,
                     size_t max_chars) {
  const std::string shown = Truncate(text, max_chars);
  const std::string title = shown == text ? "" : absl::StrCat("<title>", Escape(text), "</title>");
  return absl::StrFormat("<text x=\"%s\" y=\"%s\" text-anchor=\"%s\" class=\"%s\">%s%s</text>", Num(x), Num(y), anchor,
                         css_class, title, Escape(shown));
}

constexpr const char* kStyle = R"CSS(
:root { --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --panel: #f6f8fa; --warn: #9a6700; --bad: #cf222e; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1080px; padding: 24px 28px 64px; color: var(--ink); background: #fff;
       font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 14px; margin: 18px 0 6px; }
p { margin: 6px 0; }
code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
.muted { color: var(--muted); }
.note { color: var(--muted); font-size: 12.5px; }
.banner { border: 1px solid; border-radius: 6px; padding: 8px 12px; margin: 10px 0; }
.banner.warn { border-color: #d4a72c; background: #fff8c5; }
.banner.bad { border-color: #ff8182; background: #ffebe9; }
.banner.ok { border-color: #4ac26b; background: #dafbe1; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0; }
dl.meta dt { color: var(--muted); }
dl.meta dd { margin: 0; overflow-wrap: break-word; }
/* Wide tables scroll sideways instead of overflowing the page. */
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px;
        display: block; max-width: 100%; overflow-x: auto; }
th, td { padding: 3px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: var(--panel); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.worse { color: var(--bad); font-weight: 600; }
.better { color: #1a7f37; font-weight: 600; }
td { overflow-wrap: break-word; }
td code { overflow-wrap: break-word; }  /* Wrap a command at its spaces, not mid-word. */
td code.command { display: inline-block; min-width: 16em; }
tr:nth-child(even) td { background: #fbfcfd; }
.switch { display: inline-flex; border: 1px solid var(--line); border-radius: 6px; overflow: hidden; margin: 6px 0; }
.switch button { font: inherit; border: 0; padding: 5px 14px; background: #fff; cursor: pointer; }
.switch button[aria-pressed="true"] { background: var(--ink); color: #fff; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; margin: 6px 0; font-size: 13px; }
.legend span.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 5px;
                      vertical-align: -1px; }
svg.chart { width: 100%; max-width: 1000px; height: auto; display: block; }
svg.chart text { font-size: 12px; fill: var(--ink); }
svg.chart text.group { font-weight: 600; }
svg.chart text.bar, svg.chart text.tick, svg.chart text.total { fill: var(--muted); }
svg.chart line.grid { stroke: #e4e8ec; }
svg.chart line.sep { stroke: var(--line); }
svg.mini { vertical-align: middle; }
[hidden] { display: none !important; }
)CSS";

// The page's script: alternative views (see the header) and the markers.
constexpr const char* kScript = R"JS(
(function () {
  var views = document.querySelectorAll('[data-view]');
  var buttons = document.querySelectorAll('[data-show-view]');
  function show(name) {
    var known = false;
    for (var i = 0; i < views.length; i++) known = known || views[i].getAttribute('data-view') === name;
    if (!known) return false;
    for (var j = 0; j < views.length; j++) views[j].hidden = views[j].getAttribute('data-view') !== name;
    for (var k = 0; k < buttons.length; k++) {
      buttons[k].setAttribute('aria-pressed', String(buttons[k].getAttribute('data-show-view') === name));
    }
    document.body.setAttribute('data-shown-view', name);
    return true;
  }
  function showHash() {
    var wanted = decodeURIComponent(location.hash.replace(/^#/, ''));
    if (views.length > 0 && !show(wanted)) show(views[0].getAttribute('data-view'));
  }
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].addEventListener('click', function () { location.hash = this.getAttribute('data-show-view'); });
  }
  window.addEventListener('hashchange', showHash);
  showHash();
  document.body.setAttribute('data-rendered', 'ok');
})();
)JS";

}  // namespace

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Truncate(std::string_view text, size_t max_chars) {
  if (max_chars == 0) return "";
  std::vector<size_t> starts;  // Byte offset of each code point (UTF-8).
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  if (starts.size() <= max_chars) return std::string(text);
  return absl::StrCat(std::string(text.substr(0, starts[max_chars - 1])), "\u2026");  // Room for the ellipsis.
}

std::string SeriesColor(std::string_view series) {
  for (const auto& [name, color] : kCategoryColors) {
    if (name == series) return std::string(color);
  }
  uint32_t hash = 2166136261u;  // FNV-1a: stable across runs and machines.
  for (char c : series) hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  return std::string(kSpareColors[hash % kSpareColors.size()]);
}

Cell Text(std::string_view text) { return {Escape(text), false}; }
Cell Number(std::string_view text) { return {Escape(text), true}; }
Cell Raw(std::string html, bool numeric) { return {std::move(html), numeric}; }

std::string Table(const std::vector<std::string>& header, const std::vector<std::vector<Cell>>& rows,
                  std::string_view css_class) {
  std::string out = css_class.empty() ? "<table>" : absl::StrCat("<table class=\"", Escape(css_class), "\">");
  // A header is numeric when its column's first row is.
  out += "<thead><tr>";
  for (size_t i = 0; i < header.size(); ++i) {
    const bool numeric = !rows.empty() && i < rows[0].size() && rows[0][i].numeric;
    out += absl::StrCat(numeric ? "<th class=\"num\">" : "<th>", Escape(header[i]), "</th>");
  }
  out += "</tr></thead><tbody>";
  for (const auto& row : rows) {
    out += "<tr>";
    for (const Cell& cell : row) out += absl::StrCat(cell.numeric ? "<td class=\"num\">" : "<td>", cell.html, "</td>");
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

std::string Note(std::string_view text) { return absl::StrCat("<p class=\"note\">", Escape(text), "</p>"); }

std::string CappedNote(size_t shown, size_t total, std::string_view what) {
  if (shown >= total) return "";
  return Note(absl::StrFormat("Showing the %d largest of %d %s; report.json has all of them.", shown, total,
                              std::string(what)));
}

std::string Legend(const std::vector<std::string>& series) {
  std::string out = "<div class=\"legend\">";
  for (const std::string& name : series) {
    out += absl::StrFormat("<span data-series=\"%s\"><span class=\"swatch\" style=\"background:%s\"></span>%s</span>",
                           Escape(name), SeriesColor(name), Escape(name));
  }
  return out + "</div>";
}

std::string StackedBarChart(const BarChart& chart) {
  double max_total = 0;
  size_t bars = 0;
  for (const ChartGroup& group : chart.groups) {
    for (const ChartBar& bar : group.bars) max_total = std::max(max_total, BarTotal(bar));
    bars += group.bars.size();
  }
  if (bars == 0) return "<p class=\"note\">Nothing to chart.</p>";
  const double step = max_total > 0 ? NiceStep(max_total) : 1;
  const double axis_max = max_total > 0 ? std::ceil(max_total / step) * step : 1;
  const double scale = kPlotWidth / axis_max;
  const double height =
      kAxisHeight + static_cast<double>(bars) * kRowHeight + static_cast<double>(chart.groups.size()) * kGroupGap;
  std::string out = absl::StrFormat(
      "<svg class=\"chart\" viewBox=\"0 0 %s %s\" width=\"%s\" height=\"%s\" "
      "role=\"img\" aria-label=\"%s\">",
      Num(kChartWidth), Num(height), Num(kChartWidth), Num(height), Escape(chart.description));
  // Axis: ticks and grid lines over the plot.
  for (double tick = 0; tick <= axis_max * (1 + 1e-9); tick += step) {
    const double x = kPlotX + tick * scale;
    out += absl::StrFormat("<line class=\"grid\" x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\"/>", Num(x),
                           Num(kAxisHeight - 6), Num(x), Num(height));
    const std::string label = tick == 0 ? "0" : TickLabel(chart.format_value ? chart.format_value(tick) : Num(tick));
    out += absl::StrFormat("<text class=\"tick\" x=\"%s\" y=\"%s\" text-anchor=\"middle\">%s</text>", Num(x),
                           Num(kAxisHeight - 12), Escape(label));
  }
  double y = kAxisHeight + kGroupGap / 2;
  for (size_t g = 0; g < chart.groups.size(); ++g) {
    const ChartGroup& group = chart.groups[g];
    if (g > 0) {
      out += absl::StrFormat("<line class=\"sep\" x1=\"0\" y1=\"%s\" x2=\"%s\" y2=\"%s\"/>", Num(y - kGroupGap / 2),
                             Num(kChartWidth), Num(y - kGroupGap / 2));
    }
    out += SvgLabel(kGroupLabelX, y + kBarHeight - 2, "start", "group", group.label, kGroupLabelChars);
    for (const ChartBar& bar : group.bars) {
      out += SvgLabel(kBarLabelRight, y + kBarHeight - 2, "end", "bar", bar.label, kBarLabelChars);
      double x = kPlotX;
      for (const ChartSegment& segment : bar.segments) {
        if (segment.value <= 0) continue;
        const double width = segment.value * scale;
        out += Rect(x, y, width, kBarHeight, segment);
        x += width;
      }
      const double total = BarTotal(bar);
      const std::string total_text = !bar.total_text.empty() ? bar.total_text
                                     : chart.format_value    ? chart.format_value(total)
                                                             : Num(total);
      out += absl::StrFormat("<text class=\"total\" x=\"%s\" y=\"%s\">%s</text>", Num(x + 5), Num(y + kBarHeight - 2),
                             Escape(total_text));
      y += kRowHeight;
    }
    y += kGroupGap;
  }
  return out + "</svg>";
}

std::string MiniBar(const std::vector<ChartSegment>& segments, double full_value) {
  std::string out = absl::StrFormat(
      "<svg class=\"mini\" width=\"%s\" height=\"%s\" viewBox=\"0 0 %s %s\">"
      "<rect width=\"%s\" height=\"%s\" fill=\"#eef1f4\"/>",
      Num(kMiniBarWidth), Num(kMiniBarHeight), Num(kMiniBarWidth), Num(kMiniBarHeight), Num(kMiniBarWidth),
      Num(kMiniBarHeight));
  if (full_value > 0) {
    double x = 0;
    for (const ChartSegment& segment : segments) {
      if (segment.value <= 0) continue;
      const double width = segment.value / full_value * kMiniBarWidth;
      out += Rect(x, 0, width, kMiniBarHeight, segment);
      x += width;
    }
  }
  return out + "</svg>";
}

std::string Page(std::string_view title, std::string_view body_html) {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
      Escape(title), "</title>\n<style>", kStyle, "</style>\n</head>\n<body>\n",
      // First in <body>, so that it sees every later script's failure.
      "<script>window.onerror = function () { document.body.setAttribute('data-script-error', '1'); };</script>\n",
      std::string(body_html), "\n<script>", kScript, "</script>\n</body>\n</html>\n");
}

}  // namespace rlscope::report::html
