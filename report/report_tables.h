// ReportTables: the cells of the tables report.txt and report.html both
// show, built once; each renderer adds only its markup (report_text's
// column padding, report_html's cells). A table is its header, its rows
// (at most `max_rows`, in the order both show them) and how many rows
// there were in all, for the "N more" note.
#ifndef RLSCOPE_REPORT_REPORT_TABLES_H_
#define RLSCOPE_REPORT_REPORT_TABLES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "report/run_report.h"

namespace rlscope::report {

struct CellTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  size_t total_rows = 0;
};

// TransitionCells: per operation (most transitions first), its instances
// and its crossings between levels per instance ("FROM<arrow>TO"
// columns); "-" where none. Operations without an instance count, such as
// (none), show the plain count.
CellTable TransitionCells(const ProcessReport& process, std::string_view arrow, size_t max_rows);

// InstanceCells: per operation with instances (largest total first), how
// many and how long one took (mean, p50, p95, max), and with `steps` its
// time per environment step.
CellTable InstanceCells(const ProcessReport& process, uint64_t steps, size_t max_rows);

// JobCells: a job's table (job_ranks.h): per operation the total, then up
// to `max_rank_columns` ranks' times (beyond that the ranks' minimum,
// median and maximum instead), and the slowest rank.
CellTable JobCells(const JobReport& job, size_t max_rank_columns, size_t max_rows);

// JobCommunicationCells: a job's communication per rank (job_ranks.h):
// its time, of it waiting for the last rank to arrive, and how often it was
// that last rank; empty (no header) when no rank communicated. At most
// `max_rows` ranks, the ones that waited least (the stragglers) first.
CellTable JobCommunicationCells(const JobReport& job, size_t max_rows);

// JobCommunicationNote: what JobCommunicationCells' table shows, or why
// the waits could not be told ("" when no rank communicated).
std::string JobCommunicationNote(const JobReport& job);

// JobCommunicated: whether some rank of the job spent time in
// Communication.
bool JobCommunicated(const JobReport& job);

// JobTitle: "4 ranks of torchrun (world size 4): python3 train.py" and
// the like; siblings of the process tree that never communicate are
// called worker processes, not ranks.
std::string JobTitle(const JobReport& job);

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_REPORT_TABLES_H_
