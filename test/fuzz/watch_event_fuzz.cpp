// Fuzz target: everything a watch stream can carry, through the framer and
// every event decoder. Nothing may crash, hang or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <string>

#include "toysched/kube/decode.hpp"
#include "toysched/kube/kinds.hpp"
#include "toysched/kube/watch_framer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  static toysched::kube::Decoder decoder;
  // Every watched kind's event decoder, from the one list of kinds.
#define TOYSCHED_FUZZ_EVENT(Type, resource, prefix, scope) (void)decoder.event<toysched::kube::Type>(input);
  TOYSCHED_KINDS(TOYSCHED_FUZZ_EVENT)
#undef TOYSCHED_FUZZ_EVENT
  (void)decoder.list<toysched::kube::Pod>(input);
  // The same bytes as the body of a chunked watch response, fed in two parts.
  toysched::kube::WatchFramer framer(1 << 16);
  if (framer.feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")) {
    std::size_t half = size / 2;
    if (framer.feed(input.substr(0, half))) (void)framer.feed(input.substr(half));
    std::string line;
    while (framer.next_line(line)) (void)decoder.event<toysched::kube::Pod>(line);
    (void)framer.finish();
  }
  return 0;
}
