#include "server/http/event_stream.h"

#include "server/http/json_views.h"

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
      out += Dump(BoardJson(e.board, e.queue_length));
    }
    out += "\n\n";
  }
  return out;
}

}  // namespace mculab::server::http
