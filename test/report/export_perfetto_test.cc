#include "report/export_perfetto.h"

#include <catch2/catch.hpp>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace rlscope::report;

namespace {

// A minimal wire-format reader, enough to check what the exporter wrote.
struct Field {
  uint32_t number = 0;
  uint64_t value = 0;  // Varint or fixed64.
  std::string bytes;   // Length-delimited.
};

uint64_t ReadVarint(const std::string& data, size_t& at) {
  uint64_t value = 0;
  for (int shift = 0; at < data.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(data[at++]);
    value |= uint64_t{byte & 0x7Fu} << shift;
    if (byte < 0x80) break;
  }
  return value;
}

std::vector<Field> Decode(const std::string& data) {
  std::vector<Field> fields;
  size_t at = 0;
  while (at < data.size()) {
    const uint64_t tag = ReadVarint(data, at);
    Field field{static_cast<uint32_t>(tag >> 3)};
    switch (tag & 7) {
      case 0: field.value = ReadVarint(data, at); break;
      case 1:
        for (int i = 0; i < 8; ++i) field.value |= uint64_t{static_cast<unsigned char>(data[at + i])} << (8 * i);
        at += 8;
        break;
      case 2: {
        const uint64_t length = ReadVarint(data, at);
        field.bytes = data.substr(at, length);
        at += length;
        break;
      }
      default: FAIL("unexpected wire type " << (tag & 7)); return fields;
    }
    fields.push_back(std::move(field));
  }
  return fields;
}

const Field* Find(const std::vector<Field>& fields, uint32_t number) {
  for (const Field& field : fields) {
    if (field.number == number) return &field;
  }
  return nullptr;
}

std::vector<uint64_t> Values(const std::vector<Field>& fields, uint32_t number) {
  std::vector<uint64_t> values;
  for (const Field& field : fields) {
    if (field.number == number) values.push_back(field.value);
  }
  return values;
}

struct Event {
  uint64_t timestamp = 0;
  uint64_t type = 0;
  std::string name;
  std::string category;
  std::vector<uint64_t> flow_ids;
  std::vector<uint64_t> terminating_flow_ids;
  std::map<std::string, Field> args;
};

}  // namespace

TEST_CASE("Slices that overlap without nesting are cut to their parent", "[perfetto]") {
  // Sources 0..3: "inner", "outer", "after", "first".
  std::vector<TrackSlice> slices;
  uint32_t source = 0;
  for (const auto& [begin, end] : {std::pair{5, 15}, {0, 10}, {10, 12}, {0, 3}}) {
    slices.push_back({.begin_ns = begin, .end_ns = end, .source = source++});
  }
  CHECK(NestSlices(slices) == 1);
  REQUIRE(slices.size() == 4);
  CHECK(slices[0].source == 1);  // "outer"
  CHECK(!slices[0].clipped);
  CHECK(slices[1].source == 3);  // "first"
  CHECK(slices[2].source == 0);  // "inner", cut to "outer"'s end.
  CHECK(slices[2].end_ns == 10);
  CHECK(slices[2].clipped);
  CHECK(slices[3].source == 2);  // "after" begins where "outer" ends: not inside it.
  CHECK(slices[3].end_ns == 12);
  CHECK(!slices[3].clipped);
}

