/* A hostile runner for the sandbox tests: a job's own runner (built with the runner library, so it
 * speaks the protocol) whose cases attack the agent's machine instead of benchmarking. The case id
 * picks the attack; the blob names the targets, one per line:
 *   line 1  a file to steal (the agent's token file)
 *   line 2  a file to create (a marker the test looks for afterwards)
 *   line 3  a TCP port on 127.0.0.1 to connect to (the lab server's)
 * Case ids:
 *   1  run a command: semihosting SYS_SYSTEM "touch <marker>" on an embedded port; on the host,
 *      create <marker> directly (native code needs no trick to run anything: the sandbox must stop
 *      what it can reach)
 *   2  read <token>: semihosting SYS_OPEN + SYS_READ on an embedded port, open()+read() on the host
 *   3  an embedded port: an undefined instruction; the host: connect to 127.0.0.1:<port>
 *   4  the host only: write a marker line to stderr, then replace every file of the run's folder
 *      ($HOME in the sandbox) and the file behind its own stderr by symbolic links to <token>, and
 *      exit at once (status 3): an agent that then reads "the runner's stderr" or any file of the
 *      folder by name, with its own rights, shows the token in the job's message
 * An attack that works stops the run with ERROR(BAD_WORKLOAD, "ESCAPED: ...") naming what it got;
 * one that is stopped ends with ERROR(BAD_WORKLOAD, "blocked: ...") or, on an embedded port, the
 * fault the core took (ERROR(FAULT)). Either way the job fails as the job's own failure; the tests
 * assert that no message says ESCAPED and that nothing changed on the host. */
#include <stddef.h>
#include <stdint.h>

#include "mculab/runner.h"

#if defined(__arm__)
#define EMBEDDED 1
#else
#define EMBEDDED 0
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#endif

#define MAX_LINE 200

static char lines[3][MAX_LINE];

static void put(char* out, size_t cap, size_t* n, const char* s) {
  while (*s && *n + 1 < cap) out[(*n)++] = *s++;
  out[*n] = 0;
}

static void parse_blob(const uint8_t* blob, size_t len) {
  size_t line = 0, col = 0;
  for (size_t i = 0; i < len && line < 3; ++i) {
    if (blob[i] == '\n' || blob[i] == 0) {
      lines[line][col] = 0;
      ++line;
      col = 0;
    } else if (col + 1 < MAX_LINE) {
      lines[line][col++] = (char)blob[i];
    }
  }
  if (line < 3) lines[line][col] = 0;
}

#if EMBEDDED
static void put_u32(char* out, size_t cap, size_t* n, uint32_t v) {
  char d[12];
  int k = 0;
  do {
    d[k++] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v != 0 && k < 11);
  while (k > 0 && *n + 1 < cap) out[(*n)++] = d[--k];
  out[*n] = 0;
}

/* A semihosting call: BKPT 0xAB with the operation in r0 and its parameter block in r1. With
 * semihosting off (always, under mculab's agent) the BKPT faults and never returns. */
static uint32_t semihost(uint32_t op, const void* block) {
  register uint32_t r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = block;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

static size_t length(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}
#endif

#if !EMBEDDED
static int atoi_port(const char* s) {
  int v = 0;
  while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
  return v;
}
#endif

#if !EMBEDDED
/* Attack 4: every name the agent might read after the run becomes a link to the token. */
static void swap_files_for_links(void) {
  static const char kMarker[] = "hostile-runner-stderr-marker\n";
  (void)!write(2, kMarker, sizeof kMarker - 1);
  char target[512];
  const ssize_t n = readlink("/proc/self/fd/2", target, sizeof target - 1);
  if (n > 0 && target[0] == '/') {
    target[n] = 0;
    unlink(target);
    (void)!symlink(lines[0], target);
  }
  const char* home = getenv("HOME");
  DIR* d = home ? opendir(home) : NULL;
  if (d != NULL) {
    const struct dirent* e;
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char path[512];
      snprintf(path, sizeof path, "%s/%s", home, e->d_name);
      unlink(path);
      (void)!symlink(lines[0], path);
    }
    closedir(d);
    /* The names the agent's boards have used for stderr and the emulator's counts. */
    static const char* const kNames[] = {"runner.stderr", "qemu.stderr", "counts.txt"};
    for (size_t i = 0; i < sizeof kNames / sizeof kNames[0]; ++i) {
      char path[512];
      snprintf(path, sizeof path, "%s/%s", home, kNames[i]);
      (void)!symlink(lines[0], path);
    }
  }
  _exit(3);
}
#endif

