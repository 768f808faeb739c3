// Fuzz target: everything a watch stream can carry, through the framer and
// every event decoder. Nothing may crash, hang or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <string>

#include "toysched/kube/decode.hpp"
#include "toysched/kube/watch_framer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  static toysched::kube::Decoder decoder;
  (void)decoder.pod_event(input);
  (void)decoder.node_event(input);
  (void)decoder.lease_event(input);
  (void)decoder.namespace_event(input);
  (void)decoder.service_event(input);
  (void)decoder.replication_controller_event(input);
  (void)decoder.replica_set_event(input);
  (void)decoder.stateful_set_event(input);
  (void)decoder.persistent_volume_claim_event(input);
  (void)decoder.persistent_volume_event(input);
  (void)decoder.storage_class_event(input);
  (void)decoder.pod_disruption_budget_event(input);
  (void)decoder.pod_list(input);
  // The same bytes as the body of a chunked watch response, fed in two parts.
  toysched::kube::WatchFramer framer(1 << 16);
  if (framer.feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")) {
    std::size_t half = size / 2;
    if (framer.feed(input.substr(0, half))) (void)framer.feed(input.substr(half));
    std::string line;
    while (framer.next_line(line)) (void)decoder.pod_event(line);
    (void)framer.finish();
  }
  return 0;
}
