#include "lab_fixture.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace toysched::testing {
namespace fs = std::filesystem;

std::string build_dir() {
  const char* b = std::getenv("TOYSCHED_BUILD");
  if (!b) throw std::runtime_error("TOYSCHED_BUILD is not set: run through meson test or ./dev test");
  return b;
}

std::string unique_name(const std::string& prefix) {
  static std::mt19937 rng(std::random_device{}());
  return prefix + "-" + std::to_string(rng() % 1000000);
}

std::string run_command(const std::vector<std::string>& argv, int* status, std::string* err) {
  char out_tmpl[] = "/tmp/toysched-cmd-out.XXXXXX";
  char err_tmpl[] = "/tmp/toysched-cmd-err.XXXXXX";
  int out_fd = mkstemp(out_tmpl), err_fd = mkstemp(err_tmpl);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  int st = -1;
  if (rc == 0) waitpid(pid, &st, 0);
  close(out_fd);
  close(err_fd);
  auto slurp = [](const char* p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    fs::remove(p);
    return ss.str();
  };
  std::string out = slurp(out_tmpl), e = slurp(err_tmpl);
  int code = (rc == 0 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
  if (status) *status = code;
  if (err) *err = e;
  if (!status && code != 0) throw std::runtime_error(argv[0] + " failed (" + std::to_string(code) + "): " + e);
  return out;
}

namespace {

// kube-lab --dir DIR FLAGS with stdout and stderr to out_path, leading a
// process group of its own (so that stop() reaches its kube-scheduler child
// too), and SIGTERM as its parent-death signal (so that a test binary that
// crashes or is killed on a timeout leaves no lab behind). fork and exec
// rather than posix_spawn, which can set neither of the two; between them
// only async-signal-safe calls, everything prepared before the fork.
pid_t spawn_lab(const std::vector<std::string>& argv, const std::string& out_path) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("cannot start kube-lab: fork: " + std::string(strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);  // the parent died before prctl
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) _exit(127);
    execv(args[0], args.data());
    _exit(127);
  }
  setpgid(pid, 0);  // from this side too: the group exists before we might signal it
  return pid;
}

// A lab killed with SIGKILL leaves DIR/ready behind. Remove it, but only while
// no lab holds DIR (its flock on DIR/lock): a live lab's file is its own, and
// the lab we start will refuse that DIR anyway.
void drop_stale_ready(const std::string& dir) {
  int fd = open((dir + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) unlink((dir + "/ready").c_str());
  close(fd);  // releases the flock, if taken
}

// The first line of a file, or "" if there is none (yet).
std::string first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

Lab Lab::start(std::vector<std::string> flags, std::string dir) {
  Lab lab;
  if (dir.empty()) {
    char tmpl[] = "/tmp/toysched-itest-lab.XXXXXX";
    dir = mkdtemp(tmpl);
    lab.owned_dir_ = true;
  }
  lab.dir_ = dir;
  const std::string out_path = dir + ".out";
  std::vector<std::string> argv = {build_dir() + "/kube-lab", "--dir", dir};
  argv.insert(argv.end(), flags.begin(), flags.end());
  drop_stale_ready(dir);
  lab.pid_ = spawn_lab(argv, out_path);
  // Ready once DIR/ready names the kubeconfig (the lab writes it when every
  // component it runs has synced) and DIR/lock names our lab (a lab that did
  // not get DIR must not take the holder's file). Its death or the deadline
  // end the wait.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  for (;;) {
    lab.kubeconfig_ = first_line(dir + "/ready");
    if (!lab.kubeconfig_.empty() && first_line(dir + "/lock") == std::to_string(lab.pid_)) return lab;
    int st;
    if (waitpid(lab.pid_, &st, WNOHANG) == lab.pid_) {
      lab.pid_ = -1;
      throw std::runtime_error("kube-lab exited before it was ready: " + slurp(out_path));
    }
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("kube-lab not ready in 180 s: " + slurp(out_path));  // ~Lab stops it
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

Lab::Lab(Lab&& o) noexcept
    : dir_(std::move(o.dir_)), kubeconfig_(std::move(o.kubeconfig_)), pid_(o.pid_), owned_dir_(o.owned_dir_) {
  o.pid_ = -1;
  o.owned_dir_ = false;
}

// SIGTERM to the lab's whole group; SIGKILL to it after 20 s. kill(-pgid, 0)
// succeeds while any process of the group is left (an unreaped leader too,
// hence the waitpid first).
void Lab::stop() {
  if (pid_ <= 0) return;
  bool reaped = false;
  auto group_alive = [&] {
    if (!reaped && waitpid(pid_, nullptr, WNOHANG) == pid_) reaped = true;
    return kill(-pid_, 0) == 0;
  };
  kill(-pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (group_alive() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (group_alive()) kill(-pid_, SIGKILL);
  if (!reaped) waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

Lab::~Lab() {
  stop();
  if (owned_dir_) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    fs::remove(dir_ + ".out", ec);
  }
}

Lab& Lab::shared() {
  static Lab* lab = [] {
    if (const char* k = std::getenv("TOYSCHED_SHARED_KUBECONFIG"); k && *k) {
      auto* l = new Lab();
      l->kubeconfig_ = k;
      l->dir_ = fs::path(k).parent_path().string();
      return l;
    }
    static Lab own = start({"--nodes", "3", "--controllers", "--kube-scheduler"});
    return &own;
  }();
  return *lab;
}

std::string Lab::kubectl(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {build_dir() + "/kubectl", "--kubeconfig", kubeconfig_};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv);
}

}  // namespace toysched::testing
