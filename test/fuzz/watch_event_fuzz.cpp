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
  (void)decoder.event<Pod>(input);
  (void)decoder.event<Node>(input);
  (void)decoder.event<Lease>(input);
  (void)decoder.event<Namespace>(input);
  (void)decoder.event<Service>(input);
  (void)decoder.event<ReplicationController>(input);
  (void)decoder.event<ReplicaSet>(input);
  (void)decoder.event<StatefulSet>(input);
  (void)decoder.event<PersistentVolumeClaim>(input);
  (void)decoder.event<PersistentVolume>(input);
  (void)decoder.event<StorageClass>(input);
  (void)decoder.event<PodDisruptionBudget>(input);
  (void)decoder.list<Pod>(input);
  // The same bytes as the body of a chunked watch response, fed in two parts.
  toysched::kube::WatchFramer framer(1 << 16);
  if (framer.feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")) {
    std::size_t half = size / 2;
    if (framer.feed(input.substr(0, half))) (void)framer.feed(input.substr(half));
    std::string line;
    while (framer.next_line(line)) (void)decoder.event<Pod>(line);
    (void)framer.finish();
  }
  return 0;
}
