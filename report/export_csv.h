// CSV export of a report's breakdown rows (`rlscope export DIR --csv FILE`).
//
// Format (RFC 4180: comma-separated, CRLF line ends, a field is quoted with
// double quotes when it holds a comma, a quote, CR or LF, and quotes inside
// are doubled), one header line then one line per row:
//
//   view,process,operation,resource,category,ns
//
// view: "corrected" for the rows of a corrected report (report.json's
// "rows"), "uncorrected" for what was measured ("uncorrected_rows" of a
// corrected report, "rows" of an uncorrected one). So the rows of one view
// are a complete breakdown; filter on it before summing.
#ifndef RLSCOPE_REPORT_EXPORT_CSV_H_
#define RLSCOPE_REPORT_EXPORT_CSV_H_

#include <ostream>
#include <string>
#include <string_view>

#include "report/run_report.h"

namespace rlscope::report {

// CsvField: `value` as one RFC 4180 field (quoted only when needed).
std::string CsvField(std::string_view value);

// WriteRowsCsv: the report's rows as above.
void WriteRowsCsv(const RunReport& report, std::ostream& out);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_EXPORT_CSV_H_
