// The exec plugin's runs: the child process (real /bin/sh scripts: exit
// codes, a hang, a missing command, what it is given) and the
// authenticator's cache (a scripted runner, the clock passed in).
// Both are private to src/kube, hence the relative includes.
#include "../../src/kube/exec_auth.hpp"
#include "../../src/kube/exec_plugin.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <doctest/doctest.h>

#include <ctime>
#include <deque>
#include <optional>

#include "config_fixtures.hpp"

namespace asio = boost::asio;
using namespace toysched::kube;
using namespace std::chrono;

namespace {

template <class T>
T run(asio::io_context& io, asio::awaitable<T> a) {
  std::optional<T> out;
  asio::co_spawn(io, std::move(a), [&](std::exception_ptr e, T v) {
    if (e) std::rethrow_exception(e);
    out = std::move(v);
  });
  io.restart();
  io.run();
  REQUIRE(out);
  return std::move(*out);
}

ExecConfig script(toysched::test::config::TempDir& t, std::string_view body) {
  ExecConfig c;
  c.command = t.write("plugin.sh", "#!/bin/sh\n" + std::string(body)).string();
  std::filesystem::permissions(c.command, std::filesystem::perms::owner_all);
  c.api_version = std::string(kExecV1);
  return c;
}

expected<std::string> run_plugin(const ExecConfig& c, milliseconds timeout = seconds(10)) {
  asio::io_context io;
  return run(io, run_exec_plugin(io.get_executor(), c, timeout));
}

void require_error(const expected<std::string>& r, std::initializer_list<std::string_view> needles) {
  REQUIRE_FALSE(r.has_value());
  INFO(r.error().message);
  CHECK(r.error().code == make_error_code(errc::exec_failed));
  for (auto n : needles) CHECK(r.error().message.find(n) != std::string::npos);
}

}  // namespace

TEST_CASE("exec plugin: stdout, args, env and KUBERNETES_EXEC_INFO; stdin is not a terminal") {
  toysched::test::config::TempDir t;
  ExecConfig c = script(t, R"(echo "args=$*"; echo "env=$FOO"; echo "info=$KUBERNETES_EXEC_INFO"
[ -t 0 ] && echo tty; cat; echo end)");
  c.args = {"a", "b c"};
  c.env = {{"FOO", "one"}, {"FOO", "two"}};  // the last word on a name wins, as Go's exec.Cmd
  auto r = run_plugin(c);
  REQUIRE(r.has_value());
  CHECK(*r == "args=a b c\nenv=two\ninfo=" + exec_info_json(c) + "\nend\n");
}

TEST_CASE("exec plugin: a failure says the exit code and the last stderr line") {
  toysched::test::config::TempDir t;
  require_error(run_plugin(script(t, "echo noise >&2; echo 'token expired, run aws sso login' >&2; exit 3")),
                {"plugin.sh failed with exit code 3", "(stderr: token expired, run aws sso login)"});
  require_error(run_plugin(script(t, "kill -9 $$")), {"killed by signal 9"});
}

TEST_CASE("exec plugin: a missing command names it and shows the install hint") {
  ExecConfig c;
  c.command = "toysched-no-such-plugin";
  c.install_hint = "Install it with: apt install toysched-plugin";
  require_error(run_plugin(c), {"executable toysched-no-such-plugin not found", "apt install toysched-plugin"});
  c.command = "/nonexistent/dir/plugin";
  require_error(run_plugin(c), {"/nonexistent/dir/plugin not found"});
}

TEST_CASE("exec plugin: a hung plugin is killed at the timeout, with what it started") {
  toysched::test::config::TempDir t;
  const auto start = steady_clock::now();
  // The background sleep holds the pipes open: only killing the group ends it.
  require_error(run_plugin(script(t, "echo waiting for a browser >&2; sleep 30 & wait"), milliseconds(300)),
                {"plugin.sh did not finish within 0.30s; killed it", "waiting for a browser"});
  // Pipes closed but never exits: waited for until the timeout too.
  require_error(run_plugin(script(t, "exec >&- 2>&-; sleep 30"), milliseconds(300)), {"did not finish"});
  CHECK(steady_clock::now() - start < seconds(5));
}

