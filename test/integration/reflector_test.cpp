// Reflector<T> against real labs: the exact set after a big paginated list,
// a lab stopped and restarted under a live watch, a 410 after etcd
// compaction recovered by a relist that delivers the deletes it missed, and
// the kinds read only for the pod plugins, listed and watched.
//
// The io_context is pumped from the test thread (pump_until), so kubectl and
// lab restarts run between pumps while the reflector's sockets simply wait.
#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "async_run.hpp"
#include "lab_client.hpp"
#include "lab_fixture.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/kube/config.hpp"
#include "toysched/kube/reflector.hpp"
#include "toysched/kube/transport.hpp"
#include "toysched/log/log.hpp"

using namespace toysched;
using namespace toysched::kube;
using testing::Lab;
using testing::pump_until;
namespace asio = boost::asio;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

using Keys = std::set<std::string>;

// Records every delta by key, and when the last one came (to tell "quiet").
template <class T>
struct Recorder : Handler<T> {
  Keys added, updated, deleted;
  Clock::time_point last = Clock::now();

  void on_add(const T& o) override { note(added, o); }
  void on_update(const T&, const T& now) override { note(updated, now); }
  void on_delete(const T& o) override { note(deleted, o); }
  void clear() { added.clear(), updated.clear(), deleted.clear(); }

 private:
  void note(Keys& k, const T& o) {
    k.insert(ResourceTraits<T>::key(o));
    last = Clock::now();
  }
};

// One reflector with its handler, run as a coroutine on the caller's loop.
template <class T>
struct Running {
  Recorder<T> rec;
  Reflector<T> refl;
  bool done = false;

  Running(asio::io_context& io, Api& api, ListOptions opts = {}) : refl(api, rec, std::move(opts)) {
    asio::co_spawn(io, refl.run(), [this](std::exception_ptr e) {
      done = true;
      if (e) std::rethrow_exception(e);  // a bug: run() never throws by contract
    });
  }
  Keys keys() const {
    Keys k;
    for (const auto& [key, obj] : refl.store().objects()) k.insert(key);
    return k;
  }
  bool quiet(std::chrono::milliseconds d = 1500ms) const { return refl.synced() && Clock::now() - rec.last > d; }
};

Keys lines(const std::string& text, std::string_view strip_prefix = {}) {
  Keys out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (l.empty()) continue;
    if (!strip_prefix.empty() && l.rfind(strip_prefix, 0) == 0) l.erase(0, strip_prefix.size());
    out.insert(l);
  }
  return out;
}

// What kubectl shows, as ns/name (`-o name` drops the namespace under -A).
Keys kubectl_pods(const Lab& lab, const std::string& ns = {}) {
  std::vector<std::string> args = {"get", "pods"};
  if (ns.empty())
    args.push_back("-A");
  else
    args.insert(args.end(), {"-n", ns});
  args.push_back(R"(-o=jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end})");
  return lines(lab.kubectl(args));
}

Keys kubectl_nodes(const Lab& lab) { return lines(lab.kubectl({"get", "nodes", "-o", "name"}), "node/"); }

std::string pod_json(const std::string& ns, const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","namespace":")" + ns +
         R"(","labels":{"app":"reflector-test"}},"spec":{"schedulerName":"nobody","containers":[{"name":"c",)"
         R"("image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"10m","memory":"16Mi"}}}]}})";
}

std::string pod_name(const std::string& prefix, int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%05d", i);
  return prefix + "-" + buf;
}