TEST_CASE("Perfetto trace of a hand-made timeline", "[perfetto]") {
  NameTable names;
  names.Intern("(none)");
  const int32_t step = names.Intern("step");
  const int32_t where = names.Intern("train (t.py:3)");
  const int32_t kernel = names.Intern("gemm<float>");
  const int32_t api = names.Intern("cudaLaunchKernel");
  ProcessTimeline process;
  process.pid = 42;
  process.argv = {"/bin/client", "--steps"};
  process.begin_ns = 1000;
  process.end_ns = 100000;
  ThreadTimeline thread;
  thread.tid = 42;
  thread.name = "main";
  thread.operations = {{2000, 9000, step}};
  thread.cpu_events = {{3000, 4000, static_cast<int32_t>(Category::kBackend)},
                       {3100, 3500, static_cast<int32_t>(Category::kCudaApi)}};
  thread.native_calls = {{3000, 4000, Category::kBackend, where, 7}};
  thread.gpu_launches = {{3100, 77, false, api}, {9500, 79, false, api}};
  process.threads.push_back(thread);
  ThreadTimeline reused;
  reused.tid = 42;
  process.threads.push_back(reused);
  GpuActivity activity;
  activity.begin_ns = 5000;
  activity.end_ns = 6001;
  activity.device = 1;
  activity.stream = 9;
  activity.correlation_id = 77;
  activity.name = kernel;
  process.gpu_activities.push_back(activity);
  activity.correlation_id = 79;  // Launched outside any CPU slice: an instant starts the flow.
  activity.begin_ns = 9600;
  activity.end_ns = 9700;
  process.gpu_activities.push_back(activity);
  activity.correlation_id = 99;  // No launch seen: no flow.
  activity.begin_ns = 9800;
  activity.end_ns = 9900;
  process.gpu_activities.push_back(activity);

  std::ostringstream out;
  WritePerfettoTrace({process}, names, out);
  const std::vector<Field> trace = Decode(out.str());
  REQUIRE(!trace.empty());

  std::map<uint64_t, std::string> interned_names, interned_categories, interned_args;
  std::map<uint64_t, std::vector<Field>> tracks;  // uuid -> TrackDescriptor fields.
  std::map<uint64_t, std::vector<Event>> events;  // track uuid -> events.
  bool first = true;
  for (const Field& packet_field : trace) {
    REQUIRE(packet_field.number == 1);
    const std::vector<Field> packet = Decode(packet_field.bytes);
    REQUIRE(Find(packet, 10) != nullptr);
    CHECK(Find(packet, 10)->value == 1);
    if (first) CHECK(Find(packet, 13)->value == 1);
    first = false;
    if (const Field* interned = Find(packet, 12)) {
      for (const Field& entry : Decode(interned->bytes)) {
        const std::vector<Field> fields = Decode(entry.bytes);
        auto& table = entry.number == 1 ? interned_categories : entry.number == 2 ? interned_names : interned_args;
        CHECK(table.emplace(Find(fields, 1)->value, Find(fields, 2)->bytes).second);
      }
    }
    if (const Field* descriptor = Find(packet, 60)) {
      const std::vector<Field> fields = Decode(descriptor->bytes);
      tracks[Find(fields, 1)->value] = fields;
    }
    if (const Field* track_event = Find(packet, 11)) {
      const std::vector<Field> fields = Decode(track_event->bytes);
      Event event;
      event.timestamp = Find(packet, 8)->value;
      event.type = Find(fields, 9)->value;
      if (const Field* name = Find(fields, 10)) event.name = interned_names.at(name->value);
      if (const Field* category = Find(fields, 3)) event.category = interned_categories.at(category->value);
      event.flow_ids = Values(fields, 47);
      event.terminating_flow_ids = Values(fields, 48);
      for (const Field& annotation : fields) {
        if (annotation.number != 4) continue;
        const std::vector<Field> arg = Decode(annotation.bytes);
        event.args[interned_args.at(Find(arg, 1)->value)] = arg.back();
      }
      REQUIRE(tracks.count(Find(fields, 11)->value) == 1);  // Described before use.
      events[Find(fields, 11)->value].push_back(event);
    }
  }

  std::map<std::string, uint64_t> by_name;  // Track name -> uuid.
  uint64_t process_uuid = 0;
  for (const auto& [uuid, fields] : tracks) {
    if (const Field* process_field = Find(fields, 3)) {
      const std::vector<Field> descriptor = Decode(process_field->bytes);
      CHECK(Find(descriptor, 1)->value == 42);
      CHECK(Find(descriptor, 6)->bytes == "client");
      process_uuid = uuid;
    } else if (const Field* thread_field = Find(fields, 4)) {
      const std::vector<Field> descriptor = Decode(thread_field->bytes);
      by_name[Find(descriptor, 5)->bytes] = uuid;
      CHECK(Find(descriptor, 1)->value == 42);
      CHECK(Find(descriptor, 2)->value == (Find(descriptor, 5)->bytes == "main" ? 42u : 1000000000u));
    } else {
      by_name[Find(fields, 2)->bytes] = uuid;
    }
  }
  REQUIRE(process_uuid != 0);
  REQUIRE(by_name.count("main") == 1);
  REQUIRE(by_name.count("thread 42 (tid 42, again)") == 1);
  REQUIRE(by_name.count("main 42 CPU categories") == 1);
  REQUIRE(by_name.count("GPU 1 stream 9") == 1);
  CHECK(Find(tracks[by_name["GPU 1 stream 9"]], 5)->value == process_uuid);
  CHECK(Find(tracks[by_name["main 42 CPU categories"]], 5)->value == by_name["main"]);

  const std::vector<Event>& operations = events[by_name["main"]];
  REQUIRE(operations.size() == 2);
  CHECK(operations[0].name == "step");
  CHECK(operations[0].category == "operation");
  CHECK(operations[0].timestamp == 2000);
  CHECK(operations[1].type == 2);
  CHECK(operations[1].timestamp == 9000);

  const std::vector<Event>& cpu = events[by_name["main 42 CPU categories"]];
  REQUIRE(cpu.size() == 5);  // Backend, CUDA API (begin, end each) and one launch instant.
  CHECK(cpu[0].name == "train (t.py:3)");
  CHECK(cpu[0].category == "Backend");
  CHECK(cpu[0].args.at("line").value == 7);
  CHECK(cpu[0].args.at("location").bytes == "train (t.py:3)");
  CHECK(cpu[1].name == "CUDA API");
  CHECK(cpu[1].flow_ids == std::vector<uint64_t>{1});
  CHECK(cpu[2].timestamp == 3500);
  CHECK(cpu[3].timestamp == 4000);
  CHECK(cpu[4].type == 3);
  CHECK(cpu[4].name == "cudaLaunchKernel");
  CHECK(cpu[4].timestamp == 9500);
  CHECK(cpu[4].flow_ids == std::vector<uint64_t>{2});

  const std::vector<Event>& gpu = events[by_name["GPU 1 stream 9"]];
  REQUIRE(gpu.size() == 6);
  CHECK(gpu[0].name == "gemm<float>");
  CHECK(gpu[0].category == "Kernel");
  CHECK(gpu[0].args.at("correlation_id").value == 77);
  CHECK(gpu[0].terminating_flow_ids == std::vector<uint64_t>{1});
  CHECK(gpu[2].terminating_flow_ids == std::vector<uint64_t>{2});
  CHECK(gpu[4].terminating_flow_ids.empty());
  CHECK(gpu[5].timestamp == 9900);
}
