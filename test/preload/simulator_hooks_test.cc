// SimulatorHooks end to end inside one process: GOT patching of the program
// and of libsimcaller_now (-fno-plt, RELRO), of libsimcaller_lazy dlopened
// later (lazy PLT), dlsym-style lookups, and the rules. The exported
// dlopen/dlsym interposer is not linked here; the end-to-end test covers it.
#include "preload/simulator_hooks.h"

#include <dlfcn.h>
#include <link.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../native/simtest.h"
#include "preload/elf_image.h"
#include "preload/recorder.h"
#include "preload/simulator_rules.h"
#include "preload/string_table.h"
#include "preload/trampoline.h"
#include "test/preload/fake_recorder.h"

using rlscope::preload::ElfImage;
using rlscope::preload::EventRecord;
using rlscope::preload::SimulatorHooks;
using rlscope::preload::SimulatorRules;
using rlscope::preload::StringTable;
using rlscope::preload::Trampolines;
using rlscope::wire::EventKind;

// libsimcaller_now.so, linked in: calls libsimtest with -fno-plt through a
// RELRO GOT.
extern "C" {
long simnow_int_args(long, long, long, long, long, long, long, long, long, long);
SimPair simnow_pair(long, long);
long double simnow_long_double(long double, long double);
double simnow_variadic2(long, double, long, double);
int simnow_busy_loop(int, long);
int simnow_add(int, int);
int simnow_unhooked(int);
void* simnow_address_of_add(void);
}

namespace {

constexpr const char* kTestRules = "*libsimtest*:simtest_*";

void InstallOnce() {
  rlscope::test::StartRecording();
  SimulatorHooks::Install(kTestRules);
}

std::vector<std::string> SimulatorCallNames() {
  std::vector<std::string> names;
  for (const EventRecord& record : rlscope::test::TakeRecords()) {
    if (record.kind == EventKind::kSimulatorCall) names.emplace_back(StringTable::Text(record.name_id));
  }
  return names;
}

std::string LibraryPath(const char* file) {
  Dl_info info{};
  REQUIRE(dladdr(reinterpret_cast<void*>(&simnow_add), &info) != 0);
  std::string path = info.dli_fname;
  return path.substr(0, path.rfind('/') + 1) + file;
}

struct Found {
  explicit Found(const char* needle) : needle(needle) {}
  const char* needle;
  uintptr_t base = 0;
  const ElfW(Phdr) * phdr = nullptr;
  int phnum = 0;
  std::string name;
};

int FindObject(dl_phdr_info* info, size_t, void* data) {
  auto* found = static_cast<Found*>(data);
  if (info->dlpi_name == nullptr || strstr(info->dlpi_name, found->needle) == nullptr) return 0;
  found->base = info->dlpi_addr;
  found->phdr = info->dlpi_phdr;
  found->phnum = info->dlpi_phnum;
  found->name = info->dlpi_name;
  return 1;
}

}  // namespace

TEST_CASE("Rules: defaults cover the simulators, globs match path and symbol", "[simulator_rules]") {
  SimulatorRules rules;
  rules.AddDefaults();
  CHECK(rules.size() == SimulatorRules::kDefaultCount + SimulatorRules::kBackendDefaultCount +
                            SimulatorRules::kCommunicationDefaultCount);
  CHECK(rules.Matches("/usr/lib/x86_64-linux-gnu/libmujoco.so.2.2.2", "mj_step"));
  CHECK(rules.Matches("/usr/lib/x86_64-linux-gnu/libmujoco.so.2.2.2", "mj_step2"));
  CHECK(rules.Matches("/usr/lib/x86_64-linux-gnu/libmujoco.so.2.2.2", "mj_forward"));
  CHECK_FALSE(rules.Matches("/usr/lib/x86_64-linux-gnu/libmujoco.so.2.2.2", "mj_forwardSkip"));
  CHECK(rules.Matches("/usr/lib/x86_64-linux-gnu/libode.so.8", "dWorldQuickStep"));
  CHECK(rules.Matches("/usr/lib/x86_64-linux-gnu/libbox2d.so.2.3.0", "_ZN7b2World4StepEfii"));
  CHECK(rules.Matches("/usr/lib/libBulletDynamics.so.3.24", "_ZN23btDiscreteDynamicsWorld14stepSimulationEfif"));
  CHECK_FALSE(rules.Matches("/usr/lib/libother.so", "mj_step"));  // Right name, wrong library.
  CHECK_FALSE(rules.Matches("", "mj_step"));                      // The program is never the simulator.
  CHECK(rules.SymbolMayMatch("mj_resetData"));
  CHECK_FALSE(rules.SymbolMayMatch("malloc"));
  CHECK(rules.LibraryMatches("/opt/mujoco/lib/libmujoco.so"));
  CHECK_FALSE(rules.LibraryMatches("/usr/lib/libc.so.6"));
}

