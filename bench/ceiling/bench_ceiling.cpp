// bench-ceiling: the C++ helpers of `./dev bench` (bench/run.py drives them).
// All three use the project's own client (Transport, Api, Store) with the
// client-side rate limit off, on one io_context, one thread.
//
//   create  POSTs N pods of the SchedulingBasic shape (one container,
//           requests = limits = 100m / 500Mi) into a namespace, K in flight;
//           with --rate, paced at R pods/s (the latency phase); with
//           --placed-on N, already bound to lab-node-1..N in turn (the
//           scale run's placed pods).
//   watch   list+watch (the project's Reflector) of the pods with one schedulerName; writes one line per
//           change to --out, flushed at once, with the wall clock in ns:
//             synced <t>                     the first list is in
//             seen <ns/name> <t>             pending pod first seen
//             bound <ns/name> <t> <node>     spec.nodeName first seen set
//   bind    the bind ceiling: binds every pending pod with that
//           schedulerName round-robin over the nodes, --parallelism POSTs in
//           flight, no filtering, no scoring, no events, no status patches:
//           the fastest this API server accepts bindings from one client.
//
// SIGTERM/SIGINT stop any of them; `bind` and `create` print one summary line.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/verb.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "toysched/json/writer.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/kube/config.hpp"
#include "toysched/kube/http_transport.hpp"
#include "toysched/kube/objects.hpp"
#include "toysched/kube/reflector.hpp"
#include "toysched/log/log.hpp"

namespace asio = boost::asio;
namespace http = boost::beast::http;
using namespace toysched;
using namespace std::chrono_literals;

namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Common {
  std::string kubeconfig;
  std::string scheduler_name;
  int verbosity = 0;
};

// A transport with no client-side limit: the helpers must never be what
// limits a run.
std::unique_ptr<kube::Transport> make_transport(asio::io_context& io, const Common& c, std::size_t idle) {
  auto config = kube::load_client_config(c.kubeconfig, "", kube::Environment::process());
  if (!config) {
    std::cerr << "bench-ceiling: " << config.error().message << "\n";
    std::exit(1);
  }
  kube::TransportOptions o;
  o.qps = -1;
  o.max_idle_connections = idle;
  o.user_agent = "bench-ceiling";
  auto t = kube::HttpTransport::create(io.get_executor(), *config, o);
  if (!t) {
    std::cerr << "bench-ceiling: " << t.error().message << "\n";
    std::exit(1);
  }
  return std::move(*t);
}

// ---------------------------------------------------------------- list+watch

// The pods with one schedulerName, through the scheduler's own Reflector
// (it re-watches as soon as a watch response ends, so a watcher the API
// server drops as slow does not see events late).
kube::ListOptions pods_selected(std::string field_selector) {
  kube::ListOptions lo;
  lo.field_selector = std::move(field_selector);
  return lo;
}

std::string watch_stats(const kube::ReflectorStats& st) {
  return "lists " + std::to_string(st.lists) + " watches " + std::to_string(st.watches) + " events " +
         std::to_string(st.events) + " ended_by_server " + std::to_string(st.rewatch_clean) + " failures " +
         std::to_string(st.rewatch_error + st.relists_expired);
}

// ---------------------------------------------------------------- create

struct CreateOptions {
  std::string ns;
  int count = 0;
  int parallel = 32;
  double rate = 0;  // pods/s; 0 = as fast as the server takes them
  std::string prefix = "p-";
  int placed_on = 0;  // > 0: spec.nodeName lab-node-1..N in turn (bound at creation, no scheduler involved)
};

std::string pod_body(const CreateOptions& o, const std::string& scheduler, int i) {
  char name[64];
  std::snprintf(name, sizeof name, "%s%06d", o.prefix.c_str(), i);
  json::Writer w;
  w.object().field("apiVersion", "v1").field("kind", "Pod");
  w.key("metadata").object().field("name", name).field("namespace", o.ns);
  w.key("labels").object().field("app", "bench").end().end();
  w.key("spec").object().field("schedulerName", scheduler).field("terminationGracePeriodSeconds", 0);
  if (o.placed_on > 0) w.field("nodeName", "lab-node-" + std::to_string(i % o.placed_on + 1));
  // scheduler_perf's templates/pod-default.yaml: one pause container,
  // requests = limits = 100m / 500Mi.
  w.key("containers").array().object().field("name", "pause").field("image", "registry.k8s.io/pause:3.10");
  w.key("resources").object();
  w.key("requests").object().field("cpu", "100m").field("memory", "500Mi").end();
  w.key("limits").object().field("cpu", "100m").field("memory", "500Mi").end();
  w.end().end().end().end().end();
  return std::move(w).str();
}

