// Lab::GetTrend: the trend view for gRPC clients (the HTTP API asks LabQueries directly).
#include "server/service/lab.h"
#include "server/service/queries.h"

namespace mculab::server {

Result<Trend> Lab::GetTrend(const Caller& caller, const TrendRequest& request) {
  if (Status s = RequireRole(caller, Role::kViewer, "reading a series"); !s.ok()) {
    return s.error();
  }
  LabQueries queries(*this, store_);
  return queries.GetTrend(caller, request);
}

}  // namespace mculab::server
