#include <catch2/catch.hpp>
#include <map>
#include <sstream>

#include "nlohmann/json.hpp"
#include "report/export_chrome.h"
#include "report/export_csv.h"
#include "report/export_folded.h"

using namespace rlscope::report;

TEST_CASE("CSV fields are quoted as RFC 4180 says", "[export]") {
  CHECK(CsvField("inference") == "inference");
  CHECK(CsvField("") == "");
  CHECK(CsvField("a,b") == "\"a,b\"");
  CHECK(CsvField("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(CsvField("two\nlines") == "\"two\nlines\"");
  CHECK(CsvField("cr\r") == "\"cr\r\"");
}

TEST_CASE("CSV has both views of a corrected report", "[export]") {
  RunReport report;
  report.corrected = true;
  report.rows = {{7, "train, step", Resource::kCpuGpu, Category::kCudaApi, 10}};
  report.uncorrected_rows = {{7, "train, step", Resource::kCpu, Category::kPython, 12}};
  std::ostringstream out;
  WriteRowsCsv(report, out);
  CHECK(out.str() ==
        "view,process,operation,resource,category,ns\r\n"
        "corrected,7,\"train, step\",CPU+GPU,CUDA API,10\r\n"
        "uncorrected,7,\"train, step\",CPU,Python,12\r\n");
  report.corrected = false;
  report.uncorrected_rows.clear();
  out.str("");
  WriteRowsCsv(report, out);
  CHECK(out.str() ==
        "view,process,operation,resource,category,ns\r\nuncorrected,7,\"train, step\",CPU+GPU,CUDA API,10\r\n");
}

TEST_CASE("Folded stacks merge CPU and CPU+GPU rows, add the Python line, leave GPU rows out", "[export]") {
  RunReport report;
  ProcessReport process;
  process.pid = 7;
  process.argv = {"/usr/bin/python3", "train.py"};
  process.located_rows = {{"a;b", "", 0, Resource::kCpu, Category::kPython, 5},
                          {"a;b", "", 0, Resource::kCpuGpu, Category::kPython, 6},
                          {"a;b", "step (t.py:3)", 7, Resource::kCpu, Category::kCudaApi, 4},
                          {"a;b", "step (t.py:3)", 7, Resource::kCpuGpu, Category::kCudaApi, 2},
                          {"a;b", "step (t.py:3)", 9, Resource::kCpu, Category::kCudaApi, 1},
                          {"a;b", "", 0, Resource::kGpu, Category::kGpuKernel, 100}};
  report.processes.push_back(process);
  process.pid = 8;
  process.argv.clear();
  process.located_rows = {{"(none)", "", 0, Resource::kCpu, Category::kNative, 3}};
  report.processes.push_back(process);
  std::ostringstream out;
  WriteFoldedStacks(report, out);
  CHECK(out.str() ==
        "python3 (pid 7);a:b;CUDA API;step (t.py:7) 6\n"
        "python3 (pid 7);a:b;CUDA API;step (t.py:9) 1\n"
        "python3 (pid 7);a:b;Python 11\n"
        "pid 8;(none);Native 3\n");
  CHECK(FoldedFrame("x\ny;z") == "x y:z");
}

TEST_CASE("Line frames put the calling line in place of the first line", "[export]") {
  CHECK(LineFrame("Agent.act (agent.py:10)", 14) == "Agent.act (agent.py:14)");
  CHECK(LineFrame("<module> (/a:b/c.py:1)", 2) == "<module> (/a:b/c.py:2)");
  CHECK(LineFrame("odd", 3) == "odd line 3");
  CHECK(LineFrame("f (x.py:)", 3) == "f (x.py:) line 3");
}

TEST_CASE("JSON strings and microseconds are formatted exactly", "[export]") {
  CHECK(JsonString("a\"b\\c\n\x01") == "\"a\\\"b\\\\c\\n\\u0001\"");
  CHECK(JsonString("caf\xc3\xa9") == "\"caf\xc3\xa9\"");
  CHECK(JsonString("bad\xff") == "\"bad\\ufffd\"");
  CHECK(JsonString("cut\xc3") == "\"cut\\ufffd\"");
  CHECK(ChromeMicros(0) == "0.000");
  CHECK(ChromeMicros(1234567) == "1234.567");
  CHECK(ChromeMicros(5) == "0.005");
  CHECK(ChromeMicros(-1500) == "-1.500");
}

TEST_CASE("Chrome trace of a hand-made timeline", "[export]") {
  NameTable names;
  names.Intern("(none)");
  const int32_t step = names.Intern("step \"1\"");
  const int32_t where = names.Intern("train (t.py:3)");
  const int32_t kernel = names.Intern("gemm<float>");
  const int32_t api = names.Intern("cudaLaunchKernel");
  ProcessTimeline process;
  process.pid = 42;
  process.argv = {"/bin/client"};
  process.begin_ns = 1000;
  process.end_ns = 100000;
  ThreadTimeline thread;
  thread.tid = 42;
  thread.name = "main";
  thread.operations = {{2000, 9000, step}};
  thread.cpu_events = {{3000, 4000, static_cast<int32_t>(Category::kBackend)},
                       {3100, 3500, static_cast<int32_t>(Category::kCudaApi)}};
  thread.native_calls = {{3000, 4000, Category::kBackend, where, 7}};
  thread.gpu_launches = {{3100, 77, false, api}, {3200, 78, false, api}};
  process.threads.push_back(thread);
  thread.tid = 42;  // Reused tid: a synthetic one.
  thread.name = "";
  thread.operations.clear();
  thread.cpu_events.clear();
  thread.native_calls.clear();
  thread.gpu_launches.clear();
  process.threads.push_back(thread);
  GpuActivity activity;
  activity.begin_ns = 5000;
  activity.end_ns = 6001;
  activity.device = 1;
  activity.stream = 9;
  activity.correlation_id = 77;
  activity.name = kernel;
  process.gpu_activities.push_back(activity);
  activity.correlation_id = 99;  // No launch seen: no flow.
  activity.begin_ns = 7000;
  activity.end_ns = 8001;
  process.gpu_activities.push_back(activity);

  std::ostringstream out;
  WriteChromeTrace({process}, names, out);
  const nlohmann::json trace = nlohmann::json::parse(out.str());
  CHECK(trace["otherData"]["clock_base_ns"] == 1000);
  std::map<std::string, nlohmann::json> by_name;
  std::vector<nlohmann::json> flows;
  for (const nlohmann::json& event : trace["traceEvents"]) {
    if (event["ph"] == "s" || event["ph"] == "f") {
      flows.push_back(event);
    } else {
      by_name[event["ph"] == "M" ? event["args"]["name"].get<std::string>() : event["name"].get<std::string>()] = event;
    }
  }
  CHECK(by_name.at("client (pid 42)")["name"] == "process_name");
  CHECK(by_name.at("main")["tid"] == 42);
  CHECK(by_name.at("thread 42 (tid 42, again)")["tid"] == 1000000000);
  const nlohmann::json& track = by_name.at("GPU 1 stream 9");
  CHECK(track["tid"] == 2000000000);
  CHECK(track["pid"] == 42);

  const nlohmann::json& op = by_name.at("step \"1\"");
  CHECK(op["ph"] == "X");
  CHECK(op["cat"] == "operation");
  CHECK(op["ts"].get<double>() == Approx(1.0));
  CHECK(op["dur"].get<double>() == Approx(7.0));
  const nlohmann::json& call = by_name.at("train (t.py:3)");
  CHECK(call["cat"] == "Backend");
  CHECK(call["args"]["line"] == 7);
  CHECK(by_name.at("CUDA API")["dur"].get<double>() == Approx(0.4));
  const nlohmann::json& gemm = by_name.at("gemm<float>");
  CHECK(gemm["cat"] == "Kernel");
  CHECK(gemm["tid"] == 2000000000);
  CHECK(gemm["dur"].get<double>() == Approx(1.001));

  REQUIRE(flows.size() == 2);
  CHECK(flows[0]["ph"] == "s");
  CHECK(flows[0]["tid"] == 42);
  CHECK(flows[0]["ts"].get<double>() == Approx(2.1));
  CHECK(flows[1]["ph"] == "f");
  CHECK(flows[1]["bp"] == "e");
  CHECK(flows[1]["tid"] == 2000000000);
  CHECK(flows[1]["ts"].get<double>() == Approx(4.0));
  CHECK(flows[0]["id"] == flows[1]["id"]);
  CHECK(flows[1]["args"]["correlation_id"] == 77);
}
