// SettledCheck (format/settled_check.h): a stream's settled claims
// against the events of the batches after them, on streams made with the
// preload's own encoder.
#include "format/settled_check.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "format/wire_format.h"
#include "preload/batch_encoder.h"

namespace {

using rlscope::collector::SettledCheck;
using rlscope::preload::BatchEncoder;
namespace wire = rlscope::wire;

struct ThreadBatch {
  uint64_t instance;
  std::vector<std::pair<int64_t, wire::EventKind>> events;  // Begin, kind.
};

// One batch of `threads` (tid = instance), claiming `settled_ns` (0: no
// claim) with `own` (instance, settled_ns) entries, fed to `check`.
void Feed(SettledCheck& check, uint64_t sequence, std::initializer_list<ThreadBatch> threads, int64_t settled_ns = 0,
          std::vector<BatchEncoder::SettledThread> own = {}) {
  BatchEncoder encoder;
  encoder.BeginBatch(sequence, 0);
  for (const ThreadBatch& thread : threads) {
    encoder.AddThreadEvents(static_cast<uint32_t>(thread.instance), thread.instance,
                            static_cast<uint32_t>(thread.events.size()), 0, {}, [&](wire::Event* out) {
                              for (size_t i = 0; i < thread.events.size(); ++i) {
                                const auto [begin, kind] = thread.events[i];
                                out[i] = wire::Event(begin, begin + 10, 0, static_cast<uint16_t>(kind), 0, 0);
                              }
                            });
  }
  if (settled_ns != 0) encoder.AddSettled(settled_ns, own);
  const BatchEncoder::Frame bytes = encoder.FinishBatch();
  // Size-prefixed: the frame follows its 4-byte length.
  check.Visit(*wire::GetFrame(bytes.data() + sizeof(uint32_t)));
}

constexpr wire::EventKind kCall = wire::EventKind::kPythonCall;

}  // namespace

TEST_CASE("Events after a claim that begin at or after it keep it", "[settled_check]") {
  SettledCheck check;
  Feed(check, 1, {{1, {{500, kCall}, {900, kCall}}}}, 1000);
  Feed(check, 2, {{1, {{1000, kCall}, {1500, kCall}}}, {2, {{1200, kCall}}}}, 2000);
  CHECK(check.claims() == 2);
  CHECK(check.checked() == 3);  // The first batch's events come before any claim.
  CHECK(check.violations() == 0);
  CHECK(check.first_violation().empty());
}

TEST_CASE("An event of a later batch that begins before the claim breaks it", "[settled_check]") {
  SettledCheck check;
  Feed(check, 1, {{1, {{500, kCall}}}}, 1000);
  Feed(check, 2, {{1, {{999, kCall}, {1100, kCall}}}});
  CHECK(check.checked() == 2);
  CHECK(check.violations() == 1);
  CHECK(check.first_violation().find("begins at 999 ns, 1 ns before the settled time 1000") != std::string::npos);
}

TEST_CASE("A thread held back by an open call has its own, earlier claim", "[settled_check]") {
  SettledCheck check;
  // Thread 1 is inside a call begun at 700: settled up to 600 only.
  Feed(check, 1, {{1, {}}, {2, {{500, kCall}}}}, 1000, {{1, 1, 600}});
  Feed(check, 2, {{1, {{700, kCall}}}, {2, {{900, kCall}}}});
  CHECK(check.checked() == 2);
  CHECK(check.violations() == 1);  // Thread 2's, not thread 1's.
  CHECK(check.first_violation().find("thread 2") != std::string::npos);
}

TEST_CASE("A thread's own claim does not take back what an earlier batch said of it", "[settled_check]") {
  SettledCheck check;
  Feed(check, 1, {{1, {{100, kCall}}}}, 1000);
  Feed(check, 2, {{1, {{1200, kCall}}}}, 2000, {{1, 1, 500}});
  Feed(check, 3, {{1, {{900, kCall}, {1000, kCall}}}});
  CHECK(check.violations() == 1);  // 900 is before the first batch's 1000.
  // Once no longer listed, the thread is settled up to the batches' claims.
  Feed(check, 4, {{1, {{2500, kCall}}}}, 3000);
  Feed(check, 5, {{1, {{2999, kCall}}}});
  CHECK(check.violations() == 2);
}

TEST_CASE("Thread births and stack-frame records are outside the claim", "[settled_check]") {
  SettledCheck check;
  Feed(check, 1, {{1, {{500, kCall}}}}, 1000);
  Feed(check, 2,
       {{2, {{10, wire::EventKind::kThreadBegin}, {20, wire::EventKind::kNativeStackFrames}, {1000, kCall}}}});
  CHECK(check.checked() == 1);
  CHECK(check.violations() == 0);
}

TEST_CASE("A stream without claims checks nothing", "[settled_check]") {
  SettledCheck check;
  Feed(check, 1, {{1, {{500, kCall}}}});
  Feed(check, 2, {{1, {{100, kCall}}}});
  CHECK(check.claims() == 0);
  CHECK(check.checked() == 0);
  CHECK(check.violations() == 0);
}
