// Fuzz target: the Lease decoder (object, list, watch event). Nothing may
// crash; and a Lease that decodes must survive the round trip the elector
// makes with it (decode, encode_lease for the PUT, the server echoes it):
// encoding it and decoding that again gives back every field, and encoding
// the result gives the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "toysched/kube/decode.hpp"
#include "toysched/kube/objects.hpp"

namespace {

using toysched::kube::Lease;

bool same(const Lease& a, const Lease& b) {
  return a.ns == b.ns && a.name == b.name && a.uid == b.uid && a.resource_version == b.resource_version &&
         a.holder_identity == b.holder_identity && a.lease_duration_seconds == b.lease_duration_seconds &&
         a.acquire_time == b.acquire_time && a.renew_time == b.renew_time &&
         a.lease_transitions == b.lease_transitions && a.strategy == b.strategy &&
         a.preferred_holder == b.preferred_holder;
}

void round_trip(toysched::kube::Decoder& d, const Lease& l) {
  std::string once = toysched::kube::encode_lease(l);
  auto back = d.lease(once);
  if (!back || !same(l, *back)) std::abort();
  if (toysched::kube::encode_lease(*back) != once) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  static toysched::kube::Decoder decoder;
  if (auto l = decoder.lease(input)) round_trip(decoder, *l);
  if (auto ev = decoder.event<Lease>(input); ev && !ev->undecodable && !ev->object.name.empty()) {
    round_trip(decoder, ev->object);
  }
  if (auto list = decoder.list<Lease>(input)) {
    for (const auto& l : list->items) round_trip(decoder, l);
  }
  return 0;
}
