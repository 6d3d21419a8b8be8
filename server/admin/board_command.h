// `mculab-server admin board BOARD --maintenance on|off [--reason TEXT] | --agent NAME |
// --history`: the live board state is held by the running server, so this calls its SetMaintenance
// / AssignBoard / BoardHistory RPCs (admin; the same ones `mculab board` uses) over gRPC.
#pragma once

namespace mculab::server::admin {

// argv[0] is "board". Returns the process exit code: 0 done, 1 the request failed, 2 bad usage.
int RunBoardCommand(int argc, char** argv);

}  // namespace mculab::server::admin