// Creates pods prefix-<first..first+n-1> in ns as one List per kubectl
// process, `procs` processes at once (kubectl's own QPS limit is per process).
Keys create_pods(const Lab& lab, const std::string& ns, const std::string& prefix, int first, int n, int procs = 1) {
  Keys made;
  std::vector<std::string> files;
  const int per = (n + procs - 1) / procs;
  for (int p = 0; p < procs && p * per < n; ++p) {
    std::string path = (fs::temp_directory_path() / testing::unique_name("toysched-pods")).string() + ".json";
    std::ofstream f(path);
    f << R"({"apiVersion":"v1","kind":"List","items":[)";
    for (int i = first + p * per; i < first + std::min(n, (p + 1) * per); ++i) {
      if (i != first + p * per) f << ',';
      f << pod_json(ns, pod_name(prefix, i));
      made.insert(ns + "/" + pod_name(prefix, i));
    }
    f << "]}";
    files.push_back(path);
  }
  std::vector<std::thread> workers;
  std::vector<std::string> errors(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    workers.emplace_back([&, i] {
      try {
        lab.kubectl({"create", "-f", files[i], "-o", "name"});
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  for (auto& w : workers) w.join();
  for (auto& f : files) fs::remove(f);
  for (auto& e : errors) REQUIRE_MESSAGE(e.empty(), e);
  return made;
}

// Deletes pods at once (no kubelet here: grace 0 removes them immediately).
void delete_pods(const Lab& lab, const std::string& ns, const Keys& keys) {
  std::vector<std::string> args = {"delete", "pod", "-n", ns, "--grace-period=0", "--force", "--wait=false"};
  for (const auto& k : keys) args.push_back(k.substr(k.find('/') + 1));
  lab.kubectl(args);
}

template <class T>
void stop_and_drain(asio::io_context& io, Running<T>& r) {
  r.refl.stop();
  CHECK(pump_until(
      io, [&] { return r.done; }, 30s));
}

std::string read_port(const Lab& lab) {
  std::ifstream f(lab.dir() + "/port");
  std::string p;
  f >> p;
  return p;
}

// The lab again on DIR, on a port other than `old`: without DIR/port the lab
// draws one itself (lab/ports), and draws again if that is the old one.
Lab start_elsewhere(const std::vector<std::string>& flags, const std::string& dir, const std::string& old) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::filesystem::remove(dir + "/port");
    auto lab = Lab::start(flags, dir);
    if (read_port(lab) != old) return lab;
    lab.stop();
  }
  throw std::runtime_error("the lab came back on port " + old + " five times");
}

Keys first_n(const Keys& k, std::size_t n) {
  Keys out;
  for (auto it = k.begin(); it != k.end() && out.size() < n; ++it) out.insert(*it);
  return out;
}

Keys minus(const Keys& a, const Keys& b) {
  Keys out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

Keys plus(Keys a, const Keys& b) {
  a.insert(b.begin(), b.end());
  return a;
}

void print_stats(const char* what, const ReflectorStats& s) {
  std::printf("%s: lists=%llu watches=%llu relists_expired=%llu rewatch_clean=%llu rewatch_error=%llu events=%llu\n",
              what, static_cast<unsigned long long>(s.lists), static_cast<unsigned long long>(s.watches),
              static_cast<unsigned long long>(s.relists_expired), static_cast<unsigned long long>(s.rewatch_clean),
              static_cast<unsigned long long>(s.rewatch_error), static_cast<unsigned long long>(s.events));
}

double secs_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

TEST_CASE("2 000 pods and 500 nodes: the stores hold exactly what kubectl shows") {
  log::set_verbosity(2);
  auto lab = Lab::start({"--nodes", "500", "--no-kubelet"});
  const std::string ns = testing::unique_name("reflector-big");
  lab.kubectl({"create", "namespace", ns});
  auto t0 = Clock::now();
  const Keys made = create_pods(lab, ns, "p", 0, 2000, 4);
  std::printf("created 2000 pods with 4 kubectl processes in %.1f s\n", secs_since(t0));

  asio::io_context io;
  testing::LabClient c(io, lab.kubeconfig());
  t0 = Clock::now();
  Running<Pod> pods(io, *c.api);
  Running<Node> nodes(io, *c.api);
  double pods_synced = -1, nodes_synced = -1;
  REQUIRE(pump_until(
      io,
      [&] {
        if (pods_synced < 0 && pods.refl.synced()) pods_synced = secs_since(t0);
        if (nodes_synced < 0 && nodes.refl.synced()) nodes_synced = secs_since(t0);
        return pods.quiet() && nodes.quiet();
      },
      60s));
  std::printf("list (pages of 500, one loop): %zu pods synced after %.3f s, %zu nodes after %.3f s\n",
              pods.refl.store().size(), pods_synced, nodes.refl.store().size(), nodes_synced);

  const Keys want_pods = kubectl_pods(lab);
  const Keys want_nodes = kubectl_nodes(lab);
  CHECK(want_nodes.size() == 500);
  CHECK(std::includes(want_pods.begin(), want_pods.end(), made.begin(), made.end()));
  CHECK(pods.keys() == want_pods);
  CHECK(nodes.keys() == want_nodes);
  CHECK(pods.rec.added == want_pods);  // every object delivered once, as an add
  CHECK(pods.rec.deleted.empty());
  CHECK(pods.refl.stats().lists == 1);
  CHECK(nodes.refl.stats().lists == 1);

  // A watch is live: a change made now arrives as an event, not a relist.
  pods.rec.clear();
  const Keys gone = first_n(made, 7);
  delete_pods(lab, ns, gone);
  CHECK(pump_until(
      io, [&] { return pods.rec.deleted == gone; }, 30s));
  CHECK(pods.keys() == minus(want_pods, gone));
  CHECK(pods.refl.stats().lists == 1);

  stop_and_drain(io, pods);
  stop_and_drain(io, nodes);
  print_stats("pods", pods.refl.stats());
  print_stats("nodes", nodes.refl.stats());
}

TEST_CASE("the lab stopped and restarted under a live watch: the watch recovers and sees what came after") {
  log::set_verbosity(2);
  const std::vector<std::string> flags = {"--nodes", "3", "--no-kubelet"};
  auto lab = Lab::start(flags);
  const std::string ns = testing::unique_name("reflector-restart");
  lab.kubectl({"create", "namespace", ns});
  const Keys before = create_pods(lab, ns, "old", 0, 20);

  asio::io_context io;
  testing::LabClient c(io, lab.kubeconfig());
  Running<Pod> pods(io, *c.api);
  REQUIRE(pump_until(
      io, [&] { return pods.quiet(); }, 60s));
  REQUIRE(pods.keys() == kubectl_pods(lab));
  const auto errors_before = pods.refl.stats().rewatch_error;

  // Down: nothing is created; the reflector notices and keeps retrying.
  lab.stop();
  CHECK(pump_until(
      io, [&] { return pods.refl.stats().rewatch_error > errors_before; }, 30s));
  pump_until(
      io, [] { return false; }, 3s);  // a few failed reconnects

  auto t0 = Clock::now();
  auto again = Lab::start(flags, lab.dir());
  std::printf("lab restarted in %.1f s\n", secs_since(t0));
  // Right after the restart: new pods, and some old ones deleted.
  pods.rec.clear();
  const Keys fresh = create_pods(again, ns, "new", 0, 10);
  const Keys gone = first_n(before, 5);
  delete_pods(again, ns, gone);
  const Keys want = plus(minus(before, gone), fresh);
  CHECK(kubectl_pods(again) == want);

  t0 = Clock::now();
  const bool caught_up = pump_until(
      io, [&] { return pods.keys() == want && pods.quiet(); }, 90s);
  std::printf("reflector caught up %.1f s after the writes\n", secs_since(t0));
  print_stats("pods", pods.refl.stats());
  CHECK(caught_up);
  CHECK(pods.refl.stats().rewatch_error > errors_before);
  CHECK(pods.keys() == kubectl_pods(again));
  CHECK(pods.rec.added == fresh);
  CHECK(pods.rec.deleted == gone);

  // And the watch is live again: later changes arrive as events, no relist.
  const auto lists = pods.refl.stats().lists;
  pods.rec.clear();
  const Keys later = create_pods(again, ns, "later", 0, 3);
  const Keys later_gone = first_n(fresh, 2);
  delete_pods(again, ns, later_gone);
  CHECK(pump_until(
      io, [&] { return pods.rec.added == later && pods.rec.deleted == later_gone; }, 30s));
  CHECK(pods.refl.stats().lists == lists);
  CHECK(pods.keys() == kubectl_pods(again));

  stop_and_drain(io, pods);
}

TEST_CASE("410 after compaction: relist, deletes missed while away delivered as deletes") {
  log::set_verbosity(2);
  const std::vector<std::string> flags = {
      "--nodes", "3", "--no-kubelet", "--etcd-compaction-interval", "2s", "--watch-cache=false"};
  auto lab = Lab::start(flags);
  const std::string port = read_port(lab);
  const std::string ns = testing::unique_name("reflector-410");
  lab.kubectl({"create", "namespace", ns});
  const Keys before = create_pods(lab, ns, "old", 0, 30);

  asio::io_context io;
  testing::LabClient c(io, lab.kubeconfig());
  ListOptions only_ns;
  only_ns.field_selector = "metadata.namespace=" + ns;
  Running<Pod> pods(io, *c.api, only_ns);
  REQUIRE(pump_until(
      io, [&] { return pods.quiet(); }, 60s));
  REQUIRE(pods.keys() == before);
  const std::string old_rv = pods.refl.resource_version();

  // Away: the lab comes back on another port, so the reflector (still
  // dialling the old one) misses what happens there, and etcd compacts
  // past its resourceVersion.
  lab.stop();
  CHECK(pump_until(
      io, [&] { return pods.refl.stats().rewatch_error >= 1; }, 30s));
  auto away = start_elsewhere(flags, lab.dir(), port);
  const Keys gone = first_n(before, 10);
  delete_pods(away, ns, gone);
  const Keys fresh = create_pods(away, ns, "new", 0, 10);
  const Keys want = plus(minus(before, gone), fresh);
  // Compacted when a watch from the old resourceVersion is refused.
  bool compacted = false;
  const auto deadline = Clock::now() + 60s;
  while (!compacted && Clock::now() < deadline) {
    away.kubectl({"create", "configmap", testing::unique_name("tick"), "-n", ns});  // keep revisions moving
    int st = 0;
    std::string err;
    std::string out =
        testing::run_command({testing::build_dir() + "/kubectl", "--kubeconfig", away.kubeconfig(), "get", "--raw",
                              "/api/v1/namespaces/" + ns + "/pods?watch=1&timeoutSeconds=1&resourceVersion=" + old_rv},
                             &st, &err);
    const std::string said = out + err;
    compacted =
        said.find("\"code\":410") != std::string::npos || said.find("too old resource version") != std::string::npos;
    // Meanwhile the reflector keeps dialling the old port, and failing.
    if (!compacted)
      pump_until(
          io, [] { return false; }, 1s);
  }
  REQUIRE_MESSAGE(compacted, "etcd did not compact past resourceVersion " << old_rv << " in 60 s");
  away.stop();

  // Back on the old port: the re-watch from old_rv meets 410 and relists.
  pods.rec.clear();
  auto back_flags = flags;
  back_flags.insert(back_flags.end(), {"--port", port});
  auto back = Lab::start(back_flags, lab.dir());
  auto t0 = Clock::now();
  const bool caught_up = pump_until(
      io, [&] { return pods.keys() == want && pods.quiet(); }, 90s);
  std::printf("reflector relisted %.1f s after the lab came back\n", secs_since(t0));
  print_stats("pods", pods.refl.stats());
  CHECK(caught_up);
  CHECK(pods.refl.stats().relists_expired >= 1);
  CHECK(pods.refl.stats().lists >= 2);
  CHECK(pods.rec.deleted == gone);  // exactly those, from the relist's diff
  CHECK(pods.rec.added == fresh);
  CHECK(pods.keys() == kubectl_pods(back, ns));

  stop_and_drain(io, pods);
}

namespace {

// Two Services (one without a selector), a ReplicationController, a
// ReplicaSet with a matchExpression and a StatefulSet, none with replicas,
// created in ns.
void create_kinds(const Lab& lab, const std::string& ns) {
  const std::string tmpl = R"("template":{"metadata":{"labels":LABELS},"spec":{"containers":[{"name":"c",)"
                           R"("image":"registry.k8s.io/pause:3.10"}]}})";
  auto with_labels = [&](const std::string& labels) {
    std::string t = tmpl;
    return t.replace(t.find("LABELS"), 6, labels);
  };
  const std::string path = (fs::temp_directory_path() / testing::unique_name("toysched-kinds")).string() + ".json";
  {
    std::ofstream f(path);
    f << R"({"apiVersion":"v1","kind":"List","items":[)"
      << R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"selector":{"app":"web"},)"
      << R"("ports":[{"port":80}]}},)"
      << R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"external"},"spec":{"ports":[{"port":443}]}},)"
      << R"({"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"legacy"},"spec":{"replicas":0,)"
      << R"("selector":{"app":"legacy"},)" << with_labels(R"({"app":"legacy"})") << "}},"
      << R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"rs"},"spec":{"replicas":0,)"
      << R"("selector":{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"track","operator":"NotIn",)"
      << R"("values":["canary"]}]},)" << with_labels(R"({"app":"web","track":"stable"})") << "}},"
      << R"({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db"},"spec":{"replicas":0,)"
      << R"("serviceName":"web","selector":{"matchLabels":{"app":"db"}},)" << with_labels(R"({"app":"db"})") << "}}]}";
  }
  lab.kubectl({"create", "-n", ns, "-f", path, "-o", "name"});
  fs::remove(path);
}

}  // namespace

