// Reaper: ends child processes off the caller's thread. Give() kills the process's group at once
// (SIGKILL: it runs no more code) and leaves the wait for its exit, and the removal of the folder
// it leaves, to the reaper's own thread, so whoever ends a runner (a board between two jobs) does
// not wait for the kernel to tear the process down.
//
// Thread-safety: every method may be called from any thread. The destructor finishes every reap
// given so far, so nothing given is left behind (a board shares its reaper with the runners it
// starts: whichever goes last ends it).
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "agent/io/run_dir.h"
#include "agent/io/subprocess.h"

namespace mculab::agent {

class Reaper {
 public:
  Reaper();
  ~Reaper();
  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;

  // Kills `process` now; reaps it, then removes `dir`, on the reaper's thread.
  void Give(std::unique_ptr<Subprocess> process, std::unique_ptr<RunDir> dir = nullptr);
  // Waits until everything given so far is reaped and removed.
  void Drain();

 private:
  struct Work {
    std::unique_ptr<Subprocess> process;
    std::unique_ptr<RunDir> dir;
  };
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Work> queue_;
  int in_progress_ = 0;
  bool stop_ = false;
  std::thread thread_;  // last: started once the rest is initialised
};

}  // namespace mculab::agent
