// The spool as agents before its own record format wrote it: <dir>/runs/<run>/<name>.pb, each
// file one serialized v1::AgentMessage. ImportProtobufSpool converts such files once, when the
// link starts: each is parsed, written as the spool's record of the same name (<name>.rec, through
// the Spool, so next_seq follows the batches) and removed. A file that does not parse is set aside
// as damaged-<name>.pb and logged, like a damaged record. Nothing is lost across the upgrade, and
// the spool itself never reads protobuf.
//
// Thread-safety: call before anything else uses the spool's runs (the link's constructor).
#pragma once

#include <cstddef>

#include "agent/run/spool.h"

namespace mculab::agent {

struct SpoolImport {
  std::size_t imported = 0;  // files converted
  std::size_t damaged = 0;   // files set aside
};

SpoolImport ImportProtobufSpool(Spool& spool);

}  // namespace mculab::agent