// The kinds read only for the pod plugins (issue 14): each Reflector lists
// and watches its real collection, and the decoded selectors are the ones
// the API server stored (after its defaulting), not ones we wrote by hand.
TEST_CASE("namespaces, services, replication controllers, replica sets, stateful sets: listed and watched") {
  log::set_verbosity(2);
  auto& lab = Lab::shared();
  const std::string ns = testing::unique_name("reflector-kinds");
  lab.kubectl({"create", "namespace", ns});
  lab.kubectl({"label", "namespace", ns, "team=plugins"});
  create_kinds(lab, ns);

  asio::io_context io;
  testing::LabClient c(io, lab.kubeconfig());
  ListOptions in_ns;
  in_ns.ns = ns;
  Running<Namespace> namespaces(io, *c.api);
  Running<Service> services(io, *c.api, in_ns);
  Running<ReplicationController> rcs(io, *c.api, in_ns);
  Running<ReplicaSet> rss(io, *c.api, in_ns);
  Running<StatefulSet> sss(io, *c.api, in_ns);
  REQUIRE(pump_until(
      io,
      [&] {
        return namespaces.quiet(300ms) && services.quiet(300ms) && rcs.quiet(300ms) && rss.quiet(300ms) &&
               sss.quiet(300ms);
      },
      60s));

  const Namespace* n = namespaces.refl.store().find(ns);
  REQUIRE(n != nullptr);
  CHECK(n->uid.size() == 36);
  REQUIRE(find_value(n->labels, "team") != nullptr);
  CHECK(*find_value(n->labels, "team") == "plugins");
  CHECK(*find_value(n->labels, "kubernetes.io/metadata.name") == ns);  // the API server's own label
  CHECK(namespaces.keys().count("default") == 1);

  CHECK(services.keys() == Keys{ns + "/external", ns + "/web"});
  CHECK(services.refl.store().find(ns + "/web")->selector == StringPairs{{"app", "web"}});
  CHECK(services.refl.store().find(ns + "/external")->selector.empty());
  REQUIRE(rcs.refl.store().find(ns + "/legacy") != nullptr);
  CHECK(rcs.refl.store().find(ns + "/legacy")->selector == StringPairs{{"app", "legacy"}});
  const ReplicaSet* rs = rss.refl.store().find(ns + "/rs");
  REQUIRE(rs != nullptr);
  REQUIRE(rs->selector.has_value());
  CHECK(rs->selector->match_labels == StringPairs{{"app", "web"}});
  CHECK(rs->selector->match_expressions ==
        std::vector<NodeSelectorRequirement>{{"track", SelectorOp::not_in, {"canary"}}});
  const StatefulSet* ss = sss.refl.store().find(ns + "/db");
  REQUIRE(ss != nullptr);
  CHECK(ss->selector == LabelSelector{{{"app", "db"}}, {}});

  // The watches are live: a change arrives as an event.
  services.rec.clear();
  namespaces.rec.clear();
  lab.kubectl({"delete", "service", "-n", ns, "web", "--wait=false"});
  lab.kubectl({"label", "namespace", ns, "stage=two"});
  CHECK(pump_until(
      io,
      [&] {
        const Namespace* now = namespaces.refl.store().find(ns);
        return services.rec.deleted.count(ns + "/web") == 1 && now && find_value(now->labels, "stage");
      },
      30s));
  CHECK(services.refl.stats().lists == 1);
  CHECK(namespaces.refl.stats().lists == 1);

  stop_and_drain(io, namespaces);
  stop_and_drain(io, services);
  stop_and_drain(io, rcs);
  stop_and_drain(io, rss);
  stop_and_drain(io, sss);
  lab.kubectl({"delete", "namespace", ns, "--wait=false"});
}
