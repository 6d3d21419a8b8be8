// LabService: mculab.v1.Lab over gRPC. Unary calls and the artifact upload are synchronous
// handlers; WatchJob is a callback reactor (one per watch) so a watch holds no thread and ends
// when the client goes away. Every handler translates, calls the Lab (or, for the job history, the
// LabQueries the HTTP API reads too), translates back.
#pragma once

#include "lab.grpc.pb.h"
#include "server/rpc/caller.h"
#include "server/service/alerts.h"
#include "server/service/lab.h"
#include "server/service/queries.h"

namespace mculab::server::rpc {

class LabService final
    : public mculab::v1::Lab::WithCallbackMethod_WatchJob<mculab::v1::Lab::Service> {
 public:
  // `guard` (may be null) hears of every authenticated call's connection.
  // `alerts` (may be null: the alert calls then check the caller and say there is no alerts
  // service).
  LabService(server::Lab& lab, server::Store& store, ConnectionGuard* guard = nullptr,
             server::Alerts* alerts = nullptr)
      : lab_(lab), guard_(guard), queries_(lab, store), alerts_(alerts) {}

  grpc::Status ListBoards(grpc::ServerContext* context,
                          const mculab::v1::ListBoardsRequest* request,
                          mculab::v1::ListBoardsReply* reply) override;
  grpc::Status UploadArtifact(grpc::ServerContext* context,
                              grpc::ServerReader<mculab::v1::ArtifactChunk>* reader,
                              mculab::v1::ArtifactRef* reply) override;
  grpc::Status SubmitJob(grpc::ServerContext* context, const mculab::v1::SubmitJobRequest* request,
                         mculab::v1::SubmitJobReply* reply) override;
  grpc::ServerWriteReactor<mculab::v1::JobEvent>* WatchJob(
      grpc::CallbackServerContext* context, const mculab::v1::WatchJobRequest* request) override;
  grpc::Status GetJob(grpc::ServerContext* context, const mculab::v1::GetJobRequest* request,
                      mculab::v1::Job* reply) override;
  grpc::Status ListJobs(grpc::ServerContext* context, const mculab::v1::ListJobsRequest* request,
                        mculab::v1::ListJobsReply* reply) override;
  grpc::Status CancelJob(grpc::ServerContext* context, const mculab::v1::CancelJobRequest* request,
                         mculab::v1::Job* reply) override;
  grpc::Status GetResults(grpc::ServerContext* context,
                          const mculab::v1::GetResultsRequest* request,
                          mculab::v1::Results* reply) override;
  grpc::Status Reserve(grpc::ServerContext* context, const mculab::v1::ReserveRequest* request,
                       mculab::v1::Board* reply) override;
  grpc::Status RenewReservation(grpc::ServerContext* context,
                                const mculab::v1::RenewReservationRequest* request,
                                mculab::v1::Board* reply) override;
  grpc::Status Release(grpc::ServerContext* context, const mculab::v1::ReleaseRequest* request,
                       mculab::v1::Board* reply) override;
  grpc::Status AssignBoard(grpc::ServerContext* context,
                           const mculab::v1::AssignBoardRequest* request,
                           mculab::v1::Board* reply) override;
  grpc::Status ApproveBoard(grpc::ServerContext* context,
                            const mculab::v1::ApproveBoardRequest* request,
                            mculab::v1::Board* reply) override;
  grpc::Status SetMaintenance(grpc::ServerContext* context,
                              const mculab::v1::SetMaintenanceRequest* request,
                              mculab::v1::Board* reply) override;
  grpc::Status BoardHistory(grpc::ServerContext* context,
                            const mculab::v1::BoardHistoryRequest* request,
                            mculab::v1::BoardHistoryReply* reply) override;
  grpc::Status ListEvents(grpc::ServerContext* context,
                          const mculab::v1::ListEventsRequest* request,
                          mculab::v1::ListEventsReply* reply) override;
  // lab_service_series.cc
  grpc::Status GetSeries(grpc::ServerContext* context, const mculab::v1::GetSeriesRequest* request,
                         mculab::v1::Series* reply) override;
  grpc::Status Compare(grpc::ServerContext* context, const mculab::v1::CompareRequest* request,
                       mculab::v1::Comparison* reply) override;
  // lab_service_series.cc: follows of series, and failed gates, for the alerts
  grpc::Status Follow(grpc::ServerContext* context, const mculab::v1::FollowRequest* request,
                      mculab::v1::FollowInfo* reply) override;
  grpc::Status ListFollows(grpc::ServerContext* context,
                           const mculab::v1::ListFollowsRequest* request,
                           mculab::v1::ListFollowsReply* reply) override;
  grpc::Status Unfollow(grpc::ServerContext* context, const mculab::v1::UnfollowRequest* request,
                        mculab::v1::UnfollowReply* reply) override;
  grpc::Status ReportGate(grpc::ServerContext* context,
                          const mculab::v1::ReportGateRequest* request,
                          mculab::v1::ReportGateReply* reply) override;

 private:
  // The caller of a call, authenticated against the lab's accounts (rpc/caller.h). Every handler
  // passes it to the Lab, whose methods check the role.
  Caller CallerOf(const grpc::ServerContextBase& context) const {
    return rpc::CallerOf(context, lab_.accounts(), guard_);
  }

  server::Lab& lab_;
  ConnectionGuard* const guard_;
  server::LabQueries queries_;  // the read side the HTTP API shares (the job history)
  server::Alerts* const alerts_;
};

}  // namespace mculab::server::rpc
