#include "report/protobuf_writer.h"

#include <catch2/catch.hpp>
#include <string>

using namespace rlscope::report;

namespace {

std::string Varint(uint64_t value) {
  std::string out;
  AppendVarint(value, out);
  return out;
}

}  // namespace

TEST_CASE("Varints take 1 to 10 bytes, low 7 bits first", "[protobuf]") {
  CHECK(Varint(0) == std::string("\x00", 1));
  CHECK(Varint(1) == "\x01");
  CHECK(Varint(127) == "\x7f");
  CHECK(Varint(128) == "\x80\x01");
  CHECK(Varint(300) == "\xac\x02");
  CHECK(Varint(16383) == "\xff\x7f");
  CHECK(Varint(16384) == "\x80\x80\x01");
  CHECK(Varint(0xFFFFFFFFu) == "\xff\xff\xff\xff\x0f");
  CHECK(Varint(UINT64_MAX) == "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01");
}

TEST_CASE("Fields carry their tag: field number and wire type", "[protobuf]") {
  ProtobufWriter message;
  message.Uint64(1, 150);
  CHECK(message.bytes() == "\x08\x96\x01");
  message.Clear();
  message.Uint64(16, 1);  // Field 16: a two-byte tag.
  CHECK(message.bytes() == "\x80\x01\x01");
  message.Clear();
  message.Bool(2, true);
  message.Bool(3, false);
  CHECK(message.bytes() == std::string("\x10\x01\x18\x00", 4));
}

TEST_CASE("Negative int32/int64 values are sign-extended to 10 bytes", "[protobuf]") {
  ProtobufWriter message;
  message.Int64(1, -1);
  CHECK(message.bytes() == "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01");
  message.Clear();
  message.Int64(1, -2);
  CHECK(message.bytes() == "\x08\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01");
}

TEST_CASE("Fixed64 is 8 bytes little-endian", "[protobuf]") {
  ProtobufWriter message;
  message.Fixed64(47, 0x0102030405060708ull);
  // Tag (47 << 3 | 1) = 377 = 0xF9 0x02.
  CHECK(message.bytes() == "\xf9\x02\x08\x07\x06\x05\x04\x03\x02\x01");
}

TEST_CASE("Strings and nested messages are length-delimited", "[protobuf]") {
  ProtobufWriter message;
  message.String(2, "testing");
  CHECK(message.bytes() == "\x12\x07testing");
  message.Clear();
  message.String(2, "");
  CHECK(message.bytes() == std::string("\x12\x00", 2));

  ProtobufWriter inner;
  inner.Uint64(1, 150);
  ProtobufWriter outer;
  outer.Message(3, inner);
  CHECK(outer.bytes() == "\x1a\x03\x08\x96\x01");

  // A nested message of 200 bytes: its length takes two bytes.
  ProtobufWriter big;
  big.String(1, std::string(197, 'x'));  // 1 tag + 2 length + 197 = 200 bytes.
  REQUIRE(big.bytes().size() == 200);
  ProtobufWriter holder;
  holder.Message(5, big);
  CHECK(holder.bytes().substr(0, 3) == "\x2a\xc8\x01");
  CHECK(holder.bytes().size() == 203);
  CHECK(holder.bytes().substr(3) == big.bytes());
}
