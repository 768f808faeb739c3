// Fuzz target: a whole watch stream, as the reflector reads it (WatchFramer
// fed what each socket read returned, every line out through the event
// decoder), split at boundaries the input chooses. The server's chunks and
// the socket's reads are not aligned to events, so the invariant is that
// the split does not matter:
//  - the same lines, and the same decoded events, come out of one whole
//    read, of reads of the chosen sizes, and of one byte at a time;
//  - they are the lines of the body as a plain split on '\n' finds them
//    (a trailing '\r' dropped, empty lines skipped), up to the first line
//    longer than the framer's limit, where every split fails alike;
//  - done() and finish() agree too.
//
// Input: [h][h size bytes][r][r size bytes][limit][body...]. The body is
// sent as HTTP chunks of the h sizes (cycled), the response bytes are read
// in pieces of the r sizes (cycled); each size byte v means v + 1 bytes.
// The low bit of `limit` says whether the final 0-size chunk is sent (else
// the connection is cut); the framer's limit is 64 * (limit / 2 + 1) bytes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "toysched/kube/decode.hpp"
#include "toysched/kube/watch_framer.hpp"

namespace {

using namespace toysched::kube;

struct Shape {
  std::vector<std::size_t> chunks, reads;
  std::size_t limit = 64;
  bool terminated = false;
  std::string_view body;
};

// Takes a count byte and that many size bytes; false when input runs out.
bool take_sizes(std::string_view& in, std::vector<std::size_t>& out) {
  if (in.empty()) return false;
  std::size_t n = static_cast<unsigned char>(in[0]) % 8 + 1;
  in.remove_prefix(1);
  if (in.size() < n) return false;
  for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<unsigned char>(in[i]) + std::size_t{1});
  in.remove_prefix(n);
  return true;
}

bool parse_shape(std::string_view in, Shape& s) {
  if (!take_sizes(in, s.chunks) || !take_sizes(in, s.reads) || in.empty()) return false;
  auto b = static_cast<unsigned char>(in[0]);
  s.terminated = (b & 1) != 0;
  s.limit = 64 * (std::size_t{b} / 2 + 1);
  in.remove_prefix(1);
  s.body = in;
  return true;
}

std::string response(const Shape& s) {
  std::string out = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  std::size_t off = 0;
  for (std::size_t i = 0; off < s.body.size(); ++i) {
    std::size_t n = std::min(s.chunks[i % s.chunks.size()], s.body.size() - off);
    char size[20];
    std::snprintf(size, sizeof size, "%zx\r\n", n);
    out.append(size).append(s.body.substr(off, n)).append("\r\n");
    off += n;
  }
  if (s.terminated) out.append("0\r\n\r\n");
  return out;
}

// What a plain split of the body gives, and whether a line outgrows the limit.
struct Expected {
  std::vector<std::string> lines;
  bool too_large = false;
  bool cut_inside = false;
};

Expected split(const Shape& s) {
  Expected e;
  std::string_view rest = s.body;
  while (true) {
    auto nl = rest.find('\n');
    std::string_view seg = rest.substr(0, nl);
    if (seg.size() > s.limit) {
      e.too_large = true;
      return e;
    }
    if (nl == std::string_view::npos) {
      e.cut_inside = seg.find_first_not_of(" \t\r") != std::string_view::npos;
      return e;
    }
    if (!seg.empty() && seg.back() == '\r') seg.remove_suffix(1);
    if (!seg.empty()) e.lines.emplace_back(seg);
    rest.remove_prefix(nl + 1);
  }
}

// One line of what a run saw: the line and what the decoder made of it.
std::string summary(Decoder& d, const std::string& line) {
  auto ev = d.event<Pod>(line);
  if (!ev) return line + " -> error " + ev.error().message();
  std::string out = line + " -> " + std::string(to_string(ev->type)) + " " + ev->object.ns + "/" + ev->object.name +
                    " uid=" + ev->object.uid + " rv=" + ev->object.resource_version +
                    " status=" + std::to_string(ev->status.code) + ev->status.reason;
  if (ev->undecodable) out += " undecodable " + ev->undecodable->name + ": " + ev->undecodable->error;
  return out;
}

struct Run {
  std::vector<std::string> events;  // summaries, in order
  bool failed = false;
  bool done = false;
  bool finished_ok = false;
};

// Feeds `bytes` in pieces of `sizes` (cycled), draining lines after each
// feed as the reflector does, until the framer fails or the bytes end.
Run run(Decoder& d, const Shape& s, std::string_view bytes, const std::vector<std::size_t>& sizes) {
  Run r;
  WatchFramer framer(s.limit);
  std::string line;
  for (std::size_t i = 0, off = 0; off < bytes.size() && !r.failed; ++i) {
    std::size_t n = std::min(sizes[i % sizes.size()], bytes.size() - off);
    r.failed = !framer.feed(bytes.substr(off, n));
    off += n;
    while (framer.next_line(line)) r.events.push_back(summary(d, line));
  }
  r.done = framer.done();
  r.finished_ok = framer.finish().has_value();
  return r;
}

bool agree(const Run& a, const Run& b) {
  return a.events == b.events && a.failed == b.failed &&
         (a.failed || (a.done == b.done && a.finished_ok == b.finished_ok));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Shape s;
  if (!parse_shape(std::string_view(reinterpret_cast<const char*>(data), size), s)) return 0;
  static Decoder decoder;
  std::string bytes = response(s);
  Run whole = run(decoder, s, bytes, {bytes.size()});
  Run pieces = run(decoder, s, bytes, s.reads);
  Run single = run(decoder, s, bytes, {1});
  if (!agree(whole, pieces) || !agree(whole, single)) std::abort();
  // Against the plain split: the lines, where it fails, how it ends.
  Expected e = split(s);
  if (whole.events.size() != e.lines.size() || whole.failed != e.too_large) std::abort();
  for (std::size_t i = 0; i < e.lines.size(); ++i) {
    if (whole.events[i].compare(0, e.lines[i].size() + 4, e.lines[i] + " -> ") != 0) std::abort();
  }
  if (!whole.failed && (whole.done != s.terminated || whole.finished_ok == e.cut_inside)) std::abort();
  return 0;
}
