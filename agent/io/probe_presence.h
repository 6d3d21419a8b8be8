// Which configured boards have their debug probe plugged in, matched by USB serial number. The
// agent rescans (a fresh libusb enumeration) every few seconds: a board whose probe has gone is
// offline until the probe returns. Rescan() says which boards changed state so the caller can
// requeue a running job as an infrastructure failure and stop offering the board.
// Thread-safety: every member takes the lock; Rescan() calls the lister outside it.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "agent/io/probe_lister.h"
#include "common/result.h"

namespace mculab::agent {

struct BoardProbe {
  std::string board;   // the config's board name
  std::string serial;  // its probe's USB serial number
};

struct BoardProbeState {
  std::string board;
  std::string serial;
  bool online = false;
  ProbeInfo probe;  // the probe found (when online)
};

// Each board in `boards` order, online when a probe in `probes` has its serial (SerialsMatch).
std::vector<BoardProbeState> MatchBoardsToProbes(const std::vector<BoardProbe>& boards,
                                                 const std::vector<ProbeInfo>& probes);

class ProbePresence {
 public:
  // Every board is offline until the first Rescan().
  ProbePresence(ProbeLister& lister, std::vector<BoardProbe> boards);

  // Lists the probes again. Returns the boards whose state changed since the previous scan (on
  // the first scan: the boards found online). A failed enumeration changes nothing.
  Result<std::vector<BoardProbeState>> Rescan();

  bool Online(const std::string& board) const;
  std::vector<BoardProbeState> States() const;

 private:
  ProbeLister& lister_;
  mutable std::mutex mu_;
  std::vector<BoardProbeState> states_;
};

}  // namespace mculab::agent
