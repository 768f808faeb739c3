#include "toysched/kube/watch_framer.hpp"

#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <functional>

namespace toysched::kube {

namespace http = boost::beast::http;

struct WatchFramer::impl {
  std::size_t max_event;
  http::response_parser<http::string_body> parser;
  std::string pending;  // bytes fed but not yet consumed by the parser
  std::string partial;  // the event being assembled
  std::deque<std::string> lines;
  bool failed = false;
  // Beast answered need_more to what is pending (see feed()).
  bool starved = false;

  explicit impl(std::size_t max) : max_event(max) {
    parser.eager(true);
    parser.body_limit(boost::none);  // a watch body never ends; events are bounded instead
    parser.header_limit(64 * 1024);
    // Take chunk payloads as they come instead of storing the whole body.
    // Only a 200 is a stream; any other status keeps its body for the error.
    on_chunk = [this](std::uint64_t, boost::beast::string_view data, boost::system::error_code& ec) -> std::size_t {
      if (parser.get().result_int() != 200) {
        if (error_text.size() + data.size() > max_event) {
          ec = make_error_code(errc::object_too_large);
          return 0;
        }
        error_text.append(data.data(), data.size());
        return data.size();
      }
      if (!split(std::string_view(data.data(), data.size()))) ec = make_error_code(errc::object_too_large);
      return data.size();
    };
    parser.on_chunk_body(on_chunk);  // Beast keeps a reference: on_chunk lives as long as we do
  }

  std::string error_text;
  std::function<std::size_t(std::uint64_t, boost::beast::string_view, boost::system::error_code&)> on_chunk;

  // Append body bytes; move every complete line out. False if the event
  // being assembled outgrew the limit.
  bool split(std::string_view data) {
    while (!data.empty()) {
      auto nl = data.find('\n');
      if (nl == std::string_view::npos) {
        partial.append(data);
        return partial.size() <= max_event;
      }
      partial.append(data.substr(0, nl));
      data.remove_prefix(nl + 1);
      if (partial.size() > max_event) return false;
      if (!partial.empty() && partial.back() == '\r') partial.pop_back();
      if (!partial.empty()) lines.push_back(std::move(partial));
      partial.clear();
    }
    return true;
  }
};

WatchFramer::WatchFramer(std::size_t max_event_bytes) : p_(std::make_unique<impl>(max_event_bytes)) {}
WatchFramer::~WatchFramer() = default;
WatchFramer::WatchFramer(WatchFramer&&) noexcept = default;
WatchFramer& WatchFramer::operator=(WatchFramer&&) noexcept = default;

result<void> WatchFramer::feed(std::string_view bytes) {
  if (p_->failed) return make_error_code(errc::stream_truncated);
  p_->pending.append(bytes);
  std::size_t off = 0;
  while (off < p_->pending.size() && !p_->parser.is_done()) {
    // Bytes Beast refused with need_more must come back with more, and
    // Beast 1.81 asserts (basic_parser.ipp, parse_chunk_header: n >= 5)
    // when a final chunk "0\r\n" it refused comes back as 4 bytes, its
    // closing CRLF split by the network (found by fuzz-watch-stream). So
    // refused bytes are offered again only once 5, the shortest final chunk,
    // are waiting: it needs more than it had anyway.
    if (p_->starved && p_->pending.size() - off < 5) break;
    boost::system::error_code ec;
    std::size_t n = p_->parser.put(boost::asio::buffer(p_->pending.data() + off, p_->pending.size() - off), ec);
    off += n;
    p_->starved = ec == http::error::need_more;
    if (ec == http::error::need_more) break;
    if (ec) {
      p_->failed = true;
      return ec;  // ours (object_too_large) or Beast's (malformed HTTP)
    }
    if (n == 0) break;
  }
  p_->pending.erase(0, off);
  // A non-chunked body (an error response with Content-Length) lands in the
  // string body instead of the chunk callback.
  if (p_->parser.is_done() && p_->parser.get().result_int() != 200 && p_->error_text.empty())
    p_->error_text = p_->parser.get().body();
  return {};
}

bool WatchFramer::header_done() const noexcept { return p_->parser.is_header_done(); }
int WatchFramer::status() const noexcept { return static_cast<int>(p_->parser.get().result_int()); }
std::string WatchFramer::header(std::string_view name) const {
  auto it = p_->parser.get().find(boost::beast::string_view(name.data(), name.size()));
  if (it == p_->parser.get().end()) return {};
  return std::string(it->value());
}

bool WatchFramer::next_line(std::string& out) {
  if (p_->lines.empty()) return false;
  out = std::move(p_->lines.front());
  p_->lines.pop_front();
  return true;
}

bool WatchFramer::done() const noexcept { return p_->parser.is_done(); }
const std::string& WatchFramer::error_body() const noexcept { return p_->error_text; }

result<void> WatchFramer::finish() const {
  bool only_space = p_->partial.find_first_not_of(" \t\r") == std::string::npos;
  if (!only_space) return make_error_code(errc::stream_truncated);
  return {};
}

}  // namespace toysched::kube
