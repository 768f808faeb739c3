// Kubernetes resource quantities ("500m", "1.5Gi", "12e6"), parsed exactly as
// apimachinery's resource.ParseQuantity (pkg/api/resource/quantity.go) does,
// then read out the way the scheduler counts: Value() and MilliValue().
//
// Grammar (quantity.go, comment on type Quantity):
//   quantity ::= [+-] number suffix
//   number   ::= digits | digits "." | digits "." digits | "." digits
//   suffix   ::= "" | n u m k M G T P E          (powers of 10)
//              | Ki Mi Gi Ti Pi Ei               (powers of 2)
//              | (e|E) [+-] digits               (decimal exponent)
// Note "1E" is 10^18 (the SI suffix), "1e3"/"1E3" are exponents, "1e" is bad.
//
// No floating point anywhere: values are exact decimals scaled in 128-bit
// integers (or a digit vector for inputs longer than 19 significant digits),
// so "1.5Gi" is exactly 1610612736 and "0.1m" is exactly 1 milli.
//
// Rounding: apimachinery rounds any non-zero value up to 1n, and Value() /
// MilliValue() round up again to the unit. We do the same in one step,
// ceil(|v| × 10^scale), on the magnitude: a negative quantity rounds away
// from zero (-0.5 → -1), which is what the int64 path of apimachinery and the
// doc comment of Quantity.Value() say. Negative quantities parse; whether
// one is acceptable (never for a request) is the caller's decision.
//
// Where we differ from apimachinery, on purpose, to never hand back a wrong
// number:
//  - a magnitude beyond int64 in the unit asked is errc::quantity_overflow.
//    apimachinery silently caps binary values at 2^63-1 ("9Ei") and lets
//    decimal ones wrap in Value(). The API server does store such values
//    ("memory: 100E", "cpu: 1e16" are valid), so what the scheduler reads
//    goes through the saturating forms below.
//  - a quantity with no digits at all ("Gi", ".", "+", "e5") is
//    errc::quantity_invalid; apimachinery's scanner reads those as 0, but the
//    server re-serializes every quantity in canonical form ("0"), so they
//    never arrive from it.
//  - exponents beyond int32 are taken at face value (tiny → 1 after ceil,
//    huge → overflow); apimachinery truncates them to int32.
#pragma once

#include "toysched/kube/errors.hpp"

#include <cstdint>
#include <string_view>

namespace toysched::kube {

// Value(): ceil(v), away from zero for negatives. Memory and storage bytes,
// pods, extended resources, hugepages.
result<std::int64_t> parse_quantity_value(std::string_view s);

// MilliValue(): ceil(v × 1000), away from zero for negatives. CPU in
// millicores.
result<std::int64_t> parse_quantity_milli(std::string_view s);

// What the scheduler counts with. A request or an allocatable beyond it
// reads as this much: far above any real node (1 PiB of memory or storage,
// over a billion cores in millicores), so a pod asking for it fits nowhere
// ("Insufficient memory"), yet 8191 such values still sum within int64, so
// the sums of a pod's containers and of a node's pods cannot overflow.
// 2^50 is also exact as a double, which scoring divides in.
inline constexpr std::int64_t kQuantityMax = std::int64_t{1} << 50;

// parse_quantity_value / _milli, then a magnitude beyond kQuantityMax
// (overflow included) clamped to ±kQuantityMax: a valid object never fails
// to decode for its size. Only quantity_invalid is an error.
result<std::int64_t> parse_quantity_value_saturating(std::string_view s);
result<std::int64_t> parse_quantity_milli_saturating(std::string_view s);

}  // namespace toysched::kube