struct Creator {
  kube::Transport& t;
  const CreateOptions& o;
  const std::string& scheduler;
  int next = 0;
  int created = 0;
  int failed = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  asio::awaitable<void> ensure_namespace() {
    kube::HttpRequest req;
    req.verb = http::verb::post;
    req.target = "/api/v1/namespaces";
    json::Writer w;
    w.object().field("apiVersion", "v1").field("kind", "Namespace");
    w.key("metadata").object().field("name", o.ns).end().end();
    req.body = std::move(w).str();
    auto r = co_await t.request(std::move(req));
    if (!r || (r->status != 201 && r->status != 409)) {
      std::cerr << "bench-ceiling: cannot create namespace " << o.ns << ": "
                << (r ? std::to_string(r->status) + " " + r->body : r.error().message) << "\n";
      std::exit(1);
    }
  }

  asio::awaitable<void> worker() {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    while (next < o.count) {
      int i = next++;
      if (o.rate > 0) {
        timer.expires_at(start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     std::chrono::duration<double>(i / o.rate)));
        co_await timer.async_wait(asio::use_awaitable);
      }
      bool ok = false;
      std::string why;
      for (int attempt = 0; attempt < 3 && !ok; ++attempt) {
        kube::HttpRequest req;
        req.verb = http::verb::post;
        req.target = "/api/v1/namespaces/" + o.ns + "/pods";
        req.body = pod_body(o, scheduler, i);
        auto r = co_await t.request(std::move(req));
        // 409 on a retry: the first attempt got through after all.
        ok = r && (r->status == 201 || (attempt > 0 && r->status == 409));
        if (!ok) why = r ? std::to_string(r->status) + " " + r->body.substr(0, 200) : r.error().message;
      }
      if (ok)
        ++created;
      else {
        ++failed;
        std::cerr << "bench-ceiling: create pod " << i << " failed: " << why << "\n";
      }
    }
  }
};

int run_create(const Common& c, const CreateOptions& o) {
  asio::io_context io(1);
  auto t = make_transport(io, c, o.parallel);
  Creator cr{*t, o, c.scheduler_name};
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await cr.ensure_namespace();
        cr.start = std::chrono::steady_clock::now();
        // The loop runs dry when the last worker is done, once the
        // transport's HTTP/2 connection (an open read) is let go.
        auto left = std::make_shared<int>(o.parallel);
        for (int w = 0; w < o.parallel; ++w)
          asio::co_spawn(io, cr.worker(), [left, &t](std::exception_ptr) {
            if (--*left == 0) t->close_when_idle();
          });
      },
      asio::detached);
  io.run();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - cr.start).count();
  std::printf("created %d failed %d seconds %.3f pods_per_s %.1f\n", cr.created, cr.failed, secs,
              secs > 0 ? cr.created / secs : 0.0);
  return cr.failed ? 1 : 0;
}

// ---------------------------------------------------------------- watch

struct Recorder : kube::Handler<kube::Pod> {
  std::FILE* out;

  void line(const char* kind, const kube::Pod& p, const char* extra = nullptr) {
    if (extra)
      std::fprintf(out, "%s %s/%s %lld %s\n", kind, p.ns.c_str(), p.name.c_str(), (long long)now_ns(), extra);
    else
      std::fprintf(out, "%s %s/%s %lld\n", kind, p.ns.c_str(), p.name.c_str(), (long long)now_ns());
    std::fflush(out);
  }
  void on_add(const kube::Pod& p) override {
    line("seen", p);
    if (!p.node_name.empty()) line("bound", p, p.node_name.c_str());
  }
  void on_update(const kube::Pod& old, const kube::Pod& now) override {
    if (old.node_name.empty() && !now.node_name.empty()) line("bound", now, now.node_name.c_str());
  }
  void on_delete(const kube::Pod&) override {}
};

// Writes "synced <ns>" once the informer's first list is in: the harness
// starts the clock only then. Polled: the list completes between events.
asio::awaitable<void> report_synced(const kube::Reflector<kube::Pod>& informer, std::FILE* out) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  while (!informer.synced()) {
    t.expires_after(2ms);
    co_await t.async_wait(asio::use_awaitable);
  }
  std::fprintf(out, "synced %lld\n", (long long)now_ns());
  std::fflush(out);
}

int run_watch(const Common& c, const std::string& out_path) {
  std::FILE* out = out_path == "-" ? stdout : std::fopen(out_path.c_str(), "w");
  if (!out) {
    std::perror(out_path.c_str());
    return 1;
  }
  asio::io_context io(1);
  auto t = make_transport(io, c, 4);
  kube::Api api(*t);
  Recorder rec;
  rec.out = out;
  kube::Reflector<kube::Pod> informer(api, rec, pods_selected("spec.schedulerName=" + c.scheduler_name));
  asio::co_spawn(io, informer.run(), asio::detached);
  asio::co_spawn(io, report_synced(informer, out), asio::detached);
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](auto, int) {
    informer.stop();
    io.stop();
  });
  io.run();
  std::fflush(out);
  std::fprintf(stderr, "watch: %s\n", watch_stats(informer.stats()).c_str());
  // Frames still parked in io reference the informer and the transport:
  // leave without unwinding them.
  std::_Exit(0);
}

// ---------------------------------------------------------------- bind

