#include "toysched/ui/feed.hpp"

#include "toysched/json/writer.hpp"
#include "toysched/kube/labels.hpp"
#include "toysched/lease/elector.hpp"
#include "toysched/sched/scheduler.hpp"
#include "toysched/trace/tasks.hpp"

#include <boost/asio/awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <map>

namespace toysched::ui {

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

constexpr auto kTick = 250ms;     // how often a page is brought up to date
constexpr auto kKeepAlive = 15s;  // a comment line when nothing changed, so proxies keep the stream
constexpr std::string_view kZoneLabel = "topology.kubernetes.io/zone";

const char* bound_by_name(sched::Cache::BoundBy b) {
  switch (b) {
    case sched::Cache::BoundBy::us:
      return "us";
    case sched::Cache::BoundBy::other:
      return "other";
    case sched::Cache::BoundBy::unknown:
      break;
  }
  return "unknown";
}

const char* kind_name(sched::Outcome::Kind k) {
  switch (k) {
    case sched::Outcome::Kind::bound:
      return "bound";
    case sched::Outcome::Kind::lost:
      return "lost";
    case sched::Outcome::Kind::failed:
      break;
  }
  return "failed";
}

std::string pod_key(std::string_view prefix, const kube::Pod& p) { return std::string(prefix) + p.ns + "/" + p.name; }

void add_nodes(Snapshot& out, sched::Cache& cache) {
  for (const sched::NodeInfo* ni : cache.nodes()) {
    const kube::Node& n = ni->node;
    const std::string* zone = kube::find_value(n.labels, kZoneLabel);
    const bool tainted = std::any_of(n.taints.begin(), n.taints.end(), [](const kube::Taint& t) {
      return t.effect == kube::TaintEffect::no_schedule || t.effect == kube::TaintEffect::no_execute;
    });
    json::Writer w;
    w.object()
        .field("name", n.name)
        .field("zone", zone != nullptr ? *zone : std::string())
        .field("cpu", n.allocatable.milli_cpu)
        .field("mem", n.allocatable.memory)
        .field("pods", n.allocatable.pods)
        .field("tainted", tainted)
        .field("unschedulable", n.unschedulable)
        .field("ready", n.ready)
        .end();
    out.emplace_back("node/" + n.name, std::move(w).str());
  }
}

void add_pods(Snapshot& out, const sched::Cache& cache) {
  cache.for_each_pod([&](const kube::Pod& p, bool assumed, sched::Cache::BoundBy by) {
    json::Writer w;
    w.object()
        .field("ns", p.ns)
        .field("name", p.name)
        .field("node", p.node_name)
        .field("cpu", p.requests.milli_cpu)
        .field("mem", p.requests.memory)
        .field("by", bound_by_name(by))
        .field("assumed", assumed)
        .end();
    out.emplace_back(pod_key("pod/", p), std::move(w).str());
  });
}

void add_queue(Snapshot& out, const sched::Scheduler& s) {
  std::map<std::string_view, int> rank;
  s.queue().for_each_waiting([&](const kube::Pod& p, const char* queue, int attempts) {
    const std::string* reason = s.last_failure(p.uid);
    json::Writer w;
    w.object()
        .field("ns", p.ns)
        .field("name", p.name)
        .field("queue", queue)
        .field("rank", rank[queue]++)
        .field("attempts", attempts)
        .field("reason", reason != nullptr ? *reason : std::string())
        .end();
    out.emplace_back(pod_key("pending/", p), std::move(w).str());
  });
  json::Writer w;
  w.object()
      .field("active", static_cast<std::uint64_t>(s.queue().active_size()))
      .field("backoff", static_cast<std::uint64_t>(s.queue().backoff_size()))
      .field("unschedulable", static_cast<std::uint64_t>(s.queue().unschedulable_size()))
      .end();
  out.emplace_back("queue", std::move(w).str());
}

void add_lease(Snapshot& out, const FeedSources& src) {
  json::Writer w;
  w.object();
  if (src.elector == nullptr) {
    w.field("role", "off").field("name", "").field("holder", "").field("transitions", 0).field("expires_in_ms", 0);
  } else {
    const lease::LeaseState& st = src.elector->state();
    std::int64_t left_ms = 0;
    if (auto at = st.held_until()) {
      left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(*at - std::chrono::steady_clock::now()).count();
    }
    w.field("role", src.elector->stats().leading ? "leader" : "standby")
        .field("name", src.lease_name)
        .field("holder", st.holder())
        .field("transitions", static_cast<std::int64_t>(st.transitions()))
        .field("expires_in_ms", std::max<std::int64_t>(left_ms, 0));
  }
  w.end();
  out.emplace_back("lease", std::move(w).str());
}

void add_tasks(Snapshot& out) {
  json::Writer w;
  w.array();
  for (const trace::TaskInfo& t : trace::snapshot()) {
    w.object()
        .field("name", t.name)
        .field("state", trace::to_string(t.state))
        .field("point", t.point != nullptr ? t.point->name : "")
        .field("since_ms", t.waited_ms)
        .end();
  }
  w.end();
  out.emplace_back("tasks", std::move(w).str());
}

void add_scheduler(Snapshot& out, const sched::Scheduler& s) {
  std::string names;
  for (const std::string& n : s.profile_names()) names += (names.empty() ? "" : ",") + n;
  json::Writer w;
  w.object()
      .field("name", names)
      .field("scheduled", s.stats().binds_ok)
      .field("conflicts", s.stats().bind_conflicts)
      .end();
  out.emplace_back("scheduler", std::move(w).str());
}

void write_tick(json::Writer& w, const Tick& t) {
  w.object()
      .field("seq", t.seq)
      .field("t", t.unix_ms)
      .field("kind", t.kind)
      .field("pod", t.pod)
      .field("node", t.node)
      .field("message", t.message)
      .end();
}

}  // namespace

