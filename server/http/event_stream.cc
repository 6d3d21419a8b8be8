#include "server/http/event_stream.h"

#include "server/http/json_views.h"
#include "server/wire/documents.h"

namespace mculab::server::http {

std::string FormatEvents(std::span<const LabEvent> events) {
  std::string out;
  for (const LabEvent& e : events) {
    if (e.kind == LabEvent::Kind::kJob) {
      out += "event: job\ndata: ";
      out += Dump(JobEventJson(e.job));
    } else if (e.kind == LabEvent::Kind::kSamples) {
      out += "event: samples\ndata: ";
      out += Dump(LiveSamplesJson(e.samples));
    } else {
      out += "event: board\ndata: ";
      // The board as GET /api/v1/boards lists it, but for the kind's queue, which the feed does
      // not follow.
      Json board = wire::BoardDocument(BoardView{e.board, e.queue_length, 0});
      board.erase("kind_queue_length");
      out += Dump(board);
    }
    out += "\n\n";
  }
  return out;
}

}  // namespace mculab::server::http
