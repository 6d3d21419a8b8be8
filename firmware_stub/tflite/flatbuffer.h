/* A bounds-checked flatbuffer reader (flatbuffers' binary format: little-endian scalars, tables
 * behind a signed offset to their vtable, forward unsigned offsets to tables, vectors and
 * strings). Every read is checked against the buffer's length before it happens, with 64-bit
 * arithmetic so no offset can wrap; the first failure sticks in the reader (fb_reader.status) and
 * later reads return zeros. Nothing here follows an offset more than once per call, so cyclic
 * offsets cannot loop. Private to the TFLite interpreter. */
#ifndef MCULAB_TFLITE_FLATBUFFER_H_
#define MCULAB_TFLITE_FLATBUFFER_H_

#include <stdint.h>

#include "mculab/tflite.h"

typedef struct {
  const uint8_t* b;
  uint32_t len;
  mculab_tfl_status status; /* the first failure */
  const char* why;          /* what it was, for the error message */
  uint64_t need;            /* a read past the end: the length it needed (a truncated file) */
} fb_reader;

typedef struct {
  uint32_t pos; /* the table's start */
  uint32_t vt;  /* its vtable's start */
  uint16_t vt_len, tbl_len;
} fb_table;

typedef struct {
  uint32_t pos; /* the first element */
  uint32_t count;
} fb_vec;

