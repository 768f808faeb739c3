#include "binder_world.hpp"

#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>

#include "../builders.hpp"

namespace toysched::testing {

namespace http = boost::beast::http;
using namespace std::chrono_literals;

BinderWorld::BinderWorld()
    : binder(api,
             sched::BinderContext{cache, queue, events, order, stats, observer, outcome,
                                  [this](const kube::Pod& p) -> const kube::Pod* {
                                    const ServerPod* s = server.find(p.ns + "/" + p.name);
                                    if (s == nullptr) return nullptr;
                                    informer_copy = pod(p.ns + "/" + p.name);
                                    informer_copy.node_name.clear();  // it has not seen the bind yet
                                    return &informer_copy;
                                  },
                                  [this](const char*) {
                                    ++moved;
                                    queue.move_all_to_active_or_backoff(sched::Queue::clock::now());
                                  },
                                  [] {}},
             sched::BinderOptions{2, {}}, supervisor) {
  cache.add_node(test::make_node().name("n1").cpu("4").memory("8Gi").pods(110));
  cache.add_node(test::make_node().name("n2").cpu("4").memory("8Gi").pods(110));
  server.serve_on(fake);
  fake.on(http::verb::post, "/apis/events.k8s.io/v1/namespaces/*/events", [](const kube::HttpRequest&) {
    return Reply{201, "{}"};
  });
  binder.set_gate([this] { return gate_open; });
  events.set_still_pending([this](const std::string& ns, const std::string& name, const std::string& uid) {
    const ServerPod* p = server.find(ns + "/" + name);
    return p != nullptr && p->uid == uid && p->node.empty() && !cache.contains(uid);
  });
  boost::asio::co_spawn(io, events.run(), [](std::exception_ptr e) { CHECK_FALSE(e); });
}

kube::Pod BinderWorld::pod(const std::string& key) const {
  const ServerPod& s = server.pods().at(key);
  kube::Pod p = test::make_pod().ns(s.ns).name(s.name).uid(s.uid).cpu("100m");
  p.scheduler_name = "toy-scheduler";
  p.node_name = s.node;
  return p;
}

void BinderWorld::decide(const std::string& key, const std::string& node,
                         std::vector<std::unique_ptr<sched::PreBind>> pre_binds) {
  const auto now = sched::Queue::clock::now();
  kube::Pod p = pod(key);
  queue.add_or_update(p, now);
  auto item = queue.pop(now);
  REQUIRE(item);
  REQUIRE(item->pod.uid == p.uid);
  REQUIRE(cache.assume(p, node));
  binder.spawn_bind(
      sched::BindRequest{item->pod, node, 2, 2, item->attempts, item->first_queued, {}, std::move(pre_binds)});
}

std::string BinderWorld::where(const std::string& uid) const { return std::string(queue.where(uid)); }

bool BinderWorld::run_until(const std::function<bool()>& pred, int limit) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  for (int i = 0; i < limit && std::chrono::steady_clock::now() < deadline; ++i) {
    if (pred()) return true;
    if (io.stopped()) io.restart();
    io.run_one_for(20ms);
  }
  return pred();
}

void BinderWorld::finish() {
  events.stop();
  io.restart();
  io.run_for(5s);
  CHECK(io.stopped());  // ran dry: nothing left waiting
}

void check_pod(BinderWorld& w, const std::string& key, const std::string& node) {
  const auto& s = *w.server.find(key);
  INFO("pod " << key << " (server: node \"" << s.node << "\", " << s.bindings << " bindings)");
  CHECK(s.bindings <= 1);
  const auto posts = w.fake.sent_matching(http::verb::post, s.name + "/binding");
  // Sent once: a replay is the transport's, the same request at the same point.
  for (const auto& p : posts) CHECK(p.point == posts.front().point);
  if (w.cache.contains(s.uid)) {  // counted bound: the server holds it on our node
    CHECK(s.node == node);
    CHECK(w.where(s.uid) == "done");
    return;
  }
  const bool refused_409 = !posts.empty() && posts.back().status == 409 && posts.back().done_seq != 0;
  const std::string where = w.where(s.uid);
  if (refused_409 && posts.size() == 1) {
    CHECK(where == "done");  // a race lost: out of the queue, never retried
  } else {
    CHECK(where == "backoff");  // tried again later; never lost
  }
}

void check_idle(BinderWorld& w) {
  CHECK(w.stats.binds_in_flight == 0);
  CHECK(w.binder.slots().held() == 0);
  CHECK(w.order.in_flight_count() == 0);
  CHECK(w.order.waiting() == 0);
  CHECK(w.events.pending() == 0);
  CHECK(w.fake.unexpected().empty());
  CHECK(w.supervisor.failures().empty());
}

}  // namespace toysched::testing
