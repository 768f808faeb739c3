// The lab for C++ integration tests: a real kube-lab process, started by the
// one C++ launcher, which keeps the contract of devlib/lab.sh and
// devlib/lab.py (see lab/README.md): kube-lab leads a process group of its
// own, is ready once DIR/ready names its kubeconfig (or has failed when it
// dies first), and is stopped with SIGTERM to the group, SIGKILL after 20 s.
//
// Lab::shared() is the suite's shared lab when ./dev test started one
// (TOYSCHED_SHARED_KUBECONFIG), else one started for this test binary (3
// nodes, controllers, kube-scheduler) and stopped at exit. Lab::start() gives
// a private lab for tests that stop, restart or break it; it is torn down by
// its destructor, on failure too.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace toysched::testing {

class Lab {
 public:
  static Lab& shared();
  static Lab start(std::vector<std::string> flags, std::string dir = {});
  Lab(Lab&&) noexcept;
  Lab& operator=(Lab&&) = delete;
  ~Lab();

  const std::string& kubeconfig() const { return kubeconfig_; }
  const std::string& dir() const { return dir_; }
  // kubeconfig-cert: the same lab, client-certificate auth.
  std::string cert_kubeconfig() const { return dir_ + "/kubeconfig-cert"; }

  void stop();  // SIGTERM to its group and wait (a restart on dir() keeps the data)

  // Runs build/kubectl against this lab; returns stdout, throws with stderr
  // on a non-zero exit.
  std::string kubectl(const std::vector<std::string>& args) const;

 private:
  Lab() = default;
  std::string dir_, kubeconfig_;
  pid_t pid_ = -1;
  bool owned_dir_ = false;
};

std::string build_dir();
std::string run_command(const std::vector<std::string>& argv, int* status = nullptr, std::string* err = nullptr);
// A fresh namespace name for this test (deleted by the caller when done).
std::string unique_name(const std::string& prefix);

}  // namespace toysched::testing
