// One run of the bpf_conformance plugin protocol: arguments and the stdin
// text in, the stdout text, the stderr text and the exit status out. Both
// the `bpfdiff_plugin` executable and the `bpfdiff plugin` subcommand are
// this function on the process's own streams.
//
// What bpf_conformance_runner makes of the reply: exit 0 and r0 as hex on
// stdout is a result; a non-zero exit with stdout empty makes stderr (up to
// a '\r', trailing white space removed) the error text it compares with the
// test's `-- error` line. So stderr carries exactly the text our `.data`
// files expect (ErrorText, or the load step's message), and nothing else.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "cli/plugin/plugin_args.h"
#include "harness/machine/machine.h"
#include "harness/planted/planted_bugs.h"

namespace bpfdiff {

// Exit statuses, as every bpfdiff command uses them (cli/exit_status.h).
inline constexpr int kPluginExitOk = 0;
inline constexpr int kPluginExitFailed = 1;    // the program erred, or engines diverged
inline constexpr int kPluginExitBadInput = 2;  // could not run: bad arguments, malformed hex, Unicorn failed

struct PluginReply {
  int exit_status = kPluginExitOk;
  std::string out;  // for stdout
  std::string err;  // for stderr
};

// Runs the program in `program_hex` (what came on stdin) as `args` say;
// `program` names the command in messages about malformed input.
// `unicorn_fault` makes a Unicorn call fail on purpose (the mains read
// BPFDIFF_UNICORN_FAULT): a Unicorn failure is exit 2 with the message on
// stderr and nothing on stdout, never a result or a test's error text.
PluginReply ServePlugin(const PluginArgs& args, std::string_view program_hex, const PlantedBugs& bugs,
                        std::string_view program = "bpfdiff_plugin", UnicornFault unicorn_fault = {});

// The protocol on this process: parses `args` (the arguments after the
// program name, see plugin_args.h), then reads stdin to its end, writes the
// reply to stdout and stderr and returns the exit status. --help and bad
// arguments answer without reading stdin. `bugs` come from the caller's
// main (BPFDIFF_PLANTED_BUG), as does `unicorn_fault`.
int ServePluginOnStdio(std::span<const std::string> args, std::string_view program, const PlantedBugs& bugs,
                       UnicornFault unicorn_fault = {});

}  // namespace bpfdiff