static uint16_t attack(int64_t id, char* msg, size_t cap) {
  size_t n = 0;
#if EMBEDDED
  if (id == 1) {
    static char cmd[MAX_LINE + 8];
    size_t c = 0;
    put(cmd, sizeof cmd, &c, "touch ");
    put(cmd, sizeof cmd, &c, lines[1]);
    const uint32_t block[2] = {(uint32_t)(uintptr_t)cmd, (uint32_t)c};
    const uint32_t r = semihost(0x12u /* SYS_SYSTEM */, block);
    put(msg, cap, &n, "ESCAPED: SYS_SYSTEM ran a host command, status ");
    put_u32(msg, cap, &n, r);
    return MCULAB_ERR_BAD_WORKLOAD;
  }
  if (id == 2) {
    const uint32_t open_block[3] = {(uint32_t)(uintptr_t)lines[0], 0 /* "r" */,
                                    (uint32_t)length(lines[0])};
    const uint32_t fd = semihost(0x01u /* SYS_OPEN */, open_block);
    static char data[64];
    const uint32_t read_block[3] = {fd, (uint32_t)(uintptr_t)data, sizeof data - 1};
    const uint32_t left = semihost(0x06u /* SYS_READ */, read_block);
    if (fd == 0xFFFFFFFFu || left == sizeof data - 1) {
      put(msg, cap, &n, "blocked: SYS_OPEN/SYS_READ failed");
    } else {
      put(msg, cap, &n, "ESCAPED: read the token file: ");
      put(msg, cap, &n, data);
    }
    return MCULAB_ERR_BAD_WORKLOAD;
  }
  if (id == 3) {
    __asm__ volatile("udf #7");
    put(msg, cap, &n, "ESCAPED: an undefined instruction executed");
    return MCULAB_ERR_BAD_WORKLOAD;
  }
#else
  if (id == 1) {
    const int fd = open(lines[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      close(fd);
      put(msg, cap, &n, "ESCAPED: created ");
      put(msg, cap, &n, lines[1]);
    } else {
      put(msg, cap, &n, "blocked: creating the marker: ");
      put(msg, cap, &n, strerror(errno));
    }
    return MCULAB_ERR_BAD_WORKLOAD;
  }
  if (id == 2) {
    const int fd = open(lines[0], O_RDONLY);
    if (fd < 0) {
      put(msg, cap, &n, "blocked: opening the token file: ");
      put(msg, cap, &n, strerror(errno));
      return MCULAB_ERR_BAD_WORKLOAD;
    }
    char data[64];
    const ssize_t got = read(fd, data, sizeof data - 1);
    close(fd);
    data[got > 0 ? got : 0] = 0;
    put(msg, cap, &n, got > 0 ? "ESCAPED: read the token file: " : "blocked: empty read");
    if (got > 0) put(msg, cap, &n, data);
    return MCULAB_ERR_BAD_WORKLOAD;
  }
  if (id == 4) swap_files_for_links();
  if (id == 3) {
    const int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)atoi_port(lines[2]));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int r = s < 0 ? -1 : connect(s, (struct sockaddr*)&a, sizeof a);
    const int err = errno;
    if (s >= 0) close(s);
    if (r == 0) {
      put(msg, cap, &n, "ESCAPED: connected to the lab server's port ");
      put(msg, cap, &n, lines[2]);
    } else {
      put(msg, cap, &n, "blocked: connecting to the lab server: ");
      put(msg, cap, &n, strerror(err));
    }
    return MCULAB_ERR_BAD_WORKLOAD;
  }
#endif
  put(msg, cap, &n, "unknown attack: the case id must be 1, 2 or 3");
  return MCULAB_ERR_BAD_PARAMS;
}

static uint16_t prepare(void* user, const mculab_case_info* info) {
  (void)user;
  parse_blob(info->blob, info->blob_len);
  return attack(info->case_id, info->error_text, info->error_text_len);
}

static void invoke(void* user) { (void)user; }

static const mculab_workload_ops kHostile = {
    .name = "hostile", .prepare = prepare, .invoke = invoke};

int main(int argc, char** argv) { return mculab_runner_main(argc, argv, &kHostile); }
