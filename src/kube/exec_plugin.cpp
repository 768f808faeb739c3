// The exec plugin as a child process (see exec_plugin.hpp for why it is
// spawned the way it is).
#include "exec_plugin.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

extern char** environ;

namespace toysched::kube {

namespace asio = boost::asio;
using std::chrono::milliseconds;

namespace {

constexpr std::size_t kStderrKept = 4096;

Error exec_error(std::string message) { return {make_error_code(errc::exec_failed), std::move(message)}; }

// Ours, minus what the block sets, then the block's, then
// KUBERNETES_EXEC_INFO: the last word on a name is the block's, as Go's
// exec.Cmd keeps the last value of a duplicated name.
std::vector<std::string> child_env(const ExecConfig& c) {
  std::set<std::string> overridden{"KUBERNETES_EXEC_INFO"};
  for (const auto& [name, value] : c.env) overridden.insert(name);
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    if (!overridden.count(entry.substr(0, entry.find('=')))) env.push_back(std::move(entry));
  }
  for (const auto& [name, value] : c.env) env.push_back(name + "=" + value);
  env.push_back("KUBERNETES_EXEC_INFO=" + exec_info_json(c));
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// The child, killed with its process group and reaped when the run ends
// any way at all (an error, a timeout, the loop torn down).
struct Child {
  pid_t pid = -1;
  bool reaped = false;
  int status = 0;

  bool poll() {
    if (!reaped && waitpid(pid, &status, WNOHANG) == pid) reaped = true;
    return reaped;
  }
  void kill_group() {
    if (!reaped) ::kill(-pid, SIGKILL);
  }
  ~Child() {
    if (pid <= 0 || reaped) return;
    kill_group();
    waitpid(pid, &status, 0);  // SIGKILLed: it is gone at once
  }
};

// Spawns the child with stdout and stderr on the pipes' write ends.
int spawn(const ExecConfig& c, int out_fd, int err_fd, pid_t& pid) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<std::string> argv_s{c.command};
  argv_s.insert(argv_s.end(), c.args.begin(), c.args.end());
  std::vector<std::string> env_s = child_env(c);
  auto argv = pointers(argv_s);
  auto envp = pointers(env_s);
  // A bare name is looked up in our $PATH, as Go's exec.Command does.
  const bool has_slash = c.command.find('/') != std::string::npos;
  const int rc = has_slash ? posix_spawn(&pid, c.command.c_str(), &fa, &attr, argv.data(), envp.data())
                           : posix_spawnp(&pid, c.command.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  return rc;
}

// Reads `sd` to its end (so the child never blocks on a full pipe),
// keeping at most `cap` bytes: the first ones (stdout: more is an error,
// `over`) or the last ones (stderr: its last line says why it failed).
asio::awaitable<void> drain(asio::posix::stream_descriptor& sd, std::string& into, std::size_t cap, bool keep_tail,
                            bool& over) {
  char buf[8192];
  for (;;) {
    auto [ec, n] = co_await sd.async_read_some(asio::buffer(buf), asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;  // EOF, or an error: either way nothing more comes
    into.append(buf, n);
    if (into.size() <= cap) continue;
    over = true;
    if (keep_tail)
      into.erase(0, into.size() - cap);
    else
      into.resize(cap);
  }
}

std::string last_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  if (auto nl = s.find_last_of('\n'); nl != std::string::npos) s.erase(0, nl + 1);
  for (char& ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
  if (s.size() > 300) s = s.substr(0, 300) + "...";
  return s.empty() ? s : " (stderr: " + s + ")";
}

std::string not_found(const ExecConfig& c, int err) {
  std::string m = "executable " + c.command + " " + (err == ENOENT ? "not found" : std::strerror(err));
  if (err == ENOENT) {
    m += "; it is needed to get credentials for this kubeconfig user";
    if (!c.install_hint.empty()) m += ". " + c.install_hint;
  }
  return m;
}

// Waits for the exit (the pipes closed already) until `deadline`.
asio::awaitable<bool> reap(Child& child, asio::steady_timer::time_point deadline) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  auto step = milliseconds(1);
  while (!child.poll()) {
    if (asio::steady_timer::clock_type::now() >= deadline) co_return false;
    t.expires_after(step);
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
    step = std::min(step * 2, milliseconds(50));
  }
  co_return true;
}

}  // namespace

asio::awaitable<expected<std::string>> run_exec_plugin(asio::any_io_executor ex, const ExecConfig& c,
                                                       milliseconds timeout) {
  using namespace asio::experimental::awaitable_operators;
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) co_return exec_error(std::string("pipe: ") + std::strerror(errno));
  if (pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]), ::close(out[1]);
    co_return exec_error(std::string("pipe: ") + std::strerror(errno));
  }
  asio::posix::stream_descriptor out_sd(ex, out[0]), err_sd(ex, err[0]);
  Child child;
  const int rc = spawn(c, out[1], err[1], child.pid);
  ::close(out[1]), ::close(err[1]);  // the child holds its own copies: EOF comes when it (and its children) exit
  if (rc != 0) {
    child.pid = -1;
    co_return exec_error(not_found(c, rc));
  }
  const auto deadline = asio::steady_timer::clock_type::now() + timeout;
  asio::steady_timer timer(ex, deadline);
  std::string stdout_text, stderr_text;
  bool too_much = false, ignored = false;
  auto done = co_await ((drain(out_sd, stdout_text, kMaxExecOutputBytes, false, too_much) &&
                         drain(err_sd, stderr_text, kStderrKept, true, ignored)) ||
                        timer.async_wait(asio::use_awaitable));
  const auto secs = std::to_string(timeout.count() / 1000.0).substr(0, 4);
  if (done.index() == 1 || !co_await reap(child, deadline)) {
    child.kill_group();
    co_return exec_error("executable " + c.command + " did not finish within " + secs + "s; killed it" +
                         last_line(stderr_text));
  }
  if (WIFSIGNALED(child.status))
    co_return exec_error("executable " + c.command + " was killed by signal " + std::to_string(WTERMSIG(child.status)) +
                         last_line(stderr_text));
  if (const int code = WEXITSTATUS(child.status); code != 0)
    co_return exec_error("executable " + c.command + " failed with exit code " + std::to_string(code) +
                         last_line(stderr_text));
  if (too_much)
    co_return exec_error("executable " + c.command + " printed more than " + std::to_string(kMaxExecOutputBytes >> 20) +
                         " MiB");
  co_return stdout_text;
}

}  // namespace toysched::kube
