// ProtobufWriter: a minimal protocol buffers wire-format encoder, enough to
// write Perfetto traces (export_perfetto.h) without a protobuf library.
//
// A message is built in memory, field by field, in the order the caller
// writes them; a nested message is built by its own writer and appended
// whole (its length must be known before its bytes). Only what we emit is
// supported: varint (uint32/uint64/int32/int64/bool/enum), fixed64 and
// length-delimited (string, bytes, nested message). int32/int64 values are
// encoded as protobuf does (a negative one takes 10 bytes), not zigzag.
#ifndef RLSCOPE_REPORT_PROTOBUF_WRITER_H_
#define RLSCOPE_REPORT_PROTOBUF_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace rlscope::report {

// AppendVarint: appends `value` as a base-128 varint (1 to 10 bytes).
void AppendVarint(uint64_t value, std::string& out);

class ProtobufWriter {
 public:
  void Uint64(uint32_t field, uint64_t value);
  void Int64(uint32_t field, int64_t value);  // Also int32 and enums.
  void Bool(uint32_t field, bool value) { Uint64(field, value ? 1 : 0); }
  void Fixed64(uint32_t field, uint64_t value);
  void String(uint32_t field, std::string_view value);  // Also bytes.
  void Message(uint32_t field, const ProtobufWriter& nested) { String(field, nested.bytes()); }

  const std::string& bytes() const { return bytes_; }
  bool empty() const { return bytes_.empty(); }
  void Clear() { bytes_.clear(); }

 private:
  enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2 };
  void Tag(uint32_t field, WireType type) { AppendVarint((uint64_t{field} << 3) | type, bytes_); }

  std::string bytes_;
};

}  // namespace rlscope::report

#endif  // RLSCOPE_REPORT_PROTOBUF_WRITER_H_
