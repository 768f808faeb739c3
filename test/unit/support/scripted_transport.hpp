// A Transport for unit tests: no socket, a script in its place. Requests
// are answered by handlers matched on verb and path (the test's model of the
// API server), watch streams by a handler that says which events to send and
// how the stream ends; everything that reached the "server" is recorded.
//
// Every await point the code under test meets in the transport is counted:
// each request(), open_stream(), probe() and each Stream::read_into(). A test
// runs its scenario once to count them, then again failing the Nth one:
//
//   request:  reset_before_send  connection_lost; the server never saw it
//             reset_after_send   the server applied it; connection_lost
//             replay             applied, lost, sent again (as HttpTransport
//                                replays): the second answer, replayed=true
//             timeout            applied; request_timeout
//             status             refused with that HTTP status (409, 410,
//                                429, 500...) and a Status body; not applied
//   stream open: resets and timeouts as above; status: the watch refused
//   stream read: resets end the connection; timeout: the idle read timed
//             out; status: an ERROR event with that code (410: expired)
//
// As HttpTransport, a request first waits (a turn of the loop, as for the
// rate limiter), then asks RequestLimits (deadline, may_send) whether it may
// still go, and is in flight for another turn between its send and its
// answer: other coroutines run at both places, as they would. No real time
// passes here.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http/verb.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "toysched/kube/transport.hpp"

namespace toysched::testing {

enum class Fault { reset_before_send, reset_after_send, replay, timeout, status };

struct FaultSpec {
  Fault kind;
  int status = 0;  // Fault::status only
};
std::string describe(const FaultSpec& f);

// A server's answer to one request.
struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
};
// {"kind":"Status",...,"reason":reason,"code":code}: the API server's refusal.
std::string status_body(int code, const std::string& reason, const std::string& message);
Reply status_reply(int code, const std::string& reason, const std::string& message = "refused by the script");

// What a watch sends: its events (one JSON line each, one per read), then
// an end: `end` finishes the response, `park` waits for close() (a quiet
// watch), `reset` loses the connection.
struct StreamScript {
  std::vector<std::string> events;
  enum class End { end, park, reset } end = End::park;
};

class ScriptedTransport final : public kube::Transport {
 public:
  using Handler = std::function<Reply(const kube::HttpRequest&)>;
  using WatchHandler = std::function<StreamScript(const std::string& target)>;

  explicit ScriptedTransport(boost::asio::any_io_executor ex);
  ~ScriptedTransport() override;

  // Requests of `verb` whose path (the target before '?') matches `path`,
  // where a '*' segment matches any one segment:
  // "/api/v1/namespaces/*/pods/*/binding". The first match answers; a
  // request nothing matches is answered 404 and noted in unexpected().
  void on(boost::beast::http::verb verb, std::string path, Handler h);
  // Watch streams opened on `path` (same matching).
  void on_watch(std::string path, WatchHandler h);

  // Fails the nth await point (1-based) in the given way.
  void fail_at(std::size_t n, FaultSpec f);
  // Runs f when the nth await point is reached, before anything else.
  void at(std::size_t n, std::function<void()> f);
  // Called each time a watch read parks (nothing more to send).
  void on_park(std::function<void()> f) { on_park_ = std::move(f); }
  // A slow server: requests `which` matches stay in flight (sent, not
  // answered) until let_go(), which also ends the holding.
  void hold(std::function<bool(const kube::HttpRequest&)> which) { hold_ = std::move(which); }
  void let_go();

  std::size_t points() const noexcept { return points_; }
  // What each await point was, in order ("POST /api/...", "WATCH /api/...",
  // "READ", "PROBE"): point n is what(n - 1).
  const std::vector<std::string>& point_log() const noexcept { return point_log_; }
  bool fault_fired() const noexcept { return fired_; }

  // A request that reached the server (applied, refused by status, or
  // replayed: one entry per arrival). `seq` orders sends and answers.
  struct Sent {
    boost::beast::http::verb verb;
    std::string target;
    std::string body;
    std::size_t point = 0;           // the await point it came through
    std::uint64_t sent_seq = 0;      // when it reached the server
    std::uint64_t answered_seq = 0;  // when its answer reached the caller (0: never)
    std::uint64_t done_seq = 0;      // when the caller had a result, answer or failure
    int status = 0;                  // the status the server answered (delivered or not)
  };
  const std::vector<Sent>& sent() const noexcept { return sent_; }
  // The sequence so far: a test marks a moment of its own with it.
  std::uint64_t seq() const noexcept { return seq_; }
  // Sent entries of `verb` whose target contains `needle`.
  std::vector<Sent> sent_matching(boost::beast::http::verb verb, const std::string& needle) const;
  const std::vector<std::string>& unexpected() const noexcept { return unexpected_; }
  std::size_t open_streams() const noexcept { return open_streams_; }

  boost::asio::awaitable<kube::expected<kube::HttpResponse>> request(kube::HttpRequest req) override;
  boost::asio::awaitable<kube::expected<std::unique_ptr<kube::Stream>>> open_stream(std::string target,
                                                                                    kube::WatchFramer& framer) override;
  boost::asio::awaitable<void> warm_up(std::size_t) override { co_return; }
  boost::asio::awaitable<void> keep_warm(std::size_t, std::chrono::milliseconds) override { co_return; }
  boost::asio::awaitable<bool> probe() override;

  const kube::ClientConfig& config() const noexcept override { return config_; }
  boost::asio::any_io_executor executor() const noexcept override { return ex_; }
  bool http2() const noexcept override { return false; }
  std::size_t idle_connections() const noexcept override { return 0; }
  void close_when_idle() override {}
  const std::map<std::pair<std::string, std::string>, std::uint64_t>& request_counts() const noexcept override {
    return counts_;
  }

 private:
  class FakeStream;
  friend class FakeStream;
  struct Route {
    boost::beast::http::verb verb;
    std::string path;
    Handler handler;
    WatchHandler watch;
  };
  // Counts an await point: runs its hook; the fault to apply there, if any.
  std::optional<FaultSpec> arrive(std::string what);
  boost::asio::awaitable<void> turn();
  const Route* route(boost::beast::http::verb verb, const std::string& target, bool watch) const;
  Reply serve(const kube::HttpRequest& req, std::size_t point);

  boost::asio::any_io_executor ex_;
  kube::ClientConfig config_;
  std::vector<Route> routes_;
  std::map<std::size_t, FaultSpec> faults_;
  std::map<std::size_t, std::function<void()>> hooks_;
  std::function<void()> on_park_;
  std::function<bool(const kube::HttpRequest&)> hold_;
  std::vector<boost::asio::steady_timer*> held_;  // each in its request's frame
  std::size_t points_ = 0;
  std::vector<std::string> point_log_;
  bool fired_ = false;
  std::uint64_t seq_ = 0;
  std::vector<Sent> sent_;
  std::vector<std::string> unexpected_;
  std::size_t open_streams_ = 0;
  std::map<std::pair<std::string, std::string>, std::uint64_t> counts_;
};

}  // namespace toysched::testing
