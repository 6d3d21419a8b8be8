// mculab-link-fault-runner: a fault-injecting wrapper around a runner's byte stream, for the
// link-fault suite (link_fault_test.cc).
//
//   mculab-link-fault-runner MODE SEED RUNNER ARGS...
//
// Starts RUNNER ARGS... with its stdin and stdout on pipes. What the agent writes reaches the
// runner unchanged; what the runner writes is split into frames at each 0x00 delimiter (the frame
// format of docs/runner-protocol.md) and, frame by frame, with a probability of 1 in 6 picked by a
// random generator seeded with SEED, damaged as MODE says:
//   garbage    random non-zero bytes and a delimiter before the frame (costs only themselves)
//   merge      random non-zero bytes without a delimiter before the frame (costs that frame)
//   truncate   the frame cut short (its delimiter kept)
//   duplicate  the frame sent twice
//   reorder    the frame held back and sent after the next one
//   mixed      any of the above
// Writes "link-fault: N faults injected in M frames" to stderr at the end and exits as the runner
// did.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

bool WriteAll(int fd, const std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool WriteAll(int fd, const std::vector<std::uint8_t>& v) {
  return WriteAll(fd, v.data(), v.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s MODE SEED RUNNER ARGS...\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  const char* modes[] = {"garbage", "merge", "truncate", "duplicate", "reorder"};
  bool known = mode == "mixed";
  for (const char* m : modes) known |= mode == m;
  if (!known) {
    std::fprintf(stderr, "link-fault: unknown mode %s\n", mode.c_str());
    return 2;
  }
  std::mt19937 rng(static_cast<std::uint32_t>(std::strtoul(argv[2], nullptr, 10)));
  ::signal(SIGPIPE, SIG_IGN);

  int to_child[2], from_child[2];
  if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) return 3;
  const pid_t pid = ::fork();
  if (pid < 0) return 3;
  if (pid == 0) {
    ::dup2(to_child[0], 0);
    ::dup2(from_child[1], 1);
    ::close(to_child[0]);
    ::close(to_child[1]);
    ::close(from_child[0]);
    ::close(from_child[1]);
    ::execv(argv[3], argv + 3);
    std::fprintf(stderr, "link-fault: cannot run %s: %s\n", argv[3], std::strerror(errno));
    ::_exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);

  // Agent -> runner: unchanged.
  std::thread forward([in = to_child[1]] {
    std::uint8_t buf[4096];
    for (;;) {
      const ssize_t n = ::read(0, buf, sizeof buf);
      if (n <= 0 || !WriteAll(in, buf, static_cast<std::size_t>(n))) break;
    }
    ::close(in);
  });
  forward.detach();

  // Runner -> agent: frame by frame, damaged now and then.
  std::uint64_t faults = 0, frames = 0;
  std::vector<std::uint8_t> frame, held;
  bool holding = false;
  auto random_bytes = [&](std::size_t n) {
    std::vector<std::uint8_t> v(n);
    for (auto& b : v) b = static_cast<std::uint8_t>(1 + rng() % 255);
    return v;
  };
  auto emit = [&](const std::vector<std::uint8_t>& f) {
    ++frames;
    std::string m = mode == "mixed" ? modes[rng() % 5] : mode;
    const bool damage = f.size() > 1 && rng() % 6 == 0;
    if (!damage) {
      WriteAll(1, f);
      if (holding) {  // a reordered frame follows the one after it
        WriteAll(1, held);
        holding = false;
      }
      return;
    }
    ++faults;
    if (m == "garbage") {
      auto g = random_bytes(1 + rng() % 40);
      g.push_back(0);
      WriteAll(1, g);
      WriteAll(1, f);
    } else if (m == "merge") {
      WriteAll(1, random_bytes(1 + rng() % 40));
      WriteAll(1, f);
    } else if (m == "truncate") {
      const std::size_t keep = rng() % (f.size() - 1);  // without the delimiter
      WriteAll(1, f.data(), keep);
      const std::uint8_t zero = 0;
      WriteAll(1, &zero, 1);
    } else if (m == "duplicate") {
      WriteAll(1, f);
      WriteAll(1, f);
    } else if (m == "reorder") {
      if (holding) {
        WriteAll(1, f);
        WriteAll(1, held);
        holding = false;
      } else {
        held = f;
        holding = true;
        return;
      }
    }
    if (holding) {
      WriteAll(1, held);
      holding = false;
    }
  };
  std::uint8_t buf[4096];
  for (;;) {
    const ssize_t n = ::read(from_child[0], buf, sizeof buf);
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      frame.push_back(buf[i]);
      if (buf[i] == 0) {
        emit(frame);
        frame.clear();
      }
    }
  }
  if (!frame.empty()) WriteAll(1, frame);
  if (holding) WriteAll(1, held);
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::fprintf(stderr, "link-fault: %llu faults injected in %llu frames\n",
               static_cast<unsigned long long>(faults), static_cast<unsigned long long>(frames));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}
