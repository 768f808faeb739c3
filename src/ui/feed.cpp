#include "toysched/ui/feed.hpp"

#include "toysched/json/writer.hpp"
#include "toysched/kube/labels.hpp"
#include "toysched/lease/elector.hpp"
#include "toysched/sched/scheduler.hpp"
#include "toysched/trace/tasks.hpp"
#include "toysched/util/scope_exit.hpp"

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

// Node and pod keys are written into one buffer, reused: no string per key
// per round unless the key is new to the client.
struct KeyBuffer {
  std::string s;
  std::string_view operator()(std::string_view prefix, std::string_view a, std::string_view b = {}) {
    s.assign(prefix).append(a);
    if (!b.empty()) s.append("/").append(b);
    return s;
  }
};

void offer_nodes(Delta& d, sched::Cache& cache) {
  KeyBuffer key;
  for (const sched::NodeInfo* ni : cache.nodes()) {
    const kube::Node& n = ni->node;
    const std::string* zone_label = kube::find_value(n.labels, kZoneLabel);
    const std::string_view zone = zone_label != nullptr ? std::string_view(*zone_label) : std::string_view();
    const bool tainted = std::any_of(n.taints.begin(), n.taints.end(), [](const kube::Taint& t) {
      return t.effect == kube::TaintEffect::no_schedule || t.effect == kube::TaintEffect::no_execute;
    });
    const std::int64_t flags = (tainted ? 1 : 0) | (n.unschedulable ? 2 : 0) | (n.ready ? 4 : 0);
    const auto& a = n.allocatable;
    Digest dg;
    dg.add(zone).add(a.milli_cpu).add(a.memory).add(a.pods).add(flags);
    d.offer(key("node/", n.name), dg.value(), [&](json::Writer& w) {
      w.object()
          .field("name", n.name)
          .field("zone", zone)
          .field("cpu", a.milli_cpu)
          .field("mem", a.memory)
          .field("pods", a.pods)
          .field("tainted", tainted)
          .field("unschedulable", n.unschedulable)
          .field("ready", n.ready)
          .end();
    });
  }
}

void offer_pods(Delta& d, const sched::Cache& cache) {
  KeyBuffer key;
  cache.for_each_pod([&](const kube::Pod& p, bool assumed, sched::Cache::BoundBy by) {
    Digest dg;
    dg.add(p.node_name).add(p.requests.milli_cpu).add(p.requests.memory).add(static_cast<std::int64_t>(by));
    dg.add(assumed ? 1 : 0);
    d.offer(key("pod/", p.ns, p.name), dg.value(), [&](json::Writer& w) {
      w.object()
          .field("ns", p.ns)
          .field("name", p.name)
          .field("node", p.node_name)
          .field("cpu", p.requests.milli_cpu)
          .field("mem", p.requests.memory)
          .field("by", bound_by_name(by))
          .field("assumed", assumed)
          .end();
    });
  });
}

// Small values that change often: written every round, sent when the text differs.
void offer_text(Delta& d, std::string_view key, const std::string& text) {
  Digest dg;
  dg.add(text);
  d.offer(key, dg.value(), [&](json::Writer& w) { w.raw(text); });
}

// The counts, and the head of each queue with each pod's last failure.
std::string queue_json(const sched::Scheduler& s) {
  const sched::Queue& q = s.queue();
  std::map<std::string_view, std::vector<std::pair<const kube::Pod*, int>>> heads;  // pod, attempts
  q.for_each_waiting([&](const kube::Pod& p, const char* queue, int n) { heads[queue].emplace_back(&p, n); },
                     Feed::kQueueHead);
  json::Writer w;
  w.object()
      .field("active", static_cast<std::uint64_t>(q.active_size()))
      .field("backoff", static_cast<std::uint64_t>(q.backoff_size()))
      .field("unschedulable", static_cast<std::uint64_t>(q.unschedulable_size()));
  w.key("heads").object();
  for (const auto& [queue, pods] : heads) {
    w.key(queue).array();
    for (const auto& [p, attempts] : pods) {
      const std::string* reason = s.last_failure(p->uid);
      w.object()
          .field("ns", p->ns)
          .field("name", p->name)
          .field("attempts", attempts)
          .field("reason", reason != nullptr ? *reason : std::string())
          .end();
    }
    w.end();
  }
  w.end().end();
  return std::move(w).str();
}

