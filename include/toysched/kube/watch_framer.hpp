// Turns the raw bytes of a watch response into event lines, with no I/O.
//
// A watch is one long HTTP/1.1 response: status and headers, then a chunked
// body of newline-terminated JSON events. The server flushes when its queue
// is empty, so chunks are not aligned to events: one chunk may hold several
// events and one event may span chunks (and TCP reads split both again).
// Feed whatever the socket gave; take out whole lines.
//
//   feed(bytes) ──► Beast's HTTP parser (status, headers, de-chunking)
//                      └──► line splitter ──► next_line()
//
// The transport owns the socket and calls feed() after each read; tests feed
// recorded streams byte by byte. A response that is not 200 (an error before
// the stream started) is collected whole in error_body().
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <string_view>

#include "toysched/kube/decode.hpp"
#include "toysched/kube/errors.hpp"

namespace toysched::kube {

class WatchFramer {
 public:
  // Events beyond max_event_bytes are refused: the decoder's bound for one
  // object (decode.hpp kMaxObjectBytes explains it); a bigger line is a
  // broken or hostile stream.
  explicit WatchFramer(std::size_t max_event_bytes = kMaxObjectBytes);
  ~WatchFramer();
  WatchFramer(WatchFramer&&) noexcept;
  WatchFramer& operator=(WatchFramer&&) noexcept;

  // Consume bytes from the connection. An error (malformed HTTP, an event
  // too large) is final: the stream must be dropped.
  result<void> feed(std::string_view bytes);

  bool header_done() const noexcept;
  int status() const noexcept;  // valid once header_done()
  std::string header(std::string_view name) const;

  // The next complete event line, if any (without its newline).
  bool next_line(std::string& out);

  // The response ended (final chunk seen).
  bool done() const noexcept;

  // For a non-200 response: its body, once done().
  const std::string& error_body() const noexcept;

  // Call when the connection closed: ok if the stream ended cleanly or
  // between events; errc::stream_truncated if it stopped inside an event.
  result<void> finish() const;

 private:
  struct impl;
  std::unique_ptr<impl> p_;
};

}  // namespace toysched::kube
