#include "server/rpc/lab_service.h"

#include <grpcpp/alarm.h>

#include <chrono>
#include <memory>
#include <mutex>

#include "server/rpc/caller.h"
#include "server/rpc/status.h"
#include "server/wire/convert.h"

namespace mculab::server::rpc {

using wire::FromProto;
using wire::ToProto;
namespace {

namespace v1 = mculab::v1;

// Streams one JobWatch. The watch's listener reaches the reactor through a guard that OnDone
// clears, so a late notification never touches a deleted reactor. Lock order: guard, reactor,
// watch; the Lab notifies with none of its locks held.
class WatchReactor final : public grpc::ServerWriteReactor<v1::JobEvent> {
 public:
  explicit WatchReactor(std::shared_ptr<JobWatch> watch)
      : watch_(std::move(watch)), guard_(std::make_shared<Guard>()) {
    guard_->self = this;
    watch_->SetListener([guard = guard_] {
      std::lock_guard l(guard->mu);
      if (guard->self != nullptr) guard->self->Pump();
    });
    Pump();
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      // The client went away; OnCancel and OnDone follow.
      End(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the client went away"), true);
      return;
    }
    {
      std::lock_guard l(mu_);
      writing_ = false;
    }
    Pump();
  }

  void OnCancel() override {
    watch_->Close();
    End(grpc::Status::CANCELLED, false);
  }

  void OnDone() override {
    {
      std::lock_guard l(guard_->mu);
      guard_->self = nullptr;
    }
    watch_->Close();
    delete this;
  }

 private:
  struct Guard {
    std::mutex mu;
    WatchReactor* self = nullptr;
  };

  // Writes the next event, or finishes after the last one. gRPC calls are made without mu_.
  void Pump() {
    bool write = false;
    {
      std::lock_guard l(mu_);
      if (writing_ || finished_) return;
      if (auto e = watch_->TryNext()) {
        event_.Clear();
        ToProto(*e, &event_);  // event_ is ours until OnWriteDone
        writing_ = write = true;
      } else if (!watch_->Ended()) {
        return;
      }
    }
    if (write) {
      StartWrite(&event_);
    } else if (std::string why = watch_->failure(); !why.empty()) {
      End(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, why), false);  // a revoked token
    } else {
      End(grpc::Status::OK, false);
    }
  }

  // Finishes once, whoever asks first; a write in flight completes (or fails) on its own.
  void End(const grpc::Status& status, bool write_done) {
    {
      std::lock_guard l(mu_);
      if (write_done) writing_ = false;
      if (finished_) return;
      finished_ = true;
    }
    Finish(status);
  }

  std::shared_ptr<JobWatch> watch_;
  std::shared_ptr<Guard> guard_;
  std::mutex mu_;
  bool writing_ = false;
  bool finished_ = false;
  v1::JobEvent event_;
};

// A watch that could not start: finishes at once with the error.
class FailedWatch final : public grpc::ServerWriteReactor<v1::JobEvent> {
 public:
  explicit FailedWatch(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace

grpc::Status LabService::ListBoards(grpc::ServerContext* context, const v1::ListBoardsRequest*,
                                    v1::ListBoardsReply* reply) {
  auto boards = lab_.boards().ListBoards(CallerOf(*context));
  if (!boards.ok()) return ToGrpcStatus(boards.error());
  for (const BoardView& b : *boards) ToProto(b, reply->add_boards());
  return grpc::Status::OK;
}

grpc::Status LabService::UploadArtifact(grpc::ServerContext* context,
                                        grpc::ServerReader<v1::ArtifactChunk>* reader,
                                        v1::ArtifactRef* reply) {
  const Caller caller = CallerOf(*context);
  // Refused before a byte is read: a caller without the role cannot make the server buffer.
  if (Status s = RequireRole(caller, Role::kMember, "uploading a file"); !s.ok()) {
    return ToGrpcStatus(s);
  }
  // The upload's own deadline, whatever the client asked for: a slow or stalled upload is
  // cancelled (its Read fails) when it passes.
  struct Guard {
    std::mutex mu;
    grpc::ServerContext* context = nullptr;
  };
  auto guard = std::make_shared<Guard>();
  guard->context = context;
  grpc::Alarm alarm;
  const auto timeout = std::chrono::seconds(lab_.config().upload_timeout_s);
  alarm.Set(std::chrono::system_clock::now() + timeout, [guard](bool fired) {
    std::lock_guard l(guard->mu);
    if (fired && guard->context != nullptr) guard->context->TryCancel();
  });
  struct Disarm {
    std::shared_ptr<Guard> guard;
    ~Disarm() {
      std::lock_guard l(guard->mu);
      guard->context = nullptr;
    }
  } disarm{guard};
  std::unique_ptr<ArtifactUpload> upload;
  v1::ArtifactChunk chunk;
  while (reader->Read(&chunk)) {
    if (!upload) {
      auto begun = lab_.uploads().BeginUpload(caller, chunk.name(), chunk.total_size());
      if (!begun.ok()) return ToGrpcStatus(begun.error());
      upload = std::move(*begun);
    }
    if (Status s = upload->Append(chunk.data()); !s.ok()) return ToGrpcStatus(s);
  }
  if (context->IsCancelled()) {
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                        "the upload did not end within " +
                            std::to_string(lab_.config().upload_timeout_s) +
                            " s (upload_timeout_s in the server config)");
  }
  if (!upload) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the upload carried no chunk");
  }
  auto artifact = upload->Finish();
  if (!artifact.ok()) return ToGrpcStatus(artifact.error());
  reply->set_sha256(artifact->sha256);
  reply->set_size(artifact->size);
  return grpc::Status::OK;
}

grpc::Status LabService::SubmitJob(grpc::ServerContext* context,
                                   const v1::SubmitJobRequest* request, v1::SubmitJobReply* reply) {
  if (!request->priority().empty() && !ParseJobPriority(request->priority())) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "unknown priority '" + request->priority() + "' (high, normal, low)");
  }
  auto submitted = lab_.jobs().Submit(CallerOf(*context), FromProto(*request));
  if (!submitted.ok()) return ToGrpcStatus(submitted.error());
  ToProto(*submitted, reply);
  return grpc::Status::OK;
}