struct Binder : kube::Handler<kube::Pod> {
  struct Item {
    std::string ns, name, uid;
    int attempts = 0;
  };
  kube::Api& api;
  asio::any_io_executor ex;
  std::vector<std::string> nodes;
  int parallelism = 16;
  std::deque<Item> pending;
  int workers = 0;
  std::size_t rr = 0;
  std::uint64_t bound = 0, conflicts = 0, errors = 0;

  Binder(kube::Api& a, asio::any_io_executor e) : api(a), ex(std::move(e)) {}

  void take(const kube::Pod& p) {
    if (!p.node_name.empty() || p.deleting) return;
    pending.push_back({p.ns, p.name, p.uid});
    if (workers < parallelism) {
      ++workers;
      asio::co_spawn(ex, worker(), asio::detached);
    }
  }
  // One of at most `parallelism` loops, each with one POST in flight.
  asio::awaitable<void> worker() {
    while (!pending.empty()) {
      Item it = std::move(pending.front());
      pending.pop_front();
      const std::string& node = nodes[rr++ % nodes.size()];
      auto r = co_await api.bind(it.ns, it.name, it.uid, node);
      if (r)
        ++bound;
      else if (r.error().is_conflict())
        ++conflicts;
      else {
        ++errors;
        TS_ERROR("Binding failed", {"pod", it.ns + "/" + it.name}, {"err", r.error().message});
        // Not a decision to undo: just try again, a few times.
        if (++it.attempts < 5 && !r.error().is_not_found()) pending.push_back(std::move(it));
      }
    }
    --workers;
  }
  void on_add(const kube::Pod& p) override { take(p); }
  void on_update(const kube::Pod& old, const kube::Pod& now) override {
    (void)old;
    (void)now;  // a pod already queued: nothing new to do
  }
  void on_delete(const kube::Pod&) override {}
};

int run_bind(const Common& c, int parallelism) {
  asio::io_context io(1);
  auto t = make_transport(io, c, parallelism + 4);
  kube::Api api(*t);
  Binder b(api, io.get_executor());
  b.parallelism = parallelism;
  // Pending pods of this scheduler only, as kube-scheduler selects them.
  kube::Reflector<kube::Pod> informer(api, b,
                                      pods_selected("spec.schedulerName=" + c.scheduler_name + ",spec.nodeName="));
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        // A named argument: GCC 12 frees a braced temporary passed to a
        // coroutine twice (seen as free(): invalid pointer in ~ListOptions).
        kube::ListOptions everything;
        auto nodes = co_await api.list<kube::Node>(std::move(everything));
        if (!nodes || nodes->items.empty()) {
          std::cerr << "bench-ceiling: no nodes to bind to" << (nodes ? std::string() : ": " + nodes.error().message)
                    << "\n";
          std::exit(1);
        }
        for (auto& n : nodes->items) b.nodes.push_back(std::move(n.name));
        TS_LOG(0, "Bind ceiling started", {"nodes", b.nodes.size()}, {"parallelism", parallelism},
               {"schedulerName", c.scheduler_name});
        co_await informer.run();
      },
      asio::detached);
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](auto, int) {
    informer.stop();
    io.stop();
  });
  io.run();
  std::fprintf(stderr, "watch: %s\n", watch_stats(informer.stats()).c_str());
  std::printf("bound %llu conflicts %llu errors %llu pending %zu\n", (unsigned long long)b.bound,
              (unsigned long long)b.conflicts, (unsigned long long)b.errors, b.pending.size());
  std::fflush(stdout);
  std::_Exit(0);  // as in run_watch: binds may still be parked in io
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench-ceiling: pod creator, bind watcher and bind ceiling for ./dev bench"};
  app.require_subcommand(1);
  Common c;
  auto common = [&](CLI::App* sub) {
    sub->add_option("--kubeconfig", c.kubeconfig, "kubeconfig of the cluster")->required();
    sub->add_option("--scheduler-name", c.scheduler_name, "spec.schedulerName of the pods")->required();
    sub->add_option("-v,--v", c.verbosity, "log verbosity");
  };

  CreateOptions co;
  auto* create = app.add_subcommand("create", "create pending pods");
  common(create);
  create->add_option("--namespace", co.ns, "namespace (created if missing)")->required();
  create->add_option("--count", co.count, "number of pods")->required();
  create->add_option("--parallel", co.parallel, "POSTs in flight");
  create->add_option("--rate", co.rate, "pods per second (0: as fast as possible)");
  create->add_option("--prefix", co.prefix, "pod name prefix");
  create->add_option("--placed-on", co.placed_on, "N: already bound, to lab-node-1..N in turn");

  std::string out_path = "-";
  auto* watch = app.add_subcommand("watch", "record when pods are seen and seen bound");
  common(watch);
  watch->add_option("--out", out_path, "output file ('-': stdout)");

  int parallelism = 16;
  auto* bind = app.add_subcommand("bind", "the bind ceiling: bind round-robin, no decisions");
  common(bind);
  bind->add_option("--parallelism", parallelism, "bindings in flight");

  CLI11_PARSE(app, argc, argv);
  log::set_verbosity(c.verbosity);
  if (*create) return run_create(c, co);
  if (*watch) return run_watch(c, out_path);
  return run_bind(c, parallelism);
}
