// FakeProbeLister: a ProbeLister over a list the test (or a lab without hardware) sets.
// Thread-safety: Set() and List() may race; both take the lock.
#pragma once

#include <mutex>
#include <utility>
#include <vector>

#include "agent/io/probe_lister.h"

namespace mculab::agent {

class FakeProbeLister final : public ProbeLister {
 public:
  explicit FakeProbeLister(std::vector<ProbeInfo> probes = {}) : probes_(std::move(probes)) {}
  void Set(std::vector<ProbeInfo> probes) {
    std::lock_guard lock(mu_);
    probes_ = std::move(probes);
  }
  Result<std::vector<ProbeInfo>> List() override {
    std::lock_guard lock(mu_);
    return probes_;
  }

 private:
  std::mutex mu_;
  std::vector<ProbeInfo> probes_;
};

}  // namespace mculab::agent