namespace {

// The authenticator with a scripted plugin and a clock the test moves.
struct Scripted {
  asio::io_context io;
  ExecAuthenticator::Clock::time_point now = ExecAuthenticator::Clock::time_point{} + hours(24 * 365 * 50);
  std::deque<expected<std::string>> outputs;
  std::optional<Error> refuse;  // the transport's check
  ExecAuthenticator auth;

  static ExecConfig config() {
    ExecConfig c;
    c.command = "p";
    c.api_version = std::string(kExecV1);
    return c;
  }

  Scripted()
      : auth(
            io.get_executor(), config(), "user \"u\"",
            [this](const ExecConfig&) -> asio::awaitable<expected<std::string>> {
              asio::steady_timer t(io, milliseconds(1));  // a real suspension: concurrent get()s overlap
              co_await t.async_wait(asio::use_awaitable);
              auto o = outputs.front();
              outputs.pop_front();
              co_return o;
            },
            [this](const ExecCredential&) { return refuse; }, [this] { return now; }) {}

  std::string token(std::string_view t, std::optional<seconds> life = {}) {
    std::string s = R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{"token":")" +
                    std::string(t) + "\"";
    if (life) {
      const std::time_t at = ExecAuthenticator::Clock::to_time_t(now + *life);
      std::tm tm{};
      gmtime_r(&at, &tm);
      char buf[32];
      std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
      s += R"(,"expirationTimestamp":")" + std::string(buf) + "\"";
    }
    return s + "}}";
  }
  expected<ExecAuthenticator::Credential> get() { return run(io, auth.get()); }
};

Error failure(std::string m) { return {make_error_code(errc::exec_failed), std::move(m)}; }

}  // namespace

TEST_CASE("exec authenticator: cached until a little before the expiry") {
  Scripted s;
  s.outputs = {s.token("one", seconds(100)), s.token("two", seconds(10))};
  auto a = s.get();
  REQUIRE(a.has_value());
  CHECK((*a)->token == "one");
  s.now += seconds(79);
  CHECK(s.get().value() == *a);
  CHECK(s.auth.runs() == 1);
  s.now += seconds(2);  // within the last fifth of its life: refreshed before it expires
  CHECK(s.get().value()->token == "two");
  CHECK(s.auth.runs() == 2);
}

TEST_CASE("exec authenticator: a 401 runs the plugin again, once per credential") {
  Scripted s;
  s.outputs = {s.token("wrong"), s.token("right")};
  auto wrong = s.get().value();
  CHECK(s.get().value() == wrong);  // no expiry: kept
  s.auth.rejected(wrong);
  auto right = s.get().value();
  CHECK(right->token == "right");
  s.auth.rejected(wrong);  // a late 401 to the old one: the new one stays
  CHECK(s.get().value() == right);
  CHECK(s.auth.runs() == 2);
}

TEST_CASE("exec authenticator: failures back off; a valid credential outlives a failed refresh") {
  Scripted s;
  s.outputs = {failure("executable p failed with exit code 1"), s.token("one", seconds(100)),
               failure("executable p did not finish"), s.token("two", seconds(100))};
  auto r = s.get();
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message == "exec credentials of user \"u\": executable p failed with exit code 1");
  CHECK_FALSE(s.get().has_value());  // within the 1 s backoff: the same error, no run
  CHECK(s.auth.runs() == 1);
  s.now += seconds(1);
  CHECK(s.get().value()->token == "one");
  s.now += seconds(85);  // due: the refresh fails, the old one has 14 s left
  CHECK(s.get().value()->token == "one");
  CHECK(s.auth.runs() == 3);
  s.now += seconds(1);
  CHECK(s.get().value()->token == "two");
}

TEST_CASE("exec authenticator: garbage, a refused certificate, one run for concurrent callers") {
  Scripted s;
  s.outputs = {std::string("<html>login</html>"), s.token("refused"), s.token("ok")};
  auto r = s.get();
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message.find("executable p: its output is not JSON") != std::string::npos);
  s.now += seconds(1);
  s.refuse = failure("client certificate does not load");
  REQUIRE_FALSE(s.get().has_value());
  s.refuse.reset();
  s.now += seconds(2);
  int got = 0;
  for (int i = 0; i < 3; ++i)
    asio::co_spawn(s.io, s.auth.get(), [&](std::exception_ptr, expected<ExecAuthenticator::Credential> c) {
      got += c && (*c)->token == "ok";
    });
  s.io.restart();
  s.io.run();
  CHECK(got == 3);
  CHECK(s.auth.runs() == 3);
}
