#include "report/protobuf_writer.h"

namespace rlscope::report {

void AppendVarint(uint64_t value, std::string& out) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void ProtobufWriter::Uint64(uint32_t field, uint64_t value) {
  Tag(field, kVarint);
  AppendVarint(value, bytes_);
}

void ProtobufWriter::Int64(uint32_t field, int64_t value) {
  // Two's complement, sign-extended to 64 bits: what protobuf's int32 and
  // int64 put on the wire.
  Uint64(field, static_cast<uint64_t>(value));
}

void ProtobufWriter::Fixed64(uint32_t field, uint64_t value) {
  Tag(field, kFixed64);
  for (int i = 0; i < 8; ++i) bytes_ += static_cast<char>((value >> (8 * i)) & 0xFF);  // Little-endian.
}

void ProtobufWriter::String(uint32_t field, std::string_view value) {
  Tag(field, kLengthDelimited);
  AppendVarint(value.size(), bytes_);
  bytes_.append(value);
}

}  // namespace rlscope::report
