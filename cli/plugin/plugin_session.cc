#include "cli/plugin/plugin_session.h"

#include <cctype>
#include <iostream>
#include <iterator>

#include <fmt/format.h>

#include "cli/plugin/plugin_args.h"
#include "harness/conformance/case_file.h"
#include "harness/diff/differential.h"
#include "harness/diff/engines.h"
#include "support/hex.h"

namespace bpfdiff {
namespace {

// The runner writes "01  0a  " and a newline; by hand people write "010a"
// or "01 0a". Read token by token (each one or more whole bytes), so that an
// error names the token and where it starts.
Result<std::vector<uint8_t>> ParseHexTokens(std::string_view text) {
  auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  std::vector<uint8_t> bytes;
  size_t start = 0;
  while (start < text.size()) {
    if (is_space(text[start])) {
      ++start;
      continue;
    }
    size_t end = start;
    while (end < text.size() && !is_space(text[end])) ++end;
    const std::string_view token = text.substr(start, end - start);
    if (token.size() % 2 != 0) {
      return Fail("'{}' at offset {} has an odd number of hex digits", token, start);
    }
    auto token_bytes = ParseHexBytes(token);
    if (!token_bytes) return Fail("'{}' at offset {} is not hex bytes", token, start);
    bytes.insert(bytes.end(), token_bytes->begin(), token_bytes->end());
    start = end;
  }
  return bytes;
}

PluginReply Reply(int status, std::string err) {
  // The runner strips one trailing newline; a message without one would
  // still compare equal, but every other line bpfdiff prints ends in one.
  return {status, "", err + "\n"};
}

Result<CaseSource> DecodeRequest(const PluginArgs& args, std::string_view program_hex) {
  auto bytes = ParseHexTokens(program_hex);
  if (!bytes) return Fail("program on stdin: {}", bytes.message());
  if (bytes->empty()) return Fail("program on stdin: no instructions");
  if (bytes->size() % isa::kInsnSize != 0) {
    return Fail("program on stdin: {} bytes is not a whole number of {}-byte instructions", bytes->size(),
                isa::kInsnSize);
  }
  auto memory = ParseHexTokens(args.memory_hex);
  if (!memory) return Fail("memory argument: {}", memory.message());

  CaseSource source;
  source.programs.emplace_back();
  for (size_t i = 0; i < bytes->size(); i += isa::kInsnSize) {
    source.programs[0].push_back(isa::Insn::FromBytes(&(*bytes)[i]));
  }
  source.memory = std::move(memory).value();
  return source;
}

PluginReply RunCase(const CaseSource& source, std::string_view engine, const PlantedBugs& bugs,
                    std::string_view program, UnicornFault unicorn_fault) {
  SandboxOptions sandbox_options;
  sandbox_options.pack_bugs = bugs.pack;
  sandbox_options.unicorn_fault = unicorn_fault;
  // The harness failing is not the program failing: exit 2, so that the
  // runner never takes the message for the test's error text.
  auto sandbox = Sandbox::Create(sandbox_options);
  if (!sandbox) return Reply(kPluginExitBadInput, fmt::format("{}: could not run: {}", program, sandbox.message()));
  auto engines = MakeEngines(**sandbox, engine, bugs.jit);
  if (!engines) return Reply(kPluginExitBadInput, engines.message());
  DifferentialRunner runner(**sandbox, std::move(engines).value());
  const CaseRun run = runner.Run(source);
  if (auto failure = (*sandbox)->UnicornFailure()) {
    return Reply(kPluginExitBadInput, fmt::format("{}: could not run: {}", program, *failure));
  }

  // The load step's message is what `-- error` lines of rejected programs say.
  if (run.load_error) return Reply(kPluginExitFailed, *run.load_error);
  // An engine that could not compile fails the test. An engine left
  // without a run because the reference ran out of its budget does not:
  // the reference's own error below says what happened.
  for (const EngineRun& engine_run : run.runs) {
    if (!engine_run.prepare_error.empty()) {
      return Reply(kPluginExitFailed, fmt::format("{} {}", engine_run.engine, engine_run.WhyNotRun()));
    }
  }
  // A divergence before the reference's own error: otherwise a JIT that
  // faulted differently would pass every `-- error` test on the
  // interpreter's message.
  if (const EngineRun* diverged = run.FirstDivergence()) {
    return Reply(kPluginExitFailed, fmt::format("{}: {}", diverged->engine, diverged->verdict.Describe()));
  }
  const Outcome& reference = *run.runs.front().outcome;
  if (const std::string error = ErrorText(reference); !error.empty()) return Reply(kPluginExitFailed, error);
  return {kPluginExitOk, fmt::format("{:x}\n", reference.r0), ""};
}

}  // namespace

PluginReply ServePlugin(const PluginArgs& args, std::string_view program_hex, const PlantedBugs& bugs,
                        std::string_view program, UnicornFault unicorn_fault) {
  auto source = DecodeRequest(args, program_hex);
  if (!source) return Reply(kPluginExitBadInput, fmt::format("{}: {}", program, source.message()));
  return RunCase(*source, args.engine, bugs, program, unicorn_fault);
}

int ServePluginOnStdio(std::span<const std::string> args, std::string_view program, const PlantedBugs& bugs,
                       UnicornFault unicorn_fault) {
  // Arguments first: --help and a bad option must not wait for stdin.
  auto parsed = ParsePluginArgs(args);
  if (!parsed) {
    fmt::print(stderr, "{}: {}\n", program, parsed.message());
    return kPluginExitBadInput;
  }
  if (parsed->help) {
    fmt::print(stdout, "{}", PluginUsage(program));
    return kPluginExitOk;
  }
  const std::string input(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>{});
  const PluginReply reply = ServePlugin(*parsed, input, bugs, program, unicorn_fault);
  fmt::print(stdout, "{}", reply.out);
  fmt::print(stderr, "{}", reply.err);
  return reply.exit_status;
}

}  // namespace bpfdiff
