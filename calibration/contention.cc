#include "calibration/contention.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace rlscope::calibration {

namespace {

std::string ReadSmallFile(const char* path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Debian's absl::string_view is not std::string_view.
absl::string_view Absl(std::string_view text) { return absl::string_view(text.data(), text.size()); }

double Seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

}  // namespace

absl::StatusOr<double> ParseLoadAverage(std::string_view loadavg) {
  const std::vector<absl::string_view> fields = absl::StrSplit(Absl(loadavg), ' ', absl::SkipWhitespace());
  double load = 0;
  if (fields.empty() || !absl::SimpleAtod(fields[0], &load) || load < 0) {
    return absl::InvalidArgumentError(absl::StrFormat("/proc/loadavg: no load average in '%s'", loadavg.substr(0, 80)));
  }
  return load;
}

absl::StatusOr<CpuTimes> ParseCpuTimes(std::string_view proc_stat) {
  for (absl::string_view line : absl::StrSplit(Absl(proc_stat), '\n')) {
    // The aggregate line is "cpu  ..."; per-CPU lines are "cpu0 ...".
    if (!absl::ConsumePrefix(&line, "cpu ")) continue;
    const std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    // user nice system idle iowait irq softirq steal guest guest_nice
    std::vector<uint64_t> values;
    for (absl::string_view field : fields) {
      uint64_t value = 0;
      if (!absl::SimpleAtoi(field, &value)) {
        return absl::InvalidArgumentError(absl::StrFormat("/proc/stat: '%s' in the cpu line is not a count", field));
      }
      values.push_back(value);
    }
    if (values.size() < 4) return absl::InvalidArgumentError("/proc/stat: the cpu line has fewer than 4 fields");
    CpuTimes times;
    // Guest time (fields 9, 10) is counted in user and nice already.
    for (size_t i = 0; i < std::min<size_t>(values.size(), 8); ++i) times.total += values[i];
    times.idle = values[3] + (values.size() > 4 ? values[4] : 0);
    times.steal = values.size() > 7 ? values[7] : 0;
    return times;
  }
  return absl::InvalidArgumentError("/proc/stat: no aggregate cpu line");
}

absl::StatusOr<int> ParseCpuList(std::string_view text) {
  const absl::string_view list = absl::StripAsciiWhitespace(Absl(text));
  if (list.empty()) return absl::InvalidArgumentError("empty CPU list");
  int count = 0;
  for (absl::string_view range : absl::StrSplit(list, ',')) {
    const std::vector<absl::string_view> ends = absl::StrSplit(range, absl::MaxSplits('-', 1));
    int first = 0, last = 0;
    if (!absl::SimpleAtoi(ends[0], &first) || first < 0 ||
        !absl::SimpleAtoi(ends.size() == 2 ? ends[1] : ends[0], &last) || last < first) {
      return absl::InvalidArgumentError(absl::StrFormat("'%s' is not a CPU range", range));
    }
    count += last - first + 1;
  }
  return count;
}

ContentionFigures Between(const ContentionSnapshot& begin, const ContentionSnapshot& end) {
  ContentionFigures figures;
  figures.cpus = begin.cpus;
  figures.load_average_begin = begin.load_average;
  figures.load_average_max = std::max(begin.load_average, end.load_average);
  const double wall_s = end.wall_s - begin.wall_s;
  if (begin.have_cpu && end.have_cpu && end.cpu.total > begin.cpu.total && wall_s > 0) {
    const double total = static_cast<double>(end.cpu.total - begin.cpu.total);
    const double idle = static_cast<double>(end.cpu.idle >= begin.cpu.idle ? end.cpu.idle - begin.cpu.idle : 0);
    const double steal = static_cast<double>(end.cpu.steal >= begin.cpu.steal ? end.cpu.steal - begin.cpu.steal : 0);
    figures.steal_fraction = steal / total;
    // Busy is what was neither idle nor stolen; of it, this tree's own.
    const double busy_s = std::max(0.0, total - idle - steal) / begin.ticks_per_s;
    figures.other_busy_cpus = std::max(0.0, busy_s - (end.own_cpu_s - begin.own_cpu_s)) / wall_s;
  }
  const double children_s = end.children_cpu_s - begin.children_cpu_s;
  if (children_s > 0) {
    figures.involuntary_switches_per_cpu_s =
        static_cast<double>(end.children_involuntary - begin.children_involuntary) / children_s;
  }
  return figures;
}

double ReadLoadAverage() {
  absl::StatusOr<double> load = ParseLoadAverage(ReadSmallFile("/proc/loadavg"));
  return load.ok() ? *load : -1;
}

ContentionSnapshot Snapshot() {
  ContentionSnapshot snapshot;
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  snapshot.wall_s = static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
  if (absl::StatusOr<CpuTimes> cpu = ParseCpuTimes(ReadSmallFile("/proc/stat")); cpu.ok()) {
    snapshot.cpu = *cpu;
    snapshot.have_cpu = true;
  }
  if (const long hz = sysconf(_SC_CLK_TCK); hz > 0) snapshot.ticks_per_s = static_cast<double>(hz);
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  snapshot.children_cpu_s = Seconds(children.ru_utime) + Seconds(children.ru_stime);
  snapshot.own_cpu_s = Seconds(self.ru_utime) + Seconds(self.ru_stime) + snapshot.children_cpu_s;
  snapshot.children_involuntary = children.ru_nivcsw;
  snapshot.load_average = ReadLoadAverage();
  if (absl::StatusOr<int> cpus = ParseCpuList(ReadSmallFile("/sys/devices/system/cpu/online")); cpus.ok()) {
    snapshot.cpus = *cpus;
  } else {
    snapshot.cpus = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  }
  return snapshot;
}

absl::Status ApplyTestContention(std::string_view setting, ContentionFigures& figures) {
  for (absl::string_view part : absl::StrSplit(Absl(setting), ',', absl::SkipWhitespace())) {
    const std::vector<absl::string_view> pair = absl::StrSplit(part, absl::MaxSplits('=', 1));
    double value = 0;
    if (pair.size() != 2 || !absl::SimpleAtod(pair[1], &value)) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: '%s' is not NAME=NUMBER", kTestContentionEnv, part));
    }
    if (pair[0] == "steal") {
      figures.steal_fraction = value;
    } else if (pair[0] == "load") {
      figures.load_average_begin = figures.load_average_max = value;
    } else if (pair[0] == "other_busy") {
      figures.other_busy_cpus = value;
    } else {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: unknown figure '%s' (steal, load, other_busy)", kTestContentionEnv, pair[0]));
    }
  }
  return absl::OkStatus();
}

}  // namespace rlscope::calibration