TEST_CASE("Rules: backend rules hook only the main program's own calls", "[simulator_rules]") {
  SimulatorRules rules;
  rules.AddDefaults();
  CHECK(rules.AddList("*libmybackend*:my_op_*", SimulatorRules::Kind::kBackend) == 1);
  const char* torch = "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13";
  const char* linear = "_ZN2at4_ops6linear4callERKNS_6TensorES4_RKN3c108optionalIS2_EE";
  CHECK(rules.Match(torch, linear, /*caller_is_program=*/true) == SimulatorRules::Kind::kBackend);
  CHECK(rules.Match(torch, linear, /*caller_is_program=*/false) == SimulatorRules::Kind::kNone);
  CHECK_FALSE(rules.Matches(torch, linear));  // Library-to-library calls: never.
  CHECK(rules.Match("/opt/libmybackend.so", "my_op_add", true) == SimulatorRules::Kind::kBackend);
  CHECK(rules.Match("/usr/lib/libmujoco.so", "mj_step", true) == SimulatorRules::Kind::kSimulator);
}

TEST_CASE("Rules: communication libraries' collectives are hooked from every object", "[simulator_rules]") {
  SimulatorRules rules;
  rules.AddDefaults();
  using Kind = SimulatorRules::Kind;
  const char* gloo = "/lib/libgloo.so.0";
  // gloo's collectives (free functions of their options struct) and its
  // rendezvous, called from libtorch (not the program): Communication.
  CHECK(rules.Match(gloo, "_ZN4gloo9allreduceERKNS_16AllreduceOptionsE", false) == Kind::kCommunication);
  CHECK(rules.Match(gloo, "_ZN4gloo7barrierERNS_14BarrierOptionsE", false) == Kind::kCommunication);
  CHECK(rules.Match(gloo, "_ZN4gloo10allgathervERNS_17AllgathervOptionsE", false) == Kind::kCommunication);
  CHECK(rules.Match(gloo,
                    "_ZN4gloo10rendezvous7Context15connectFullMeshERNS0_5StoreERSt10shared_ptrINS_9transport6DeviceEE",
                    false) == Kind::kCommunication);
  // Their setters and constructors are not collectives.
  CHECK(rules.Match(gloo, "_ZN4gloo17AllgathervOptions8setInputEPvmm", false) == Kind::kNone);
  CHECK(rules.Match(gloo, "_ZN4gloo14BarrierOptionsC1ERKSt10shared_ptrINS_7ContextEE", false) == Kind::kNone);
  // NCCL's and MPI's data-moving calls, not their queries (a watchdog
  // thread polls ncclCommGetAsyncError).
  const char* nccl = "/usr/lib/python3/site-packages/nvidia/nccl/lib/libnccl.so.2";
  for (const char* name : {"ncclAllReduce", "ncclAllGather", "ncclReduceScatter", "ncclBroadcast", "ncclSend",
                           "ncclRecv", "ncclGroupEnd", "ncclCommInitRank"}) {
    CHECK(rules.Match(nccl, name, false) == Kind::kCommunication);
  }
  CHECK(rules.Match(nccl, "ncclCommGetAsyncError", false) == Kind::kNone);
  CHECK(rules.Match(nccl, "ncclGetErrorString", false) == Kind::kNone);
  const char* mpi = "/usr/lib/x86_64-linux-gnu/libmpi.so.40";
  for (const char* name : {"MPI_Allreduce", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoallv", "MPI_Reduce",
                           "MPI_Reduce_scatter_block", "MPI_Bcast", "MPI_Barrier", "MPI_Wait", "MPI_Waitall"}) {
    CHECK(rules.Match(mpi, name, false) == Kind::kCommunication);
  }
  // Memory and local calls that share a collective's prefix are not.
  for (const char* name : {"MPI_Comm_rank", "MPI_Alloc_mem", "MPI_Reduce_local", "MPI_Allreduce_init"}) {
    CHECK(rules.Match(mpi, name, false) == Kind::kNone);
  }
  CHECK(rules.Match("/usr/lib/libother.so", "ncclAllReduce", false) == Kind::kNone);  // Right name, wrong library.
  CHECK(rules.HookedFromEveryObject(gloo));
  CHECK(rules.HookedFromEveryObject(nccl));
  CHECK_FALSE(rules.HookedFromEveryObject("/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13"));  // Backend only.
  // `--comm` adds a library of the user's.
  CHECK(rules.AddList("*libmyrpc*:rpc_call*", Kind::kCommunication) == 1);
  CHECK(rules.Match("/opt/libmyrpc.so", "rpc_call_sync", false) == Kind::kCommunication);
}

