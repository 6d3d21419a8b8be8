// Translation between lab.proto messages and the service's types. Nothing else.
#pragma once

#include "lab.pb.h"
#include "server/service/board_requests.h"
#include "server/service/job_requests.h"
#include "server/service/job_watch.h"
#include "server/service/queries.h"
#include "server/service/store.h"

namespace mculab::server::wire {

SubmitRequest FromProto(const mculab::v1::SubmitJobRequest& m);
// Limit 0: 50.
JobQuery FromProto(const mculab::v1::ListJobsRequest& m);

void ToProto(const BoardView& b, mculab::v1::Board* out);
void ToProto(const BoardTransition& t, mculab::v1::BoardTransition* out);
void ToProto(const QueueWait& w, mculab::v1::QueueWait* out);
void ToProto(const Job& j, mculab::v1::Job* out);
// The job with its "emulated" and "measured" labels.
void ToProto(const JobRow& row, mculab::v1::Job* out);
void ToProto(const JobPage& page, const JobQuery& query, mculab::v1::ListJobsReply* out);
void ToProto(const JobEvent& e, mculab::v1::JobEvent* out);
void ToProto(const SubmitReply& r, mculab::v1::SubmitJobReply* out);
void ToProto(const JobResults& r, mculab::v1::Results* out);
void ToProto(const EventsView& v, mculab::v1::ListEventsReply* out);
void ToProto(const Trend& t, mculab::v1::Series* out);
void ToProto(const Comparison& c, mculab::v1::Comparison* out);

}  // namespace mculab::server::wire