static inline uint16_t fb_u16_at(const uint8_t* p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t fb_u32_at(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline void fb_fail(fb_reader* r, mculab_tfl_status st, const char* why) {
  if (r->status == MCULAB_TFL_OK) {
    r->status = st;
    r->why = why;
  }
}

/* A read that needed the buffer to be `need` bytes long failed. */
static inline void fb_fail_past(fb_reader* r, const char* why, uint64_t need) {
  if (r->status == MCULAB_TFL_OK) r->need = need;
  fb_fail(r, MCULAB_TFL_OUT_OF_BOUNDS, why);
}

/* The table at `pos`: its vtable must lie in the buffer and the table's inline part too. */
static inline int fb_table_at(fb_reader* r, uint32_t pos, fb_table* t) {
  t->pos = t->vt = 0;
  t->vt_len = t->tbl_len = 0;
  if (r->status != MCULAB_TFL_OK) return 0;
  if ((uint64_t)pos + 4 > r->len) {
    fb_fail_past(r, "a table lies past the end of the model", (uint64_t)pos + 4);
    return 0;
  }
  const int64_t vt = (int64_t)pos - (int32_t)fb_u32_at(r->b + pos);
  if (vt < 0 || vt + 4 > (int64_t)r->len) {
    fb_fail_past(r, "a vtable lies outside the model", vt < 0 ? 0 : (uint64_t)vt + 4);
    return 0;
  }
  const uint16_t vt_len = fb_u16_at(r->b + vt), tbl_len = fb_u16_at(r->b + vt + 2);
  if (vt_len < 4 || (vt_len & 1u) != 0 || vt + vt_len > (int64_t)r->len) {
    fb_fail_past(r, "a vtable's length is wrong",
                 vt_len < 4 || (vt_len & 1u) != 0 ? 0 : (uint64_t)vt + vt_len);
    return 0;
  }
  if (tbl_len < 4 || (uint64_t)pos + tbl_len > r->len) {
    fb_fail_past(r, "a table's length reaches past the end of the model",
                 tbl_len < 4 ? 0 : (uint64_t)pos + tbl_len);
    return 0;
  }
  t->pos = pos;
  t->vt = (uint32_t)vt;
  t->vt_len = vt_len;
  t->tbl_len = tbl_len;
  return 1;
}

/* Position of field `id` (`size` bytes) of `t`, or 0 when absent (or after a failure). */
static inline uint32_t fb_field(fb_reader* r, const fb_table* t, unsigned id, uint32_t size) {
  if (r->status != MCULAB_TFL_OK || t->tbl_len == 0) return 0;
  const uint32_t slot = 4u + 2u * id;
  if (slot + 2u > t->vt_len) return 0;
  const uint16_t off = fb_u16_at(r->b + t->vt + slot);
  if (off == 0) return 0;
  if ((uint32_t)off + size > t->tbl_len) {
    fb_fail(r, MCULAB_TFL_OUT_OF_BOUNDS, "a field lies outside its table");
    return 0;
  }
  return t->pos + off;
}

static inline uint8_t fb_u8(fb_reader* r, const fb_table* t, unsigned id, uint8_t def) {
  const uint32_t at = fb_field(r, t, id, 1);
  return at != 0 ? r->b[at] : def;
}
static inline uint32_t fb_u32(fb_reader* r, const fb_table* t, unsigned id, uint32_t def) {
  const uint32_t at = fb_field(r, t, id, 4);
  return at != 0 ? fb_u32_at(r->b + at) : def;
}
static inline int32_t fb_i32(fb_reader* r, const fb_table* t, unsigned id, int32_t def) {
  return (int32_t)fb_u32(r, t, id, (uint32_t)def);
}
static inline float fb_f32(fb_reader* r, const fb_table* t, unsigned id, float def) {
  const uint32_t at = fb_field(r, t, id, 4);
  if (at == 0) return def;
  const uint32_t bits = fb_u32_at(r->b + at);
  float f;
  __builtin_memcpy(&f, &bits, sizeof f);
  return f;
}

/* Follows the offset field `id`: the target's position, or 0 when absent or out of range. */
static inline uint32_t fb_ref(fb_reader* r, const fb_table* t, unsigned id) {
  const uint32_t at = fb_field(r, t, id, 4);
  if (at == 0) return 0;
  const uint64_t target = (uint64_t)at + fb_u32_at(r->b + at);
  if (target + 4 > r->len) {
    fb_fail_past(r, "an offset points past the end of the model", target + 4);
    return 0;
  }
  return (uint32_t)target;
}

/* The sub-table in field `id`; 0 when absent. */
static inline int fb_subtable(fb_reader* r, const fb_table* t, unsigned id, fb_table* out) {
  const uint32_t at = fb_ref(r, t, id);
  if (at == 0) {
    out->pos = out->vt = 0;
    out->vt_len = out->tbl_len = 0;
    return 0;
  }
  return fb_table_at(r, at, out);
}

/* The vector in field `id` of `elem_size`-byte elements (count 0 when absent); its elements must
 * lie in the buffer. */
static inline fb_vec fb_vector(fb_reader* r, const fb_table* t, unsigned id, uint32_t elem_size) {
  fb_vec v = {0, 0};
  const uint32_t at = fb_ref(r, t, id);
  if (at == 0) return v;
  const uint32_t count = fb_u32_at(r->b + at);
  if ((uint64_t)count * elem_size > (uint64_t)r->len - at - 4) {
    fb_fail_past(r, "a vector is longer than the model",
                 (uint64_t)at + 4 + (uint64_t)count * elem_size);
    return v;
  }
  v.pos = at + 4;
  v.count = count;
  return v;
}

static inline uint32_t fb_vec_u32(const fb_reader* r, fb_vec v, uint32_t i) {
  return fb_u32_at(r->b + v.pos + 4u * i);
}

/* Element i of a vector of tables. */
static inline int fb_vec_table(fb_reader* r, fb_vec v, uint32_t i, fb_table* out) {
  const uint32_t at = v.pos + 4u * i;
  const uint64_t target = (uint64_t)at + fb_u32_at(r->b + at);
  if (target > r->len) {
    fb_fail_past(r, "a table offset points past the end of the model", target + 4);
    out->tbl_len = 0;
    return 0;
  }
  return fb_table_at(r, (uint32_t)target, out);
}

#endif /* MCULAB_TFLITE_FLATBUFFER_H_ */