TEST_CASE("Rules: RLSCOPE_SIM entries are added; malformed ones are skipped", "[simulator_rules]") {
  SimulatorRules rules;
  CHECK(rules.AddList("*libsimtest*:simtest_*,nocolon,:empty_library,*lib*:,,*libx*:x_[ab]?") == 2);
  CHECK(rules.size() == 2);
  CHECK(std::string(rules.library_glob(0)) == "*libsimtest*");
  CHECK(std::string(rules.symbol_glob(0)) == "simtest_*");
  CHECK(rules.Matches("/build/test/native/libsimtest.so", "simtest_add"));
  CHECK(rules.Matches("/lib/libx.so", "x_a1"));  // Bracket expressions work (no literal shortcut).
  CHECK_FALSE(rules.Matches("/lib/libx.so", "x_c1"));
  CHECK(rules.AddList(nullptr) == 0);
  CHECK(rules.AddList(" *liby*:y_step , *libz*:z_step") == 2);  // Spaces around entries are dropped.
  CHECK(rules.Matches("/lib/liby.so", "y_step"));
  CHECK(rules.Matches("/lib/libz.so", "z_step"));
  SimulatorRules full;
  std::string many;
  for (int i = 0; i < SimulatorRules::kMaxRules + 3; ++i) many += "*lib*:f" + std::to_string(i) + ",";
  CHECK(full.AddList(many.c_str()) == SimulatorRules::kMaxRules);
}

TEST_CASE("ElfImage finds definitions as dlsym does", "[elf_image]") {
  Found simtest("libsimtest");
  dl_iterate_phdr(&FindObject, &simtest);
  REQUIRE(simtest.base != 0);
  const ElfImage image(simtest.base, simtest.phdr, simtest.phnum, simtest.name.c_str());
  REQUIRE(image.valid());
  void* handle = dlopen(simtest.name.c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(handle != nullptr);
  for (const char* name : {"simtest_add", "simtest_variadic", "simtest_busy_wait_ns", "simother_unhooked"}) {
    CHECK(image.Definition(name) == reinterpret_cast<uintptr_t>(dlsym(handle, name)));
  }
  CHECK(image.Definition("no_such_function") == 0);
  CHECK(image.Definition("malloc") == 0);  // Imported, not defined here.
  dlclose(handle);
  // Versioned: libc defines dlsym@GLIBC_2.2.5 and dlsym@@GLIBC_2.34.
  Found libc("libc.so");
  dl_iterate_phdr(&FindObject, &libc);
  REQUIRE(libc.base != 0);
  const ElfImage libc_image(libc.base, libc.phdr, libc.phnum, libc.name.c_str());
  CHECK(libc_image.Definition("dlsym") == reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, "dlsym")));
}

