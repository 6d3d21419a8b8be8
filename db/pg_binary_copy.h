// PgBinaryCopy: rows in COPY's binary format (PostgreSQL's "COPY", File Formats), for
// PgConnection::CopyIn with "... FROM STDIN (FORMAT binary)": a signature and two zero words, then
// per row its field count and each field as (length, big-endian bytes), then -1. Each field must
// have its column's exact type (int8 for BIGINT, float8 for DOUBLE PRECISION ...): the server
// reads the bytes as that type. db-internal: only db/pg_*.cc and db/store_copy*.cc include this.
// Thread-safety: a plain value type.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

namespace mculab::db {

class PgBinaryCopy {
 public:
  PgBinaryCopy() { data_.append("PGCOPY\n\377\r\n\0", 11).append(8, '\0'); }
  void Row(std::int16_t fields) { Put(static_cast<std::uint16_t>(fields), 2); }
  void Int8(std::int64_t v) { Field(static_cast<std::uint64_t>(v), 8); }
  void Int4(std::int32_t v) { Field(static_cast<std::uint32_t>(v), 4); }
  void Int2(std::int16_t v) { Field(static_cast<std::uint16_t>(v), 2); }
  void Float8(double v) { Field(std::bit_cast<std::uint64_t>(v), 8); }
  void Float4(float v) { Field(std::bit_cast<std::uint32_t>(v), 4); }
  void Text(std::string_view v) {  // UTF-8, as the connection's client encoding
    Put(v.size(), 4);
    data_.append(v);
  }
  void Null() { Put(0xffffffff, 4); }  // SQL NULL: length -1, no bytes
  std::size_t size() const { return data_.size(); }
  std::string_view Finish() {
    Put(0xffff, 2);
    return data_;
  }

 private:
  void Field(std::uint64_t v, int bytes) {
    Put(static_cast<std::uint64_t>(bytes), 4);
    Put(v, bytes);
  }
  void Put(std::uint64_t v, int bytes) {
    for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8) {
      data_ += static_cast<char>((v >> shift) & 0xff);
    }
  }
  std::string data_;
};

}  // namespace mculab::db
