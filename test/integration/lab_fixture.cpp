#include "lab_fixture.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

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

Lab Lab::start(std::vector<std::string> flags, std::string dir) {
  Lab lab;
  if (dir.empty()) {
    char tmpl[] = "/tmp/toysched-itest-lab.XXXXXX";
    dir = mkdtemp(tmpl);
    lab.owned_dir_ = true;
  }
  lab.dir_ = dir;
  std::string out_path = dir + ".out";
  std::vector<std::string> argv = {build_dir() + "/kube-lab", "--dir", dir};
  argv.insert(argv.end(), flags.begin(), flags.end());
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  int rc = posix_spawn(&lab.pid_, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot start kube-lab: " + std::string(strerror(rc)));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  for (;;) {
    std::ifstream f(out_path);
    std::string line;
    while (std::getline(f, line))
      if (line.rfind("ready kubeconfig=", 0) == 0) lab.kubeconfig_ = line.substr(17);
    if (!lab.kubeconfig_.empty()) return lab;
    int st;
    if (waitpid(lab.pid_, &st, WNOHANG) == lab.pid_) {
      lab.pid_ = -1;
      std::ifstream g(out_path);
      std::stringstream ss;
      ss << g.rdbuf();
      throw std::runtime_error("kube-lab exited before ready: " + ss.str());
    }
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("kube-lab not ready in 180 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

Lab::Lab(Lab&& o) noexcept
    : dir_(std::move(o.dir_)), kubeconfig_(std::move(o.kubeconfig_)), pid_(o.pid_), owned_dir_(o.owned_dir_) {
  o.pid_ = -1;
  o.owned_dir_ = false;
}

void Lab::stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  for (int i = 0; i < 200; ++i) {
    int st;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
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