TEST_CASE("Install routes PLT and -fno-plt RELRO GOT calls through trampolines", "[simulator_hooks]") {
  InstallOnce();
  CHECK(SimulatorHooks::Installed());
  CHECK(SimulatorHooks::PatchedSlots() > 0);
  SimulatorCallNames();
  // The program's own PLT call, then libsimcaller_now's GOT calls.
  CHECK(simtest_add(2, 40) == 42);
  CHECK(simnow_add(1, 2) == 3);
  CHECK(simnow_int_args(1, -2, 3, -4, 5, -6, 7, -8, 9, -10) ==
        reinterpret_cast<decltype(&simtest_int_args)>(
            Trampolines::TargetOf(reinterpret_cast<void*>(&simtest_int_args)))(1, -2, 3, -4, 5, -6, 7, -8, 9, -10));
  CHECK(simnow_busy_loop(3, 100'000) == 3);
  CHECK(simnow_unhooked(20) == 41);  // Outside the rules: no record.
  const std::vector<std::string> expected = {"simtest_add",          "simtest_add",          "simtest_int_args",
                                             "simtest_busy_wait_ns", "simtest_busy_wait_ns", "simtest_busy_wait_ns"};
  CHECK(SimulatorCallNames() == expected);
}

TEST_CASE("Hooked GOT calls return every result shape bit-exact", "[simulator_hooks]") {
  InstallOnce();
  // The real functions, behind the stubs the program's GOT now holds.
  auto real_pair =
      reinterpret_cast<decltype(&simtest_pair)>(Trampolines::TargetOf(reinterpret_cast<void*>(&simtest_pair)));
  auto real_long_double = reinterpret_cast<decltype(&simtest_long_double)>(
      Trampolines::TargetOf(reinterpret_cast<void*>(&simtest_long_double)));
  auto real_variadic =
      reinterpret_cast<decltype(&simtest_variadic)>(Trampolines::TargetOf(reinterpret_cast<void*>(&simtest_variadic)));
  REQUIRE(real_pair != nullptr);
  REQUIRE(real_long_double != nullptr);
  REQUIRE(real_variadic != nullptr);
  const SimPair pair = simnow_pair(77, -5), expected_pair = real_pair(77, -5);
  CHECK(memcmp(&pair, &expected_pair, sizeof(pair)) == 0);
  const long double extended = simnow_long_double(1.0L / 7.0L, 3.5L);
  const long double expected_extended = real_long_double(1.0L / 7.0L, 3.5L);
  CHECK(memcmp(&extended, &expected_extended, 10) == 0);
  const double variadic = simnow_variadic2(3, 0.5, 4, 0.25), expected_variadic = real_variadic(2, 3L, 0.5, 4L, 0.25);
  CHECK(memcmp(&variadic, &expected_variadic, sizeof(double)) == 0);
  CHECK(SimulatorCallNames().size() == 3);
}

TEST_CASE("A dlsym-style lookup gets the same trampoline as the GOT", "[simulator_hooks]") {
  InstallOnce();
  void* through_got = simnow_address_of_add();  // R_X86_64_GLOB_DAT, patched.
  REQUIRE(Trampolines::IsStub(through_got));
  void* real = Trampolines::TargetOf(through_got);
  CHECK(SimulatorHooks::ForLookup(real, "simtest_add") == through_got);
  CHECK(SimulatorHooks::ForLookup(through_got, "simtest_add") == through_got);
  // Not covered by a rule: handed back unchanged.
  void* handle = dlopen(LibraryPath("libsimtest.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(handle != nullptr);
  void* unhooked = dlsym(handle, "simother_unhooked");
  CHECK(SimulatorHooks::ForLookup(unhooked, "simother_unhooked") == unhooked);
  void* hooked = SimulatorHooks::ForLookup(dlsym(handle, "simtest_busy_wait_ns"), "simtest_busy_wait_ns");
  REQUIRE(Trampolines::IsStub(hooked));
  SimulatorCallNames();
  reinterpret_cast<void (*)(long)>(hooked)(1000);
  CHECK(SimulatorCallNames() == std::vector<std::string>{"simtest_busy_wait_ns"});
  dlclose(handle);
  // Something that is not a simulator library at all.
  void* libc_function = dlsym(RTLD_DEFAULT, "strlen");
  CHECK(SimulatorHooks::ForLookup(libc_function, "simtest_add") == libc_function);
}

TEST_CASE("A lazily bound library dlopened after Install is patched by Refresh", "[simulator_hooks]") {
  InstallOnce();
  void* handle = dlopen(LibraryPath("libsimcaller_lazy.so").c_str(), RTLD_LAZY | RTLD_LOCAL);
  REQUIRE(handle != nullptr);
  const int patched_before = SimulatorHooks::PatchedSlots();
  SimulatorHooks::Refresh();  // What the dlopen interposer does after the real dlopen.
  CHECK(SimulatorHooks::PatchedSlots() > patched_before);
  auto busy_loop = reinterpret_cast<int (*)(int, long)>(dlsym(handle, "simlazy_busy_loop"));
  auto int_args = reinterpret_cast<long (*)(long, long, long, long, long, long, long, long, long, long)>(
      dlsym(handle, "simlazy_int_args"));
  REQUIRE(busy_loop != nullptr);
  REQUIRE(int_args != nullptr);
  SimulatorCallNames();
  CHECK(busy_loop(2, 1000) == 2);
  CHECK(int_args(9, 8, 7, 6, 5, 4, 3, 2, 1, 0) == simnow_int_args(9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
  const std::vector<std::string> expected = {"simtest_busy_wait_ns", "simtest_busy_wait_ns", "simtest_int_args",
                                             "simtest_int_args"};
  CHECK(SimulatorCallNames() == expected);
  // Nothing new loaded: another refresh writes nothing.
  const int patched_after = SimulatorHooks::PatchedSlots();
  SimulatorHooks::Refresh();
  CHECK(SimulatorHooks::PatchedSlots() == patched_after);
  dlclose(handle);
}

TEST_CASE("Eight threads calling through patched GOTs record every call", "[simulator_hooks]") {
  InstallOnce();
  constexpr int kThreads = 8;
  constexpr int kCalls = 1000;
  std::vector<size_t> recorded(kThreads, 0);
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        if (simnow_add(t, i) != t + i) ++wrong[t];
        if (simtest_add(i, t) != t + i) ++wrong[t];
      }
      recorded[t] = SimulatorCallNames().size();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    CHECK(wrong[t] == 0);
    CHECK(recorded[t] == 2 * kCalls);
  }
}
