#include "agent/io/probe_presence.h"

#include <utility>

namespace mculab::agent {

std::vector<BoardProbeState> MatchBoardsToProbes(const std::vector<BoardProbe>& boards,
                                                 const std::vector<ProbeInfo>& probes) {
  std::vector<BoardProbeState> out;
  out.reserve(boards.size());
  for (const auto& b : boards) {
    BoardProbeState s{b.board, b.serial, false, {}};
    for (const auto& p : probes) {
      if (SerialsMatch(p.serial, b.serial)) {
        s.online = true;
        s.probe = p;
        break;
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

ProbePresence::ProbePresence(ProbeLister& lister, std::vector<BoardProbe> boards)
    : lister_(lister), states_(MatchBoardsToProbes(boards, {})) {}

Result<std::vector<BoardProbeState>> ProbePresence::Rescan() {
  std::vector<BoardProbe> boards;
  {
    std::lock_guard lock(mu_);
    for (const auto& s : states_) boards.push_back({s.board, s.serial});
  }
  auto probes = lister_.List();
  if (!probes) return probes.error();
  auto next = MatchBoardsToProbes(boards, *probes);
  std::vector<BoardProbeState> changed;
  std::lock_guard lock(mu_);
  for (std::size_t i = 0; i < next.size() && i < states_.size(); ++i) {
    if (next[i].online != states_[i].online) changed.push_back(next[i]);
  }
  states_ = std::move(next);
  return changed;
}

bool ProbePresence::Online(const std::string& board) const {
  std::lock_guard lock(mu_);
  for (const auto& s : states_) {
    if (s.board == board) return s.online;
  }
  return false;
}

std::vector<BoardProbeState> ProbePresence::States() const {
  std::lock_guard lock(mu_);
  return states_;
}

}  // namespace mculab::agent