std::string lease_json(const FeedSources& src) {
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
  return std::move(w).str();
}

std::string tasks_json() {
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
  return std::move(w).str();
}

std::string scheduler_json(const sched::Scheduler& s) {
  std::string names;
  for (const std::string& n : s.profile_names()) names += (names.empty() ? "" : ",") + n;
  json::Writer w;
  w.object()
      .field("name", names)
      .field("scheduled", s.stats().binds_ok)
      .field("conflicts", s.stats().bind_conflicts)
      .end();
  return std::move(w).str();
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

Digest& Digest::add(std::string_view s) noexcept {
  for (unsigned char c : s) h_ = (h_ ^ c) * 1099511628211ull;
  h_ = (h_ ^ 0xff) * 1099511628211ull;  // a separator: ("ab","c") differs from ("a","bc")
  return *this;
}

Digest& Digest::add(std::int64_t v) noexcept {
  for (int i = 0; i < 8; ++i) h_ = (h_ ^ ((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff)) * 1099511628211ull;
  return *this;
}

Delta::Delta(ClientView& view, bool reset) : view_(view), changed_(reset) {
  ++view_.round;
  if (reset) view_.sent.clear();
  w_.object();
  if (reset) w_.field("reset", true);
  w_.key("set").object();
}

bool Delta::record(std::string_view key, std::uint64_t digest) {
  auto it = view_.sent.find(key);
  if (it == view_.sent.end()) {
    view_.sent.emplace(std::string(key), ClientView::Sent{digest, view_.round});
    return true;
  }
  it->second.round = view_.round;
  if (it->second.digest == digest) return false;
  it->second.digest = digest;
  return true;
}

std::string Delta::finish(std::span<const Tick> ticks) && {
  w_.end().key("del").array();
  for (auto it = view_.sent.begin(); it != view_.sent.end();) {
    if (it->second.round == view_.round) {
      ++it;
      continue;
    }
    w_.value(it->first);
    changed_ = true;
    it = view_.sent.erase(it);
  }
  w_.end().key("ticker").array();
  for (const Tick& t : ticks) write_tick(w_, t);
  w_.end().end();
  return changed_ || !ticks.empty() ? std::move(w_).str() : std::string();
}

Feed::Feed(FeedSources src) : src_(std::move(src)) {
  src_.scheduler.set_outcome_hook([this](const sched::Outcome& o) { record(o); });
}

Feed::~Feed() { src_.scheduler.set_outcome_hook(nullptr); }

std::string Feed::delta(ClientView& view, std::span<const Tick> ticks, bool reset) const {
  Delta d(view, reset);
  offer_nodes(d, src_.scheduler.cache());
  offer_pods(d, src_.scheduler.cache());
  offer_text(d, "queue", queue_json(src_.scheduler));
  offer_text(d, "lease", lease_json(src_));
  offer_text(d, "tasks", tasks_json());
  offer_text(d, "scheduler", scheduler_json(src_.scheduler));
  return std::move(d).finish(ticks);
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
  util::scope_exit leave([&sh = *sh] {
    if (--sh.clients == 0) sh.ticks.clear();
  });
  ClientView view;
  std::uint64_t seen = 0;  // the first message carries the ticks kept so far
  bool reset = true;
  auto last_write = std::chrono::steady_clock::now();
  for (;;) {
    std::vector<Tick> fresh;
    for (const Tick& t : sh->ticks)
      if (t.seq > seen) fresh.push_back(t);
    if (!fresh.empty()) seen = fresh.back().seq;
    std::string body = delta(view, fresh, reset);
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