grpc::ServerWriteReactor<v1::JobEvent>* LabService::WatchJob(grpc::CallbackServerContext* context,
                                                             const v1::WatchJobRequest* request) {
  auto watch = lab_.jobs().Watch(CallerOf(*context), static_cast<JobId>(request->id()));
  if (!watch.ok()) return new FailedWatch(ToGrpcStatus(watch.error()));
  return new WatchReactor(std::move(*watch));
}

grpc::Status LabService::GetJob(grpc::ServerContext* context, const v1::GetJobRequest* request,
                                v1::Job* reply) {
  auto job = lab_.jobs().GetJob(CallerOf(*context), static_cast<JobId>(request->id()));
  if (!job.ok()) return ToGrpcStatus(job.error());
  ToProto(*job, reply);
  return grpc::Status::OK;
}

grpc::Status LabService::ListJobs(grpc::ServerContext* context, const v1::ListJobsRequest* request,
                                  v1::ListJobsReply* reply) {
  const JobQuery query = FromProto(*request);
  auto page = queries_.ListJobs(CallerOf(*context), query);
  if (!page.ok()) return ToGrpcStatus(page.error());
  ToProto(*page, query, reply);
  return grpc::Status::OK;
}

grpc::Status LabService::CancelJob(grpc::ServerContext* context,
                                   const v1::CancelJobRequest* request, v1::Job* reply) {
  auto job = lab_.jobs().Cancel(CallerOf(*context), static_cast<JobId>(request->id()));
  if (!job.ok()) return ToGrpcStatus(job.error());
  ToProto(*job, reply);
  return grpc::Status::OK;
}

grpc::Status LabService::GetResults(grpc::ServerContext* context,
                                    const v1::GetResultsRequest* request, v1::Results* reply) {
  auto results = queries_.GetJobResults(CallerOf(*context), static_cast<JobId>(request->id()),
                                        request->include_samples());
  if (!results.ok()) return ToGrpcStatus(results.error());
  ToProto(*results, reply);
  return grpc::Status::OK;
}

// ---- reservations, maintenance, board history ----

namespace {
grpc::Status BoardReply(const Result<Board>& b, v1::Board* reply) {
  if (!b.ok()) return ToGrpcStatus(b.error());
  ToProto(BoardView{*b, 0, 0}, reply);
  return grpc::Status::OK;
}
}  // namespace

grpc::Status LabService::Reserve(grpc::ServerContext* context, const v1::ReserveRequest* request,
                                 v1::Board* reply) {
  ReserveRequest r{request->board(), request->duration_ms(), request->note(), request->hold()};
  return BoardReply(lab_.boards().Reserve(CallerOf(*context), r), reply);
}

grpc::Status LabService::RenewReservation(grpc::ServerContext* context,
                                          const v1::RenewReservationRequest* request,
                                          v1::Board* reply) {
  return BoardReply(
      lab_.boards().RenewReservation(CallerOf(*context), request->board(), request->duration_ms()),
      reply);
}

grpc::Status LabService::Release(grpc::ServerContext* context, const v1::ReleaseRequest* request,
                                 v1::Board* reply) {
  return BoardReply(lab_.boards().Release(CallerOf(*context), request->board()), reply);
}

grpc::Status LabService::AssignBoard(grpc::ServerContext* context,
                                     const v1::AssignBoardRequest* request, v1::Board* reply) {
  return BoardReply(
      lab_.boards().AssignBoard(CallerOf(*context), request->board(), request->agent()), reply);
}

grpc::Status LabService::ApproveBoard(grpc::ServerContext* context,
                                      const v1::ApproveBoardRequest* request, v1::Board* reply) {
  return BoardReply(lab_.boards().ApproveBoard(CallerOf(*context), request->board()), reply);
}

grpc::Status LabService::SetMaintenance(grpc::ServerContext* context,
                                        const v1::SetMaintenanceRequest* request,
                                        v1::Board* reply) {
  return BoardReply(lab_.boards().SetMaintenance(CallerOf(*context), request->board(),
                                                 request->on(), request->reason()),
                    reply);
}

grpc::Status LabService::BoardHistory(grpc::ServerContext* context,
                                      const v1::BoardHistoryRequest* request,
                                      v1::BoardHistoryReply* reply) {
  auto history = lab_.boards().BoardHistory(CallerOf(*context), request->board());
  if (!history.ok()) return ToGrpcStatus(history.error());
  for (const BoardTransition& t : *history) ToProto(t, reply->add_transitions());
  return grpc::Status::OK;
}

grpc::Status LabService::ListEvents(grpc::ServerContext* context,
                                    const v1::ListEventsRequest* request,
                                    v1::ListEventsReply* reply) {
  auto view = lab_.boards().ListEvents(CallerOf(*context), request->kind(), request->board());
  if (!view.ok()) return ToGrpcStatus(view.error());
  ToProto(*view, reply);
  return grpc::Status::OK;
}

}  // namespace mculab::server::rpc
