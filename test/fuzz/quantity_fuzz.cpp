// Fuzz target: the quantity parser. Any input gives a number or an error;
// a number is the same whichever way it was asked for (value vs milli),
// and the saturating form is that number clamped to ±kQuantityMax.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "toysched/kube/quantity.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view s(reinterpret_cast<const char*>(data), size);
  auto milli = toysched::kube::parse_quantity_milli(s);
  auto value = toysched::kube::parse_quantity_value(s);
  // Agreement: if both fit, value == ceil(milli / 1000) for positive quantities.
  if (milli && value && *milli > 0) {
    std::int64_t expect = *milli / 1000 + (*milli % 1000 != 0 ? 1 : 0);
    if (*value != expect) std::abort();
  }
  // The saturating forms the decoder uses: the exact value clamped, and
  // an error only for what does not parse at all.
  auto sat = toysched::kube::parse_quantity_value_saturating(s);
  if (sat.has_error() != (value.has_error() && value.error() == toysched::kube::errc::quantity_invalid)) std::abort();
  if (sat && (*sat > toysched::kube::kQuantityMax || *sat < -toysched::kube::kQuantityMax)) std::abort();
  if (sat && value && *sat != std::clamp(*value, -toysched::kube::kQuantityMax, toysched::kube::kQuantityMax)) {
    std::abort();
  }
  return 0;
}
