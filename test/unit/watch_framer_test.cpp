#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "toysched/kube/watch_framer.hpp"

using toysched::kube::errc;
using toysched::kube::WatchFramer;

namespace {

// A watch response as the API server writes it: headers, then each flush as
// one HTTP chunk. The flush boundaries below deliberately cut events in two
// and put several events in one chunk, as a busy server does.
const std::vector<std::string> kEvents = {
    R"({"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"d","uid":"u1","resourceVersion":"10"}}})",
    R"({"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"d","uid":"u1","resourceVersion":"11"},"spec":{"nodeName":"n1"}}})",
    R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12"}}})",
    R"({"type":"DELETED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"d","uid":"u1","resourceVersion":"13"}}})",
};

std::string chunk(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return std::string(size) + std::string(data) + "\r\n";
}

std::string recorded_stream(bool final_chunk = true) {
  std::string body;
  for (auto& e : kEvents) body += e + "\n";
  std::string s =
      "HTTP/1.1 200 OK\r\nAudit-Id: 1\r\nCache-Control: no-cache, private\r\n"
      "Content-Type: application/json\r\nDate: Mon, 30 Nov 2026 09:00:00 GMT\r\n"
      "Transfer-Encoding: chunked\r\n\r\n";
  // Flushes: half of event 0; rest of 0 + all of 1 + part of 2; rest.
  std::size_t a = kEvents[0].size() / 2;
  std::size_t b = kEvents[0].size() + 1 + kEvents[1].size() + 1 + 7;
  s += chunk(body.substr(0, a));
  s += chunk(body.substr(a, b - a));
  s += chunk(body.substr(b));
  if (final_chunk) s += "0\r\n\r\n";
  return s;
}

std::vector<std::string> drain(WatchFramer& f) {
  std::vector<std::string> out;
  std::string line;
  while (f.next_line(line)) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("a recorded watch stream fed whole yields every event") {
  WatchFramer f;
  REQUIRE(f.feed(recorded_stream()));
  CHECK(f.header_done());
  CHECK(f.status() == 200);
  CHECK(f.header("Content-Type") == "application/json");
  CHECK(drain(f) == kEvents);
  CHECK(f.done());
  CHECK(f.finish());
}

TEST_CASE("fed byte by byte: the same events") {
  WatchFramer f;
  std::vector<std::string> got;
  for (char c : recorded_stream()) {
    REQUIRE(f.feed(std::string_view(&c, 1)));
    for (auto& l : drain(f)) got.push_back(l);
  }
  CHECK(got == kEvents);
  CHECK(f.done());
}

// Found by fuzz-watch-stream: a watch that ends before any event (its
// timeout, no bookmark) sends the final chunk right after the headers; split
// as "0\r\n" + "\r" (+ "\n"), Beast's parser asserted (n >= 5) and aborted.
TEST_CASE("a watch that ends with no event: its final chunk split anywhere") {
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string last = "0\r\n\r\n";
  // Every way to cut the 5 bytes into reads: bit i set = a cut after byte i.
  for (unsigned cuts = 0; cuts < 16; ++cuts) {
    CAPTURE(cuts);
    WatchFramer f;
    REQUIRE(f.feed(head));
    std::size_t from = 0;
    for (std::size_t i = 0; i < last.size(); ++i) {
      if (i + 1 == last.size() || (cuts >> i & 1u) != 0) {
        REQUIRE(f.feed(std::string_view(last).substr(from, i + 1 - from)));
        from = i + 1;
      }
    }
    CHECK(drain(f).empty());
    CHECK(f.done());
    CHECK(f.finish());
  }
}

TEST_CASE("fed in random chunk sizes: the same events") {
  const std::string s = recorded_stream();
  for (unsigned seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    WatchFramer f;
    std::vector<std::string> got;
    std::size_t off = 0;
    while (off < s.size()) {
      std::size_t n = std::uniform_int_distribution<std::size_t>(1, 64)(rng);
      n = std::min(n, s.size() - off);
      REQUIRE(f.feed(std::string_view(s).substr(off, n)));
      off += n;
      for (auto& l : drain(f)) got.push_back(l);
    }
    REQUIRE_MESSAGE(got == kEvents, "seed " << seed);
  }
}

TEST_CASE("a stream that stops mid-event is truncated; between events it is not") {
  std::string s = recorded_stream(false);
  WatchFramer cut;
  REQUIRE(cut.feed(std::string_view(s).substr(0, s.size() - 10)));
  CHECK_FALSE(cut.done());
  auto r = cut.finish();
  REQUIRE_FALSE(r);
  CHECK(r.error() == errc::stream_truncated);

  WatchFramer between;  // every chunk sent, the connection dropped before the final chunk
  REQUIRE(between.feed(s));
  CHECK(drain(between).size() == kEvents.size());
  CHECK_FALSE(between.done());
  CHECK(between.finish());
}

TEST_CASE("a 20 MB event is refused, not buffered") {
  WatchFramer f;
  std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  REQUIRE(f.feed(head));
  std::string big(1 << 20, 'x');
  bool refused = false;
  for (int i = 0; i < 20 && !refused; ++i) {
    auto r = f.feed(chunk(big));
    if (!r) {
      CHECK(r.error() == errc::object_too_large);
      refused = true;
    }
  }
  CHECK(refused);
  CHECK_FALSE(f.feed(chunk("{}\n")));  // the stream is dead after that
}

TEST_CASE("an error before the stream: status and body kept") {
  std::string body =
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods is forbidden","reason":"Forbidden","code":403})";
  std::string s =
      "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  WatchFramer f;
  for (char c : s) REQUIRE(f.feed(std::string_view(&c, 1)));
  CHECK(f.status() == 403);
  CHECK(f.done());
  CHECK(f.error_body() == body);
  CHECK(drain(f).empty());

  WatchFramer chunked;  // plain-text 429 sent chunked
  REQUIRE(chunked.feed("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nTransfer-Encoding: chunked\r\n\r\n" +
                       chunk("Too many requests, please try again later.\n") + "0\r\n\r\n"));
  CHECK(chunked.status() == 429);
  CHECK(chunked.header("Retry-After") == "1");
  CHECK(chunked.error_body() == "Too many requests, please try again later.\n");
}

TEST_CASE("garbage instead of HTTP is an error, not a crash") {
  WatchFramer f;
  CHECK_FALSE(f.feed("\x16\x03\x01 this is TLS, not HTTP\r\n\r\n"));
  WatchFramer g;
  REQUIRE(g.feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"));
  CHECK_FALSE(g.feed("zz\r\nnot a chunk size\r\n"));
}

// Issue 13 item 2: a valid pod of 1.3 MB of '<' arrives as a 7.8 MB event
// (the API server escapes each as \u003c); refused at 4 MiB, it wedged the
// watch. The bound is now the decoder's for one object (16 MiB).
TEST_CASE("an event of 8 MB is taken whole") {
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string event = R"({"type":"ADDED","object":{"x":")" + std::string(8'000'000, 'a') + R"("}})";
  WatchFramer f;
  REQUIRE(f.feed(head));
  REQUIRE(f.feed(chunk(event + "\n")));
  std::string line;
  REQUIRE(f.next_line(line));
  CHECK(line == event);
}
