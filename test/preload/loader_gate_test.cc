#include "preload/loader_gate.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

using rlscope::preload::IterateLoadedObjects;
using rlscope::preload::LoaderGate;

namespace {

int CountObjects(dl_phdr_info*, size_t, void* data) {
  ++*static_cast<int*>(data);
  return 0;
}

}  // namespace

TEST_CASE("A closed LoaderGate turns new entries away until it opens", "[loader_gate]") {
  LoaderGate::CloseForFork();  // Nobody inside: returns at once.
  std::atomic<bool> checked{false}, entered{false};
  std::thread other([&] {
    CHECK_FALSE(LoaderGate::TryEnter());
    checked = true;       // The gate opens only after this check, however late the thread starts.
    LoaderGate::Enter();  // Waits for the open below.
    entered = true;
    LoaderGate::Leave();
  });
  while (!checked.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // Most likely waiting in Enter by now.
  CHECK_FALSE(entered.load());
  LoaderGate::OpenAfterFork(false);
  other.join();
  CHECK(entered.load());
}

TEST_CASE("Closing the LoaderGate waits for the thread inside", "[loader_gate]") {
  std::atomic<bool> inside{false}, left{false};
  std::thread other([&] {
    LoaderGate::Enter();
    inside = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    left = true;
    LoaderGate::Leave();
  });
  while (!inside.load()) std::this_thread::yield();
  LoaderGate::CloseForFork();
  CHECK(left.load());  // Returned only once the other thread was out.
  LoaderGate::OpenAfterFork(false);
  other.join();
}

TEST_CASE("A thread inside the LoaderGate enters again without waiting, even while it closes", "[loader_gate]") {
  REQUIRE(LoaderGate::TryEnter());
  // fork() from a signal handler of a thread inside: the prepare handler
  // does not wait for the forking thread itself.
  LoaderGate::CloseForFork();
  CHECK(LoaderGate::TryEnter());  // Nested: never turned away.
  int objects = 0;
  IterateLoadedObjects(&CountObjects, &objects);
  CHECK(objects > 0);
  LoaderGate::Leave();
  LoaderGate::OpenAfterFork(false);
  LoaderGate::Leave();
  REQUIRE(LoaderGate::TryEnter());
  LoaderGate::Leave();
}

TEST_CASE("A fork child can use the loader though a thread was inside the gate", "[loader_gate]") {
  // What the preload's atfork handlers do, around a real fork().
  std::atomic<bool> inside{false}, stop{false};
  std::thread other([&] {
    while (!stop.load()) {
      int objects = 0;
      IterateLoadedObjects(&CountObjects, &objects);
      inside = true;
    }
  });
  while (!inside.load()) std::this_thread::yield();
  LoaderGate::CloseForFork();
  const pid_t pid = fork();
  if (pid == 0) {
    LoaderGate::OpenAfterFork(true);
    int objects = 0;
    IterateLoadedObjects(&CountObjects, &objects);  // Would hang on a held loader lock.
    _exit(objects > 0 ? 0 : 1);
  }
  LoaderGate::OpenAfterFork(false);
  stop = true;
  other.join();
  REQUIRE(pid > 0);
  int status = 0;
  // The child ends at once; a hang here shows as the test's timeout.
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
