/* Port "host": the runner as a Linux process. Frames on stdin/stdout (binary, written whole per
 * frame), the workload read from the file named by argv[1], CLOCK_MONOTONIC in nanoseconds. No
 * counters: HELLO lists no unit.
 *
 * The core runs on a thread whose stack is a static array, so the runner can paint it and report
 * the stack's high-water mark like the firmware does. */
#include "port.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define HOST_WORKLOAD_MAX (16u << 20)
#define HOST_ARENA_BYTES (64u << 20)
#define HOST_STACK_BYTES (1u << 20)

volatile uint32_t mculab_marker_region[MCULAB_MARKER_WORDS];
static uint8_t runner_stack[HOST_STACK_BYTES] __attribute__((aligned(64)));

static uint8_t workload_buf[HOST_WORKLOAD_MAX];
static uint8_t arena_buf[HOST_ARENA_BYTES];
static const char* workload_path;
static char workload_error[96];
static struct utsname host_uname;
static char cpu_name[16];
static uint8_t in_buf[512];
static size_t in_len, in_pos;
static int in_closed;

static const char* load_workload(size_t* len) {
  *len = 0;
  if (workload_path == NULL) return "no workload file given (usage: mculab-runner-host FILE)";
  const int fd = open(workload_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(workload_error, sizeof workload_error, "cannot open %s: %s", workload_path,
             strerror(errno));
    return workload_error;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size > (off_t)HOST_WORKLOAD_MAX) {
    close(fd);
    snprintf(workload_error, sizeof workload_error, "workload file is over %u bytes",
             HOST_WORKLOAD_MAX);
    return workload_error;
  }
  size_t got = 0;
  while (got < (size_t)st.st_size) {
    const ssize_t n = read(fd, workload_buf + got, (size_t)st.st_size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fd);
  *len = got;
  return NULL;
}

void mculab_port_init(mculab_port_info* info) {
  signal(SIGPIPE, SIG_IGN); /* a closed link shows up as a failed write */
  memset(info, 0, sizeof *info);
  info->port = "host";
  if (uname(&host_uname) == 0) {
    for (size_t i = 0; i + 1 < sizeof cpu_name && host_uname.machine[i]; ++i) {
      cpu_name[i] = host_uname.machine[i];
    }
  }
  info->cpu = cpu_name;
  info->num_units = 0;
  info->flags = 0;
  info->timer_unit = MCULAB_TIMER_NANOSECONDS;
  info->clock_hz = 0;
  size_t len = 0;
  info->workload_error = load_workload(&len);
  info->workload = info->workload_error ? NULL : workload_buf;
  /* The region is what the file holds: the parser checks the header against it. */
  info->workload_max = info->workload_error ? HOST_WORKLOAD_MAX : len;
  info->workload_addr = 0;
  info->arena = arena_buf;
  info->arena_bytes = sizeof arena_buf;
  info->stack_low = runner_stack;
  info->stack_bytes = sizeof runner_stack;
}

int mculab_port_write(const uint8_t* data, size_t len) {
  while (len > 0) {
    const ssize_t n = write(STDOUT_FILENO, data, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    data += n;
    len -= (size_t)n;
  }
  return 0;
}

static int fill(int timeout_ms) {
  if (in_closed) return -1;
  struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN, .revents = 0};
  for (;;) {
    const int r = poll(&pfd, 1, timeout_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return 0;
    break;
  }
  for (;;) {
    const ssize_t n = read(STDIN_FILENO, in_buf, sizeof in_buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      in_closed = 1;
      return -1;
    }
    in_len = (size_t)n;
    in_pos = 0;
    return 1;
  }
}

int mculab_port_poll_byte(void) {
  if (in_pos == in_len && fill(0) <= 0) return -1;
  return in_buf[in_pos++];
}

int mculab_port_read_byte(void) {
  while (in_pos == in_len) {
    const int r = fill(-1);
    if (r < 0) return -1;
  }
  return in_buf[in_pos++];
}

void mculab_port_timer_align(void) {}

uint64_t mculab_port_timer_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void mculab_port_exit(int status) { exit(status); }

typedef struct {
  const mculab_workload_ops* ops;
  int status;
} session;

static void* run_session(void* arg) {
  session* s = (session*)arg;
  s->status = mculab_core_run(s->ops);
  return NULL;
}

int mculab_runner_main(int argc, char** argv, const mculab_workload_ops* ops) {
  workload_path = argc > 1 ? argv[1] : NULL;
  session s = {ops, 1};
  pthread_t thread;
  pthread_attr_t attr;
  int rc = pthread_attr_init(&attr);
  if (rc == 0) rc = pthread_attr_setstack(&attr, runner_stack, sizeof runner_stack);
  if (rc == 0) rc = pthread_create(&thread, &attr, run_session, &s);
  if (rc == 0) rc = pthread_join(thread, NULL);
  if (rc != 0) {
    fprintf(stderr, "mculab runner: cannot run the runner thread: %s\n", strerror(rc));
    s.status = 1;
  }
  (void)pthread_attr_destroy(&attr);
  mculab_port_exit(s.status);
  return s.status;
}
