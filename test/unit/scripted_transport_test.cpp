// The scripted transport itself (support/scripted_transport.hpp): the loop
// tests trust it to fail where it is told, to apply a request exactly when
// a real server would have, and to honour RequestLimits as HttpTransport
// does, so each of those is checked here.
#include <doctest/doctest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <optional>

#include "support/scripted_transport.hpp"
#include "toysched/kube/watch_framer.hpp"

using namespace toysched;
using testing::Fault;
using testing::FaultSpec;
using testing::Reply;
using testing::ScriptedTransport;
using testing::StreamScript;
namespace asio = boost::asio;
namespace http = boost::beast::http;

namespace {

struct Fixture {
  asio::io_context io;
  ScriptedTransport fake{io.get_executor()};
  int applied = 0;
  Fixture() {
    fake.on(http::verb::post, "/api/v1/namespaces/*/pods/*/binding", [this](const kube::HttpRequest&) {
      ++applied;
      return Reply{201, "{}"};
    });
  }
  kube::expected<kube::HttpResponse> post(kube::RequestLimits limits = {}) {
    kube::HttpRequest r;
    r.verb = http::verb::post;
    r.target = "/api/v1/namespaces/a/pods/p/binding";
    r.limits = std::move(limits);
    std::optional<kube::expected<kube::HttpResponse>> out;
    asio::co_spawn(io, fake.request(std::move(r)), [&](std::exception_ptr e, kube::expected<kube::HttpResponse> v) {
      REQUIRE_FALSE(e);
      out.emplace(std::move(v));
    });
    io.restart();
    io.run();
    REQUIRE(out.has_value());
    return std::move(*out);
  }
};

}  // namespace

TEST_CASE("scripted transport: a route answers; a request nothing matches is a 404 and is noted") {
  Fixture f;
  auto r = f.post();
  REQUIRE(r.has_value());
  CHECK(r->status == 201);
  CHECK(f.applied == 1);
  kube::HttpRequest other;
  other.target = "/api/v1/nodes";
  std::optional<int> status;
  asio::co_spawn(f.io, f.fake.request(other),
                 [&](std::exception_ptr, kube::expected<kube::HttpResponse> v) { status = v ? v->status : -1; });
  f.io.restart();
  f.io.run();
  CHECK(status == 404);
  REQUIRE(f.fake.unexpected().size() == 1);
  CHECK(f.fake.unexpected()[0] == "GET /api/v1/nodes");
  CHECK(f.fake.points() == 2);
  CHECK(f.fake.point_log()[0] == "POST /api/v1/namespaces/a/pods/p/binding");
}

TEST_CASE("scripted transport: each fault fails the request its own way, applied or not") {
  struct Case {
    FaultSpec fault;
    kube::errc code;  // ok: a response came
    int status;
    int applied;
    bool replayed;
  };
  const Case cases[] = {
      {{Fault::reset_before_send}, kube::errc::connection_lost, 0, 0, false},
      {{Fault::reset_after_send}, kube::errc::connection_lost, 0, 1, false},
      {{Fault::replay}, kube::errc::ok, 201, 2, true},
      {{Fault::timeout}, kube::errc::request_timeout, 0, 1, false},
      {{Fault::status, 409}, kube::errc::ok, 409, 0, false},
  };
  for (const Case& c : cases) {
    INFO(testing::describe(c.fault));
    Fixture f;
    f.fake.fail_at(1, c.fault);
    auto r = f.post();
    CHECK(f.fake.fault_fired());
    CHECK(f.applied == c.applied);
    if (c.code == kube::errc::ok) {
      REQUIRE(r.has_value());
      CHECK(r->status == c.status);
      CHECK(r->replayed == c.replayed);
    } else {
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code == kube::make_error_code(c.code));
    }
  }
}

TEST_CASE("scripted transport: may_send and the deadline are asked before the request leaves") {
  Fixture f;
  kube::RequestLimits no;
  no.may_send = [] { return false; };
  auto r = f.post(no);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == kube::make_error_code(kube::errc::cancelled));
  kube::RequestLimits late;
  late.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  r = f.post(late);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == kube::make_error_code(kube::errc::request_timeout));
  CHECK(f.applied == 0);
  CHECK(f.fake.sent().empty());
}

TEST_CASE("scripted transport: a watch sends its events, one per read, then parks until closed") {
  asio::io_context io;
  ScriptedTransport fake(io.get_executor());
  fake.on_watch("/api/v1/pods", [](const std::string&) {
    return StreamScript{{R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7"}}})"},
                        StreamScript::End::park};
  });
  kube::WatchFramer framer;
  std::unique_ptr<kube::Stream> stream;
  std::vector<std::string> lines;
  bool parked = false;
  std::optional<kube::errc> last;
  fake.on_park([&] {
    parked = true;
    stream->close();
  });
  // Named: the coroutine's frame refers to the closure, which must outlive it.
  auto read_all = [&]() -> asio::awaitable<void> {
    auto s = co_await fake.open_stream("/api/v1/pods?watch=1", framer);
    REQUIRE(s.has_value());
    stream = std::move(*s);
    for (;;) {
      auto more = co_await stream->read_into(framer, std::chrono::seconds(1));
      std::string line;
      while (framer.next_line(line)) lines.push_back(line);
      if (!more) {
        last = static_cast<kube::errc>(more.error().code.value());
        co_return;
      }
    }
  };
  asio::co_spawn(io, read_all(), [](std::exception_ptr e) { REQUIRE_FALSE(e); });
  io.run();
  CHECK(framer.status() == 200);
  CHECK(lines.size() == 1);
  CHECK(parked);
  CHECK(last == kube::errc::connection_lost);
  CHECK(fake.points() == 3);  // the open, the read with the event, the read that parked
}
