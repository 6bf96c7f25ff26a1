// HtmlPage: the building blocks shared by the self-contained HTML outputs
// (report.html, `rlscope diff --format html`): escaping, the page skeleton
// with its inline CSS and script, tables, and stacked bar charts drawn as
// inline SVG. Nothing here loads anything from the network: the pages must
// open offline, from a cluster's scratch directory, years later.
//
// The page script shows one of several alternative views (elements with
// data-view="NAME"; buttons with data-show-view="NAME" switch), chosen on
// load by the URL's hash (page.html#uncorrected) when it names a view. It
// marks <body> with data-rendered="ok" once it ran, and with
// data-script-error when any script failed, so a headless browser's DOM
// dump tells whether the page works.
#ifndef RLSCOPE_REPORT_HTML_PAGE_H_
#define RLSCOPE_REPORT_HTML_PAGE_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rlscope::report::html {

// Escape: text -> HTML text or attribute value (& < > " ' escaped).
std::string Escape(std::string_view text);

// Truncate: at most `max_chars` code points, "…" marking a cut.
std::string Truncate(std::string_view text, size_t max_chars);

// SeriesColor: the fill colour of a category ("Python", "CUDA API",
// "Kernel", ... as CategoryName spells them), the same on every chart and
// legend; other names get a stable colour from a spare palette.
std::string SeriesColor(std::string_view series);

// A table cell: HTML already escaped by the constructor used.
struct Cell {
  std::string html;
  bool numeric = false;  // Right-aligned, tabular digits.
};
Cell Text(std::string_view text);                  // Escaped text, left-aligned.
Cell Number(std::string_view text);                // Escaped text, right-aligned.
Cell Raw(std::string html, bool numeric = false);  // Trusted HTML (built here).

// Table: a <table> with one header row. `css_class` is added to the table.
std::string Table(const std::vector<std::string>& header, const std::vector<std::vector<Cell>>& rows,
                  std::string_view css_class = "");

// Note: a muted paragraph of text.
std::string Note(std::string_view text);

// CappedNote: "Showing the N largest of M WHAT; report.json has all of
// them." when a table was cut (shown < total), else "".
std::string CappedNote(size_t shown, size_t total, std::string_view what);

// Legend: a swatch and name per series, in the given order.
std::string Legend(const std::vector<std::string>& series);

// Stacked horizontal bars. A chart has groups (an operation), each with
// bars (a resource, a run), each stacked from segments (a category).
struct ChartSegment {
  std::string series;  // Colour and legend name.
  double value = 0;
  std::string title;  // Hover text (plain text; escaped when drawn).
};
struct ChartBar {
  std::string label;
  std::vector<ChartSegment> segments;
  std::string total_text;  // Drawn after the bar instead of its total when set ("\u2014": absent).
};
struct ChartGroup {
  std::string label;
  std::vector<ChartBar> bars;
};
struct BarChart {
  std::vector<ChartGroup> groups;
  // Axis ticks and bar totals (e.g. FormatDuration of nanoseconds).
  std::function<std::string(double)> format_value;
  std::string description;  // The SVG's accessible name.
};

// StackedBarChart: the chart as an inline <svg>; each segment is a <rect>
// with data-series, data-value (the exact value) and a <title>.
std::string StackedBarChart(const BarChart& chart);

// MiniBar: one small stacked bar (table cells), scaled to `full_value`.
std::string MiniBar(const std::vector<ChartSegment>& segments, double full_value);

// Page: a complete HTML document around `body_html` (trusted).
std::string Page(std::string_view title, std::string_view body_html);

}  // namespace rlscope::report::html

#endif  // RLSCOPE_REPORT_HTML_PAGE_H_
