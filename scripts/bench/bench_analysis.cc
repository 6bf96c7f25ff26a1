// bench_analysis: analysis throughput and trace size. Writes a synthetic run
// directory (one process, 4 threads, NVTX-style operations around CUDA API
// calls, as a training loop produces them), then times LoadRunReport, which
// reads, verifies, decodes and analyses it on one core (best of 3 runs of the
// same trace: the first also faults the file and fresh memory in).
//
//   bench_analysis [EVENTS] [DIR] [corrected]
//       (defaults: 20000000, /tmp/rlscope-bench-analysis; "corrected" puts a
//       calibration in the run, so the overhead correction runs too: the
//       timelines are corrected and analysed twice, corrected and not)
//
// Prints: events, trace bytes per event, analysis seconds, events/s.
// Runs on huge pages as rlscope does (collector/huge_page_malloc.h;
// RLSCOPE_HUGE_PAGES=0 measures without).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "calibration/overhead_model.h"
#include "collector/huge_page_malloc.h"
#include "format/run_layout.h"
#include "preload/batch_encoder.h"
#include "report/run_metadata.h"
#include "report/run_report.h"
#include "report/run_sink.h"

namespace {

using rlscope::preload::BatchEncoder;
namespace wire = rlscope::wire;

constexpr int kThreads = 4;
constexpr uint32_t kEventsPerFrame = 32768;

void Write(std::ofstream& out, BatchEncoder::Frame frame) {
  out.write(reinterpret_cast<const char*>(frame.data()), static_cast<std::streamsize>(frame.size()));
}

// Event i of a thread: a repeating step of push, 6 CUDA calls, pop.
wire::Event SyntheticEvent(uint64_t i) {
  const uint64_t step = i / 8, slot = i % 8;
  const int64_t t0 = static_cast<int64_t>(step) * 20000;
  const auto kind = [](wire::EventKind k) { return static_cast<uint16_t>(k); };
  if (slot == 0) return wire::Event(t0, t0, 10 + step % 3, kind(wire::EventKind::kOperationPush), 1, 0);
  if (slot == 7) return wire::Event(t0 + 19000, t0 + 19000, 0, kind(wire::EventKind::kOperationPop), 0, 0);
  const int64_t begin = t0 + static_cast<int64_t>(slot) * 2500;
  return wire::Event(begin, begin + 2000, 1, kind(wire::EventKind::kCudaApi), 0, 0);
}

}  // namespace

int main(int argc, char** argv) {
  rlscope::collector::UseHugePageMalloc(argv);
  const uint64_t total_events = argc > 1 ? strtoull(argv[1], nullptr, 10) : 20'000'000;
  const std::filesystem::path dir = argc > 2 ? argv[2] : "/tmp/rlscope-bench-analysis";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "trace");
  rlscope::report::RunMetadata metadata;
  metadata.command = {"synthetic"};
  if (!rlscope::report::WriteRunMetadata((dir / "meta.json").string(), metadata).ok()) return 1;
  if (argc > 3 && std::string(argv[3]) == "corrected") {
    rlscope::calibration::OverheadModel model;
    model.costs["cuda_hook"] = {15, 1, 5, 1000};
    model.costs["nvtx_range"] = {12, 1, 5, 1000};
    model.costs["native_process"] = {3e6, 1e5, 5, 1};
    const std::string path = (dir / rlscope::run_layout::kCalibration).string();
    if (!rlscope::calibration::WriteOverheadModel(path, model).ok()) return 1;
  }
  const std::string trace =
      (dir / rlscope::run_layout::kTraceDir / (std::string("1000") + rlscope::run_layout::kTraceExtension)).string();
  {
    std::ofstream out(trace, std::ios::binary);
    BatchEncoder encoder;
    rlscope::preload::ProcessIdentity identity;
    identity.pid = 1000;
    Write(out, encoder.EncodeHello(identity, "tsc"));
    const uint64_t per_thread = total_events / kThreads;
    uint64_t sequence = 0;
    for (uint64_t first = 0; first < per_thread; first += kEventsPerFrame / kThreads) {
      const uint32_t count = static_cast<uint32_t>(std::min<uint64_t>(kEventsPerFrame / kThreads, per_thread - first));
      encoder.BeginBatch(++sequence, 0);
      if (sequence == 1) {
        encoder.AddString(1, "cudaLaunchKernel");
        for (int op = 0; op < 3; ++op) encoder.AddString(10 + op, "operation-" + std::to_string(op));
      }
      for (int t = 0; t < kThreads; ++t) {
        encoder.AddThreadEvents(1000 + t, t + 1, count, 0, {}, [&](wire::Event* out_events) {
          for (uint32_t i = 0; i < count; ++i) out_events[i] = SyntheticEvent(first + i);
        });
      }
      Write(out, encoder.FinishBatch());
    }
  }
  const auto bytes = std::filesystem::file_size(trace);
  // Best of 3: a shared machine's noise (other tenants, page reclaim) only
  // ever slows a run down.
  double seconds = 1e300;
  absl::StatusOr<rlscope::report::RunReport> report;
  for (int repetition = 0; repetition < 3; ++repetition) {
    const auto start = std::chrono::steady_clock::now();
    report = rlscope::report::LoadRunReport(dir.string());
    seconds = std::min(seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!report.ok() || report->processes.size() != 1 || report->corrected != (argc > 3)) {
      fprintf(stderr, "analysis failed\n");
      return 1;
    }
  }
  const double events = static_cast<double>(report->processes[0].events);
  printf("events %.0f\nbytes_per_event %.2f\nseconds %.3f\nevents_per_second %.0f\n", events,
         static_cast<double>(bytes) / events, seconds, events / seconds);
  std::filesystem::remove_all(dir);
  return 0;
}
