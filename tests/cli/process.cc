#include "tests/cli/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <tuple>

extern char** environ;

namespace bpfdiff::test {
namespace {

// Both ends close on exec: posix_spawn's dup2 onto 0/1/2 clears the flag
// only on the child's copies, so no stray pipe end keeps a stream open.
struct Pipe {
  int read_end = -1, write_end = -1;
  ~Pipe() {
    if (read_end >= 0) close(read_end);
    if (write_end >= 0) close(write_end);
  }
};

Status OpenPipe(Pipe& pipe) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Fail("pipe2: {}", std::strerror(errno));
  pipe.read_end = fds[0];
  pipe.write_end = fds[1];
  return {};
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// Writes stdin and drains stdout and stderr together, so that a plugin
// that writes much before reading (or never reads) cannot deadlock us.
Status Exchange(int& to_child, int& from_out, int& from_err, std::string_view input,
                ProcessResult& result) {
  size_t written = 0;
  if (input.empty()) CloseFd(to_child);
  while (to_child >= 0 || from_out >= 0 || from_err >= 0) {
    std::array<pollfd, 3> fds = {pollfd{to_child, POLLOUT, 0}, pollfd{from_out, POLLIN, 0},
                                 pollfd{from_err, POLLIN, 0}};
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return Fail("poll: {}", std::strerror(errno));
    }
    if (to_child >= 0 && (fds[0].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
      const ssize_t n = write(to_child, input.data() + written, input.size() - written);
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        CloseFd(to_child);  // EPIPE: the plugin stopped reading; what it said still counts
      } else if (n > 0) {
        written += static_cast<size_t>(n);
        if (written == input.size()) CloseFd(to_child);  // the runner closes stdin after the program
      }
    }
    for (auto [index, fd, text] : {std::tuple{1, &from_out, &result.out}, std::tuple{2, &from_err, &result.err}}) {
      if (*fd < 0 || (fds[index].revents & (POLLIN | POLLERR | POLLHUP)) == 0) continue;
      char buffer[4096];
      const ssize_t n = read(*fd, buffer, sizeof buffer);
      if (n > 0) {
        text->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        CloseFd(*fd);
      }
    }
  }
  return {};
}

}  // namespace

Result<ProcessResult> RunProcess(const std::string& path, const std::vector<std::string>& args,
                                             std::string_view stdin_text) {
  // A plugin that exits without reading its stdin must not kill the caller.
  signal(SIGPIPE, SIG_IGN);
  Pipe in, out, err;
  for (Pipe* pipe : {&in, &out, &err}) {
    if (auto opened = OpenPipe(*pipe); !opened) return opened.error();
  }
  fcntl(in.write_end, F_SETFL, O_NONBLOCK);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.read_end, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.write_end, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write_end, STDERR_FILENO);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(path.c_str()));
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return Fail("cannot run {}: {}", path, std::strerror(spawned));
  // Only the child keeps these ends: the streams end when it exits.
  CloseFd(in.read_end);
  CloseFd(out.write_end);
  CloseFd(err.write_end);

  ProcessResult result;
  const Status exchanged = Exchange(in.write_end, out.read_end, err.read_end, stdin_text, result);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Fail("waitpid: {}", std::strerror(errno));
  }
  if (!exchanged) return exchanged.error();
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace bpfdiff::test