std::string delta_json(const Snapshot& sent, const Snapshot& now, std::span<const Tick> ticks, bool reset) {
  json::Writer w;
  w.object();
  if (reset) w.field("reset", true);
  bool changed = reset || !ticks.empty();
  w.key("set").object();
  std::size_t i = 0;
  for (const auto& [key, value] : now) {
    while (i < sent.size() && sent[i].first < key) ++i;
    const bool same = i < sent.size() && sent[i].first == key && sent[i].second == value;
    if (reset || !same) {
      w.key(key).raw(value);
      changed = true;
    }
  }
  w.end().key("del").array();
  std::size_t j = 0;
  for (const auto& [key, value] : sent) {
    while (j < now.size() && now[j].first < key) ++j;
    if (j < now.size() && now[j].first == key) continue;
    if (!reset) w.value(key);  // a reset replaces everything: nothing to delete
    changed = changed || !reset;
  }
  w.end().key("ticker").array();
  for (const Tick& t : ticks) write_tick(w, t);
  w.end().end();
  return changed ? std::move(w).str() : std::string();
}

Feed::Feed(FeedSources src) : src_(std::move(src)) {
  src_.scheduler.set_outcome_hook([this](const sched::Outcome& o) { record(o); });
}

Feed::~Feed() { src_.scheduler.set_outcome_hook(nullptr); }

Snapshot Feed::snapshot() const {
  Snapshot out;
  out.reserve(src_.scheduler.cache().node_count() + src_.scheduler.cache().bound_count() +
              src_.scheduler.cache().assumed_count() + src_.scheduler.queue().active_size() + 8);
  add_nodes(out, src_.scheduler.cache());
  add_pods(out, src_.scheduler.cache());
  add_queue(out, src_.scheduler);
  add_lease(out, src_);
  add_tasks(out);
  add_scheduler(out, src_.scheduler);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

void Feed::record(const sched::Outcome& o) {
  Shared& sh = *shared_;
  if (sh.clients == 0) return;  // nobody is looking: nothing kept
  auto unix_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  sh.ticks.push_back(Tick{sh.next_seq++, unix_ms, kind_name(o.kind), o.pod.ns + "/" + o.pod.name, std::string(o.node),
                          std::string(o.message)});
  if (sh.ticks.size() > kTicksKept) sh.ticks.pop_front();
}

asio::awaitable<void> Feed::stream(serve::StreamSink& sink) {
  std::shared_ptr<Shared> sh = shared_;
  ++sh->clients;
  struct Leave {
    Shared& sh;
    ~Leave() {
      if (--sh.clients == 0) sh.ticks.clear();
    }
  } leave{*sh};
  Snapshot sent;
  std::uint64_t seen = 0;  // the first message carries the ticks kept so far
  bool reset = true;
  auto last_write = std::chrono::steady_clock::now();
  for (;;) {
    Snapshot now = snapshot();
    std::vector<Tick> fresh;
    for (const Tick& t : sh->ticks)
      if (t.seq > seen) fresh.push_back(t);
    if (!fresh.empty()) seen = fresh.back().seq;
    std::string body = delta_json(sent, now, fresh, reset);
    sent = std::move(now);
    reset = false;
    const auto t = std::chrono::steady_clock::now();
    if (!body.empty()) {
      if (!co_await sink.write("event: delta\ndata: " + body + "\n\n")) co_return;
      last_write = t;
    } else if (t - last_write >= kKeepAlive) {
      if (!co_await sink.write(": keep-alive\n\n")) co_return;
      last_write = t;
    }
    if (!co_await sink.pause(kTick)) co_return;
  }
}

void add_routes(serve::Routes& routes, Feed& feed) {
  routes.get("/ui", [](const serve::Request&) {
    return serve::Response{200, "text/html; charset=utf-8", std::string(page_html)};
  });
  routes.get("/debug/events-stream", [&feed](const serve::Request&) {
    serve::Response r{200, "text/event-stream", {}};
    r.stream = [&feed](serve::StreamSink& sink) { return feed.stream(sink); };
    return r;
  });
}

}  // namespace toysched::ui
