// Reflector::run against the scripted transport, every await point failed in
// turn (support/every_point.hpp). The server's pods change while the
// reflector watches: a first watch brings an add and an update; then, while
// nobody watches, a pod is deleted and one added, and the history is
// compacted, so the next watch is answered 410 and the reflector must
// relist (and learn of the delete it missed from the list); a last change
// comes on the watch after that. When the last watch goes quiet, whatever
// failed on the way, the store and the handler's view must both equal the
// server's pods, and every delta the handler heard must have made sense.
#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <map>
#include <string>

#include "support/every_point.hpp"
#include "support/pod_server.hpp"
#include "support/scripted_transport.hpp"
#include "toysched/kube/api.hpp"
#include "toysched/kube/reflector.hpp"
#include "toysched/trace/tasks.hpp"

using namespace toysched;
using namespace std::chrono_literals;
using testing::Fault;
using testing::FaultSpec;
using testing::Injection;
using testing::PodServer;
using testing::ScriptedTransport;
using testing::StreamScript;
namespace asio = boost::asio;

namespace {

// What the handler was told, kept as the server's view would be: key → UID
// and resourceVersion. A delta that does not fit what it was told before
// (an add of a key it holds, an update or delete of one it does not) is
// counted as incoherent.
struct Recorder final : kube::Handler<kube::Pod> {
  std::map<std::string, std::pair<std::string, std::string>> view;
  int incoherent = 0;
  void on_add(const kube::Pod& p) override {
    if (!view.emplace(p.ns + "/" + p.name, std::pair{p.uid, p.resource_version}).second) ++incoherent;
  }
  void on_update(const kube::Pod& old, const kube::Pod& now) override {
    auto it = view.find(now.ns + "/" + now.name);
    if (it == view.end() || it->second.first != old.uid || old.uid != now.uid) ++incoherent;
    view[now.ns + "/" + now.name] = {now.uid, now.resource_version};
  }
  void on_delete(const kube::Pod& last) override {
    auto it = view.find(last.ns + "/" + last.name);
    if (it == view.end() || it->second.first != last.uid) ++incoherent;
    if (it != view.end()) view.erase(it);
  }
};

std::map<std::string, std::pair<std::string, std::string>> server_view(const PodServer& s) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (const auto& [key, p] : s.pods()) out[key] = {p.uid, std::to_string(p.rv)};
  return out;
}

std::map<std::string, std::pair<std::string, std::string>> store_view(const kube::Store<kube::Pod>& store) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (const auto& [key, p] : store.objects()) out[key] = {p.uid, p.resource_version};
  return out;
}

std::uint64_t arrivals(trace::Point p) { return trace::point_stats()[p.id].arrivals; }

// One run: the server's story advances each time a watch is opened.
struct World {
  asio::io_context io;
  ScriptedTransport fake{io.get_executor()};
  kube::Api api{fake};
  PodServer server;
  Recorder handler;
  kube::Reflector<kube::Pod> reflector{api, handler, kube::ListOptions{}};
  int watches = 0;
  bool parked = false;
  std::map<std::string, std::pair<std::string, std::string>> store_at_park, handler_at_park;

  World() {
    server.add("a", "p1", "u1");
    server.add("a", "p2", "u2");
    fake.on(boost::beast::http::verb::get, "/api/v1/pods", [this](const kube::HttpRequest&) { return server.list(); });
    fake.on_watch("/api/v1/pods", [this](const std::string& target) { return next_watch(target); });
    fake.on_park([this] {
      parked = true;
      store_at_park = store_view(reflector.store());
      handler_at_park = handler.view;
      reflector.stop();
    });
    reflector.set_timing({1ms, 2ms, 1ms});
  }

  StreamScript next_watch(const std::string& target) {
    switch (++watches) {
      case 1:
        server.add("a", "p3", "u3");
        server.modify("a/p1");
        return server.watch(target, StreamScript::End::end);
      case 2:  // while nobody watched: a delete, an add, then compaction
        server.remove("a/p2");
        server.add("a", "p4", "u4");
        server.compact();
        return server.watch(target, StreamScript::End::end);
      case 3:
        server.remove("a/p3");
        server.modify("a/p4");
        return server.watch(target, StreamScript::End::end);
      default:
        return server.watch(target, StreamScript::End::park);
    }
  }
};

}  // namespace

TEST_CASE("Reflector::run: after any one failure, 410 and relist included, the store equals the server's pods") {
  std::size_t clean_backoffs = 0;
  std::vector<std::string> clean_points;
  auto scenario = [&](const std::optional<Injection>& inject) -> std::size_t {
    World w;
    if (inject) w.fake.fail_at(inject->point, inject->fault);
    const auto backoffs_before = arrivals(trace::points::watch_backoff);
    bool done = false;
    asio::co_spawn(w.io, w.reflector.run(), [&](std::exception_ptr e) {
      done = true;
      CHECK_FALSE(e);
    });
    w.io.run_for(10s);
    REQUIRE(done);
    const auto backoffs = arrivals(trace::points::watch_backoff) - backoffs_before;
    if (!inject) {
      clean_backoffs = backoffs;
      clean_points = w.fake.point_log();
      CHECK(w.reflector.stats().relists_expired == 1);  // the scenario does reach a 410
    } else {
      CHECK(w.fake.fault_fired());
    }
    CHECK(w.parked);
    CHECK(w.store_at_park == server_view(w.server));
    CHECK(w.handler_at_park == server_view(w.server));
    CHECK(w.handler.incoherent == 0);
    CHECK(w.fake.unexpected().empty());
    CHECK(w.fake.open_streams() == 0);  // every stream closed
    if (inject) {
      // A failed list or watch waits out a backoff before the next try; an
      // expired watch (410) relists at once; a list replayed after its first
      // connection died is simply answered.
      const std::string& what = clean_points.at(inject->point - 1);
      const bool expired_watch = inject->fault.kind == Fault::status && inject->fault.status == 410 &&
                                 (what == "READ" || what.starts_with("WATCH "));
      const bool answered = inject->fault.kind == Fault::replay && what.starts_with("GET ");
      if (expired_watch || answered)
        CHECK(backoffs == clean_backoffs);
      else
        CHECK(backoffs > clean_backoffs);
    }
    return w.fake.points();
  };
  const auto faults = std::vector<FaultSpec>{
      {Fault::reset_before_send}, {Fault::reset_after_send}, {Fault::replay},     {Fault::timeout},
      {Fault::status, 410},       {Fault::status, 429},      {Fault::status, 500}};
  CHECK(testing::every_await_point(faults, scenario) >= 10);
  CHECK(clean_backoffs == 0);
}
