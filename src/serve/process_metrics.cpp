// process_* as Prometheus' Go and Python clients export them (the names
// kube-scheduler's /metrics has, from client_golang's process collector),
// read from /proc at each scrape.
#include "toysched/serve/metrics.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace toysched::serve {
namespace {

// A number from /proc; 0 for anything else (a scrape never throws).
double num(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

// Counters only go up: a total that went down (an interface gone) is kept.
void raise_to(Counter& c, double total) {
  if (total > c.value()) c.inc(total - c.value());
}

struct ProcStat {
  double cpu_seconds = 0;
  double start_time = 0;  // seconds since the epoch
  double virtual_bytes = 0;
  double resident_bytes = 0;
};

// /proc/self/stat fields after the command (which may hold spaces, so the
// parse starts after its closing parenthesis).
ProcStat read_stat() {
  ProcStat out;
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos) return out;
  std::istringstream fields(text.substr(close + 2));
  std::vector<std::string> f{std::istream_iterator<std::string>(fields), std::istream_iterator<std::string>()};
  // Field 3 (state) is f[0]; utime 14, stime 15, starttime 22, vsize 23, rss 24.
  if (f.size() < 22) return out;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  out.cpu_seconds = (num(f[11]) + num(f[12])) / ticks;
  out.virtual_bytes = num(f[20]);
  out.resident_bytes = num(f[21]) * static_cast<double>(sysconf(_SC_PAGESIZE));
  std::ifstream st("/proc/stat");
  for (std::string line; std::getline(st, line);) {
    if (line.rfind("btime ", 0) == 0) {
      out.start_time = num(line.substr(6)) + num(f[19]) / ticks;
      break;
    }
  }
  return out;
}

double open_fds() {
  std::error_code ec;
  double n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec); !ec && it != std::filesystem::end(it);
       it.increment(ec))
    ++n;
  return n;
}

// The soft limits "Max open files" and "Max address space"; "unlimited"
// is 2^64-1, the value the kernel means by it.
void read_limits(double& max_fds, double& max_vm) {
  std::ifstream in("/proc/self/limits");
  for (std::string line; std::getline(in, line);) {
    auto value = [&](std::size_t at) {
      std::istringstream s(line.substr(at));
      std::string soft;
      s >> soft;
      return soft == "unlimited" ? 18446744073709551615.0 : num(soft);
    };
    if (line.rfind("Max open files", 0) == 0) max_fds = value(26);
    if (line.rfind("Max address space", 0) == 0) max_vm = value(26);
  }
}

// Bytes received and sent over every interface of the process's network
// namespace (/proc/self/net/dev), as client_golang's process collector.
void read_net(double& rx, double& tx) {
  rx = tx = 0;
  std::ifstream in("/proc/self/net/dev");
  std::string line;
  for (int skip = 0; skip < 2 && std::getline(in, line); ++skip) {
  }
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::istringstream s(line.substr(colon + 1));
    std::vector<double> v{std::istream_iterator<double>(s), std::istream_iterator<double>()};
    if (v.size() >= 9) {
      rx += v[0];
      tx += v[8];
    }
  }
}

}  // namespace

void add_process_metrics(Registry& reg) {
  auto& cpu = reg.counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.").with({});
  auto& fds = reg.gauge("process_open_fds", "Number of open file descriptors.").with({});
  auto& max_fds = reg.gauge("process_max_fds", "Maximum number of open file descriptors.").with({});
  auto& vm = reg.gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.").with({});
  auto& max_vm =
      reg.gauge("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.").with({});
  auto& rss = reg.gauge("process_resident_memory_bytes", "Resident memory size in bytes.").with({});
  auto& start =
      reg.gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.").with({});
  auto& rx =
      reg.counter("process_network_receive_bytes_total", "Number of bytes received by the process over the network.")
          .with({});
  auto& tx =
      reg.counter("process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.")
          .with({});
  reg.on_collect([&] {
    const ProcStat st = read_stat();
    raise_to(cpu, st.cpu_seconds);
    vm.set(st.virtual_bytes);
    rss.set(st.resident_bytes);
    start.set(st.start_time);
    fds.set(open_fds());
    double mf = 0, mv = 0;
    read_limits(mf, mv);
    max_fds.set(mf);
    max_vm.set(mv);
    double r = 0, t = 0;
    read_net(r, t);
    raise_to(rx, r);
    raise_to(tx, t);
  });
}

}  // namespace toysched::serve
