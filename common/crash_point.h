// Crash points: a test hook that ends the process abruptly at a named point, so a test can check
// what a crash there leaves behind (nothing said before it is committed, nothing lost, no id
// reused).
//
// Compiled in only when the build sets MCULAB_CRASH_POINTS (CMake option of the same name, OFF by
// default, defined for crash_point.cc alone so that switching it rebuilds one file); otherwise
// CrashPoint() does nothing and the environment is never read.
// When compiled in, the environment variable MCULAB_CRASH_AT selects the crash:
//   MCULAB_CRASH_AT=<point>[:<count>]   _exit(77) at the count-th time (default 1) the process
//                                       passes <point>
//   MCULAB_CRASH_AT=random:<seed>       one point and a count from 1 to 8, chosen from the seed
//                                       (among the server's points, or the agent's for
//                                       agent-random:<seed>)
// Before exiting it writes "mculab: crash point <point> (pass <n>): exiting with 77" to stderr.
// Thread-safety: CrashPoint() may be called from any thread.
#pragma once

#include <span>
#include <string_view>

namespace mculab {

// Every named point. The server's store passes the commit points around each transaction's
// COMMIT; the Lab passes the send points around each message it gives an agent, after the
// commit that message reports.
namespace crash_points {
inline constexpr std::string_view kBeforeCommit = "before-commit";
inline constexpr std::string_view kAfterCommit = "after-commit";
inline constexpr std::string_view kBeforeSendAssignment = "before-send-assignment";
inline constexpr std::string_view kAfterSendAssignment = "after-send-assignment";
inline constexpr std::string_view kBeforeSendAck = "before-send-ack";
inline constexpr std::string_view kAfterSendAck = "after-send-ack";
inline constexpr std::string_view kBeforeSendRunClosed = "before-send-run-closed";
inline constexpr std::string_view kAfterSendRunClosed = "after-send-run-closed";
inline constexpr std::string_view kBeforeSendCancel = "before-send-cancel";
inline constexpr std::string_view kAfterSendCancel = "after-send-cancel";
inline constexpr std::string_view kBeforeReply = "before-reply";  // Submit, Cancel: committed
inline constexpr std::string_view kAll[] = {
    kBeforeCommit,     kAfterCommit,     kBeforeSendAssignment, kAfterSendAssignment,
    kBeforeSendAck,    kAfterSendAck,    kBeforeSendRunClosed,  kAfterSendRunClosed,
    kBeforeSendCancel, kAfterSendCancel, kBeforeReply};

// The agent's points: after a batch is spooled (before it is sent), around every message it writes
// to the server, after a RunClosed arrives (before the run's spool is dropped), and mid-run (at the
// end of a case, between the runner's frames).
inline constexpr std::string_view kAgentAfterSpoolBatch = "agent-after-spool-batch";
inline constexpr std::string_view kAgentBeforeSend = "agent-before-send";
inline constexpr std::string_view kAgentAfterSend = "agent-after-send";
inline constexpr std::string_view kAgentAfterRunClosed = "agent-after-run-closed";
inline constexpr std::string_view kAgentMidRun = "agent-mid-run";
inline constexpr std::string_view kAgentAll[] = {
    kAgentAfterSpoolBatch, kAgentBeforeSend, kAgentAfterSend, kAgentAfterRunClosed, kAgentMidRun};
}  // namespace crash_points

inline constexpr int kCrashExitCode = 77;

void CrashPoint(std::string_view point);
// Whether this build has the hook (tests that need it skip otherwise).
bool CrashPointsCompiledIn();

}  // namespace mculab
