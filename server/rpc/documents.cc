#include "server/rpc/documents.h"

#include "proto/json/documents.h"
#include "server/rpc/convert.h"

namespace mculab::server::rpc {

nlohmann::ordered_json JobDocument(const JobResults& results) {
  mculab::v1::Results reply;
  ToProto(results, &reply);
  return ResultsDocument(reply);
}

nlohmann::ordered_json BoardDocument(const BoardView& board) {
  mculab::v1::Board reply;
  ToProto(board, &reply);
  return mculab::BoardDocument(reply);
}

}  // namespace mculab::server::rpc
