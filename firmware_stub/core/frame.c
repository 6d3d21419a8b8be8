/* Frame codec: COBS over [version][type][payload][CRC-32 LE]. See runner_protocol.h. */
#include "mculab/runner_protocol.h"

size_t mculab_frame_encode(uint8_t type, const uint8_t* payload, size_t payload_len, uint8_t* out,
                           size_t out_cap) {
  if (payload_len > MCULAB_MAX_PAYLOAD) return 0;
  /* Worst case: raw bytes + one code byte per 254 + the first code byte + the delimiter. */
  const size_t raw_len = 2u + payload_len + 4u;
  if (out == NULL || out_cap < raw_len + raw_len / 254u + 2u) return 0;

  uint8_t trailer[4];
  uint8_t head[2] = {(uint8_t)MCULAB_PROTOCOL_VERSION, type};
  uint32_t crc = mculab_crc32(0, head, 2);
  if (payload_len > 0) crc = mculab_crc32(crc, payload, payload_len);
  mculab_put_u32(trailer, crc);

  size_t code_at = 0; /* where the current block's code byte goes */
  size_t o = 1;
  uint8_t code = 1;
  for (size_t i = 0; i < raw_len; ++i) {
    uint8_t b;
    if (i < 2) {
      b = head[i];
    } else if (i < 2 + payload_len) {
      b = payload[i - 2];
    } else {
      b = trailer[i - 2 - payload_len];
    }
    if (b == 0) {
      out[code_at] = code;
      code_at = o++;
      code = 1;
    } else {
      out[o++] = b;
      if (++code == 0xFF) {
        out[code_at] = code;
        code_at = o++;
        code = 1;
      }
    }
  }
  out[code_at] = code;
  out[o++] = 0;
  return o;
}

mculab_frame_status mculab_frame_decode(const uint8_t* in, size_t in_len, uint8_t* type,
                                        uint8_t* payload, size_t* payload_len) {
  if (in_len == 0) return MCULAB_FRAME_EMPTY;
  uint8_t raw[MCULAB_MAX_RAW_FRAME];
  size_t n = 0;
  size_t i = 0;
  while (i < in_len) {
    const uint8_t code = in[i++];
    if (code == 0) return MCULAB_FRAME_BAD_COBS;
    for (uint8_t k = 1; k < code; ++k) {
      if (i >= in_len || in[i] == 0) return MCULAB_FRAME_BAD_COBS;
      if (n >= sizeof raw) return MCULAB_FRAME_TOO_LONG;
      raw[n++] = in[i++];
    }
    if (code != 0xFF && i < in_len) {
      if (n >= sizeof raw) return MCULAB_FRAME_TOO_LONG;
      raw[n++] = 0;
    }
  }
  if (n < 6u) return MCULAB_FRAME_TOO_SHORT;
  const size_t body = n - 4u;
  if (mculab_crc32(0, raw, body) != mculab_get_u32(raw + body)) return MCULAB_FRAME_BAD_CRC;
  if (raw[0] != MCULAB_PROTOCOL_VERSION) return MCULAB_FRAME_BAD_VERSION;
  *type = raw[1];
  *payload_len = body - 2u;
  for (size_t k = 0; k < body - 2u; ++k) payload[k] = raw[2 + k];
  return MCULAB_FRAME_OK;
}

const char* mculab_frame_status_name(mculab_frame_status s) {
  switch (s) {
    case MCULAB_FRAME_OK:
      return "ok";
    case MCULAB_FRAME_EMPTY:
      return "empty frame";
    case MCULAB_FRAME_BAD_COBS:
      return "bad COBS encoding";
    case MCULAB_FRAME_TOO_SHORT:
      return "frame too short";
    case MCULAB_FRAME_TOO_LONG:
      return "frame too long";
    case MCULAB_FRAME_BAD_CRC:
      return "bad CRC";
    case MCULAB_FRAME_BAD_VERSION:
      return "bad protocol version";
  }
  return "unknown frame status";
}

const char* mculab_msg_type_name(uint8_t type) {
  switch (type) {
    case MCULAB_MSG_HELLO:
      return "HELLO";
    case MCULAB_MSG_CASE_START:
      return "CASE_START";
    case MCULAB_MSG_SAMPLE:
      return "SAMPLE";
    case MCULAB_MSG_OP_SAMPLE:
      return "OP_SAMPLE";
    case MCULAB_MSG_MEMORY:
      return "MEMORY";
    case MCULAB_MSG_LOG:
      return "LOG";
    case MCULAB_MSG_ERROR:
      return "ERROR";
    case MCULAB_MSG_DONE:
      return "DONE";
    case MCULAB_MSG_CASE_END:
      return "CASE_END";
    case MCULAB_MSG_CONFIGURE:
      return "CONFIGURE";
    case MCULAB_MSG_RUN:
      return "RUN";
    case MCULAB_MSG_ABORT:
      return "ABORT";
  }
  return NULL;
}

int mculab_msg_type_known(uint8_t type, int from_runner) {
  const char* name = mculab_msg_type_name(type);
  if (name == NULL) return 0;
  return from_runner ? type < 0x80u : type >= 0x80u;
}

const char* mculab_error_name(uint16_t code) {
  switch (code) {
    case MCULAB_ERR_NONE:
      return "none";
    case MCULAB_ERR_BAD_FRAME:
      return "bad frame";
    case MCULAB_ERR_BAD_WORKLOAD:
      return "bad workload";
    case MCULAB_ERR_UNKNOWN_OP:
      return "unknown op";
    case MCULAB_ERR_BAD_PARAMS:
      return "bad parameters";
    case MCULAB_ERR_NO_MEMORY:
      return "no memory";
    case MCULAB_ERR_UNSUPPORTED_EVENT:
      return "unsupported event";
    case MCULAB_ERR_ABORTED:
      return "aborted";
    case MCULAB_ERR_BAD_STATE:
      return "bad state";
    case MCULAB_ERR_FAULT:
      return "fault";
  }
  return "unknown error";
}
