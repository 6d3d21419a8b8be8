// A fake `FVP_Corstone_SSE-300_Ethos-U55` for the fvp board's tests (Arm's FVP cannot be installed
// on the project's machines). It checks its command line the way the board must build it, then
// behaves like the model's UART0: it announces "telnetterminal0: Listening for serial connection
// on port N" on stdout, accepts one TCP connection on 127.0.0.1:N and "runs the application": the
// file given with `-a cpu0=FILE` is executed natively with the `--data` file as its argument and
// the connection as its stdin/stdout (the tests give it the host runner, which speaks the runner
// protocol). Like the real model after the runner parks, it then keeps running until killed.
//
// `-C fake.behaviour=...` plays the failure modes: `exit_early` (exits 1 before any port),
// `no_port` (never announces a port), `garbage` (sends bytes that are no runner frames),
// `hang_up` (closes the connection at once). A bad command line exits 2 with "fake FVP: ...".
// `--version` prints a Fast Models banner.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

[[noreturn]] void Bad(const std::string& msg) {
  std::fprintf(stderr, "fake FVP: command line: %s\n", msg.c_str());
  std::exit(2);
}

[[noreturn]] void Park() {
  for (;;) ::pause();
}

bool Readable(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

// "cpu0=VALUE" -> VALUE; the instance must be the Corstone-300's CPU.
std::string Cpu0Value(const std::string& opt, const std::string& arg) {
  if (arg.rfind("cpu0=", 0) != 0) Bad(opt + " " + arg + ": expected cpu0=...");
  return arg.substr(5);
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> params;
  std::string app, data, data_addr;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--version") {
      std::printf("Fast Models [11.22.39 (fake FVP for mculab tests)]\n");
      return 0;
    }
    if (i + 1 >= argc) Bad("option " + a + " without a value");
    const std::string v = argv[++i];
    if (a == "-C") {
      auto eq = v.find('=');
      if (eq == std::string::npos) Bad("-C " + v + ": expected NAME=VALUE");
      params[v.substr(0, eq)] = v.substr(eq + 1);
    } else if (a == "-a") {
      app = Cpu0Value(a, v);
    } else if (a == "--data") {
      std::string d = Cpu0Value(a, v);
      auto at = d.rfind('@');
      if (at == std::string::npos) Bad("--data " + v + ": expected FILE@ADDRESS");
      data = d.substr(0, at);
      data_addr = d.substr(at + 1);
    } else {
      Bad("unknown option " + a);
    }
  }
  auto expect = [&](const std::string& key, const std::string& value) {
    auto it = params.find(key);
    if (it == params.end() || it->second != value) Bad("expected -C " + key + "=" + value);
  };
  expect("mps3_board.visualisation.disable-visualisation", "1");
  for (const char* t :
       {"telnetterminal0", "telnetterminal1", "telnetterminal2", "telnetterminal5"}) {
    expect(std::string("mps3_board.") + t + ".start_telnet", "0");
  }
  expect("mps3_board.telnetterminal0.mode", "raw");
  const std::string macs = params.count("ethosu.num_macs") ? params["ethosu.num_macs"] : "";
  if (macs != "32" && macs != "64" && macs != "128" && macs != "256") {
    Bad("ethosu.num_macs must be 32, 64, 128 or 256, got \"" + macs + "\"");
  }
  if (app.empty() || !Readable(app)) Bad("-a cpu0=FILE: no readable application \"" + app + "\"");
  if (data.empty() || !Readable(data)) Bad("--data: no readable file \"" + data + "\"");
  if (data_addr.rfind("0x", 0) != 0 || data_addr.size() < 3) Bad("--data address " + data_addr);
  const std::string behaviour = params.count("fake.behaviour") ? params["fake.behaviour"] : "serve";

  std::printf("\nFast Models [11.22.39 (fake)]\nCopyright 2000-2026 ARM Limited.\n\n");
  std::fflush(stdout);
  if (behaviour == "exit_early") {
    std::fprintf(stderr, "fake FVP: exiting early as asked\n");
    return 1;
  }
  if (behaviour == "no_port") Park();

  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  int on = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  int port = params.count("mps3_board.telnetterminal0.start_port")
                 ? std::atoi(params["mps3_board.telnetterminal0.start_port"].c_str())
                 : 5000;
  for (;; ++port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) break;
    if (errno != EADDRINUSE || port > 5100) {
      std::fprintf(stderr, "fake FVP: bind: %s\n", std::strerror(errno));
      return 1;
    }
  }
  ::listen(listener, 1);
  // The real model announces every terminal; the relay must pick telnetterminal0's.
  std::printf("telnetterminal0: Listening for serial connection on port %d\n", port);
  std::printf("telnetterminal1: Listening for serial connection on port %d\n", port + 1);
  std::printf("telnetterminal2: Listening for serial connection on port %d\n", port + 2);
  std::printf("telnetterminal5: Listening for serial connection on port %d\n", port + 3);
  std::fflush(stdout);
  int conn = ::accept(listener, nullptr, nullptr);
  if (conn < 0) return 1;
  if (behaviour == "hang_up") {
    ::close(conn);
    Park();
  }
  if (behaviour == "garbage") {
    const char junk[] = "\x13\x37garbage that is no COBS frame\x01\x02\x03";
    for (int i = 0; i < 64; ++i) {
      if (::write(conn, junk, sizeof(junk)) < 0) break;
    }
    Park();
  }
  const pid_t child = ::fork();
  if (child == 0) {
    ::dup2(conn, STDIN_FILENO);
    ::dup2(conn, STDOUT_FILENO);
    ::execl(app.c_str(), app.c_str(), data.c_str(), static_cast<char*>(nullptr));
    std::fprintf(stderr, "fake FVP: cannot run %s: %s\n", app.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  Park();  // the runner parked its core: the model keeps running until the agent ends it
}
