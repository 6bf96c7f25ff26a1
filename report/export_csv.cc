#include "report/export_csv.h"

namespace rlscope::report {

std::string CsvField(std::string_view value) {
  if (value.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(value);
  std::string quoted = "\"";
  for (const char c : value) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

namespace {

void WriteRows(std::string_view view, const std::vector<BreakdownRow>& rows, std::ostream& out) {
  for (const BreakdownRow& row : rows) {
    out << view << ',' << row.pid << ',' << CsvField(row.operation) << ',' << CsvField(ResourceName(row.resource))
        << ',' << CsvField(CategoryName(row.category)) << ',' << row.ns << "\r\n";
  }
}

}  // namespace

void WriteRowsCsv(const RunReport& report, std::ostream& out) {
  out << "view,process,operation,resource,category,ns\r\n";
  if (report.corrected) {
    WriteRows("corrected", report.rows, out);
    WriteRows("uncorrected", report.uncorrected_rows, out);
  } else {
    WriteRows("uncorrected", report.rows, out);
  }
}

}  // namespace rlscope::report
