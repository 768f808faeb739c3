// Quantity parsing against apimachinery's own expectations.
//
// Where expected values come from (the `src` column):
//   QP   apimachinery pkg/api/resource/quantity_test.go, TestQuantityParse
//        table: it gives the exact parsed value; we read it out with the
//        rules of quantity.go Value() (= ScaledValue(0), ceil) and
//        MilliValue() (= ScaledValue(Milli), ceil(v × 1000)).
//   QPI  the same test's `invalid` list (inputs ParseQuantity must reject).
//   QRU  quantity_test.go TestQuantityRoundUp ("-9.01" at scale 0 → -10:
//        negatives round away from zero).
//   QPS  quantity_test.go TestParseQuantityString / the "+" loop of
//        TestQuantityParse (explicit sign accepted).
//   RULE quantity.go ParseQuantity: exact decimal, non-zero values rounded
//        up ("0.1m will rounded up to 1m"), suffix table of suffix.go, the
//        exponent read by strconv.ParseInt (leading zeros and a sign are
//        fine, beyond int64 is an error).
//   OURS quantity.hpp's documented differences: overflow is an error rather
//        than apimachinery's silent cap ("9Ei" is capped to 2^63-1 there),
//        and digit-less inputs ("Gi") are invalid.
//   K8S  Kubernetes' documented resource units (cpu 1.5 = 1500m) and
//        quantity.go's round-up of non-zero values (0.1m → 1m).
// Binary and long-decimal values were cross-checked with Python's
// fractions.Fraction (exact rational arithmetic).
#include "toysched/kube/quantity.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>

using toysched::kube::errc;
using toysched::kube::kQuantityMax;
using toysched::kube::parse_quantity_milli;
using toysched::kube::parse_quantity_milli_saturating;
using toysched::kube::parse_quantity_value;
using toysched::kube::parse_quantity_value_saturating;

namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

enum class unit { value, milli };

struct Case {
  std::string_view input;
  unit u;
  std::int64_t expected;  // ignored when err != ok
  errc err;
  std::string_view src;
};

constexpr auto V = unit::value;
constexpr auto M = unit::milli;
constexpr auto OK = errc::ok;
constexpr auto OVF = errc::quantity_overflow;

// clang-format off
constexpr Case kCases[] = {
    // input                      unit expected                 error src
    {"0",                          V, 0,                        OK,  "QP"},
    {"0Ki",                        V, 0,                        OK,  "QP"},
    {"0m",                         M, 0,                        OK,  "QP"},
    {"1",                          V, 1,                        OK,  "QP"},
    {"1",                          M, 1000,                     OK,  "QP"},
    {"1Ki",                        V, 1024,                     OK,  "QP"},
    {"8Ki",                        V, 8192,                     OK,  "QP"},
    {"7Mi",                        V, 7340032,                  OK,  "QP"},
    {"6Gi",                        V, 6442450944,               OK,  "QP"},
    {"5Ti",                        V, 5497558138880,            OK,  "QP"},
    {"4Pi",                        V, 4503599627370496,         OK,  "QP"},
    {"3Ei",                        V, 3458764513820540928,      OK,  "QP"},
    {"5n",                         M, 1,                        OK,  "QP"},
    {"5n",                         V, 1,                        OK,  "QP"},
    {"4u",                         M, 1,                        OK,  "QP"},
    {"3m",                         M, 3,                        OK,  "QP"},
    {"3m",                         V, 1,                        OK,  "QP"},
    {"8k",                         V, 8000,                     OK,  "QP"},
    {"50k",                        V, 50000,                    OK,  "QP"},
    {"7M",                         V, 7000000,                  OK,  "QP"},
    {"6G",                         V, 6000000000,               OK,  "QP"},
    {"40T",                        V, 40000000000000,           OK,  "QP"},
    {"2P",                         V, 2000000000000000,         OK,  "QP"},
    {"1E",                         V, 1000000000000000000,      OK,  "QP"},
    {"12E",                        V, 0,                        OVF, "QP+OURS"},  // 1.2e19 > 2^63-1
    {"1E-3",                       M, 1,                        OK,  "QP"},
    {"1e3",                        V, 1000,                     OK,  "QP"},
    {"1E18",                       V, 1000000000000000000,      OK,  "QP"},
    {"100.035k",                   V, 100035,                   OK,  "QP"},
    {"0.001",                      M, 1,                        OK,  "QP"},
    {"0.0005k",                    M, 500,                      OK,  "QP"},
    {"0.5",                        M, 500,                      OK,  "QP"},
    {"0.5e-2",                     M, 5,                        OK,  "QP"},
    {"10.035M",                    V, 10035000,                 OK,  "QP"},
    {"1.2e3",                      V, 1200,                     OK,  "QP"},
    {"1.3E+6",                     V, 1300000,                  OK,  "QP"},
    {"6.987654321G",               V, 6987654321,               OK,  "QP"},
    {"2.5P",                       V, 2500000000000000,         OK,  "QP"},
    {"1.01E",                      V, 1010000000000000000,      OK,  "QP"},
    {"3.001n",                     M, 1,                        OK,  "QP"},  // 4n
    {"1.1E-9",                     M, 1,                        OK,  "QP"},  // 2n
    {"0.00000012345",              M, 1,                        OK,  "QP"},  // 124n
    {"100.035Ki",                  V, 102436,                   OK,  "QP"},  // 102435.84
    {"100.035Ki",                  M, 102435840,                OK,  "QP"},
    {"0.5Mi",                      V, 524288,                   OK,  "QP"},
    {"0.05Gi",                     V, 53687092,                 OK,  "QP"},  // 53687091.2
    {"0.025Ti",                    V, 27487790695,              OK,  "QP"},  // 27487790694.4
    {"0.000000000001Ki",           M, 1,                        OK,  "QP"},  // 2n
    {".001",                       M, 1,                        OK,  "QP"},
    {".0001k",                     M, 100,                      OK,  "QP"},
    {"1.",                         V, 1,                        OK,  "QP"},
    {"1.G",                        V, 1000000000,               OK,  "QP"},
    {"9Ei",                        V, 0,                        OVF, "QP+OURS"},  // capped upstream
    {"9223372036854775807Ki",      V, 0,                        OVF, "QP+OURS"},  // capped upstream
    {"+1Ki",                       V, 1024,                     OK,  "QPS"},
    {"-1Ki",                       V, -1024,                    OK,  "QP"},  // "negative version" loop
    {"9.01",                       V, 10,                       OK,  "QRU"},
    {"-9.01",                      V, -10,                      OK,  "QRU"},
    {"-9.01",                      M, -9010,                    OK,  "QRU"},
    {"-100m",                      M, -100,                     OK,  "RULE"},
    {"1.5",                        M, 1500,                     OK,  "K8S"},
    {"0.1m",                       M, 1,                        OK,  "K8S"},
    {"100m",                       V, 1,                        OK,  "RULE"},
    {"1.5Gi",                      V, 1610612736,               OK,  "RULE"},
    {"7Ei",                        V, 8070450532247928832,      OK,  "RULE"},
    {"8Ei",                        V, 0,                        OVF, "OURS"},  // exactly 2^63
    {"9223372036854775807",        V, kMax,                     OK,  "RULE"},
    {"9223372036854775808",        V, 0,                        OVF, "OURS"},
    {"-9223372036854775807",       V, -kMax,                    OK,  "RULE"},
    {"9223372036854775807",        M, 0,                        OVF, "OURS"},
    {"9223372036854775807m",       M, kMax,                     OK,  "RULE"},
    {"9223372036854775807m",       V, 9223372036854776,         OK,  "RULE"},
    {"1e19",                       V, 0,                        OVF, "OURS"},
    {"1e-9",                       M, 1,                        OK,  "RULE"},
    {"12E-3",                      M, 12,                       OK,  "RULE"},
    {"1e00003",                    V, 1000,                     OK,  "RULE"},  // ParseInt allows zeros
    {"1e999999999",                V, 0,                        OVF, "OURS"},
    {"1e-999999999",               M, 1,                        OK,  "RULE"},
    {"1e9223372036854775807",      V, 0,                        OVF, "OURS"},
    {"0e999999999",                V, 0,                        OK,  "RULE"},
    {"00000000000000000000000001k", V, 1000,                    OK,  "RULE"},
    {"1.00000000000000000000001",  V, 2,                        OK,  "RULE"},
    {"1.00000000000000000000001",  M, 1001,                     OK,  "RULE"},
    {"123456789012345678901234567890e-20", V, 1234567891,       OK,  "RULE"},
    {"123456789012345678901234567890e-20", M, 1234567890124,    OK,  "RULE"},
    {"0.0000000000000000000012345678901234567890123Ei", V, 1,   OK,  "RULE"},
    {"0.0000000000000000000012345678901234567890123Ei", M, 2,   OK,  "RULE"},
    {"12345678901234567890.5Ki",   V, 0,                        OVF, "OURS"},
};
// clang-format on

// Inputs ParseQuantity rejects (QPI), plus digit-less ones we reject (OURS)
// and suffixes outside suffix.go's table (RULE).
constexpr std::string_view kInvalid[] = {
    "1.1.M",   "1+1.0M", "0.1mi", "0.1am",
    "aoeu",    ".5i",    "1i",    "-3.01i",
    "-3.01e-",        // QPI
    " 1",      "1 ",  // QPI
    "",        "1.2.3",  "12x",   "1 Gi",
    "1e",      "--1",    "1K",    "1ki",
    "1Kib",    "1e+",    "1e3.5",                           // RULE
    "1ee3",    "1Ee3",   "1e3i",  "1e9223372036854775808",  // RULE
    "Gi",      ".",      "+",     "-",
    "e5",      "m",  // OURS
};

}  // namespace

TEST_CASE("quantity: table of values") {
  static_assert(std::size(kCases) >= 40);
  for (const Case& c : kCases) {
    CAPTURE(c.input);
    CAPTURE(c.src);
    CAPTURE(static_cast<int>(c.u));
    const auto r = c.u == unit::value ? parse_quantity_value(c.input) : parse_quantity_milli(c.input);
    if (c.err == errc::ok) {
      REQUIRE(r.has_value());
      CHECK(*r == c.expected);
    } else {
      REQUIRE(r.has_error());
      CHECK(r.error() == c.err);
    }
  }
}

TEST_CASE("quantity: invalid inputs") {
  for (std::string_view s : kInvalid) {
    CAPTURE(std::string(s));
    const auto v = parse_quantity_value(s);
    const auto m = parse_quantity_milli(s);
    REQUIRE(v.has_error());
    REQUIRE(m.has_error());
    CHECK(v.error() == errc::quantity_invalid);
    CHECK(m.error() == errc::quantity_invalid);
  }
  // An embedded NUL is data, not a terminator.
  CHECK(parse_quantity_value(std::string_view("1\0", 2)).error() == errc::quantity_invalid);
}

TEST_CASE("quantity: very long inputs stay exact and bounded") {
  // 100000 zeros then a digit: a tiny fraction that still rounds up to 1.
  std::string tiny = "0." + std::string(100000, '0') + "1";
  CHECK(*parse_quantity_milli(tiny) == 1);
  CHECK(*parse_quantity_value(tiny + "Ei") == 1);
  // A number with 100000 digits: overflow, not a wrapped value.
  std::string huge(100000, '9');
  CHECK(parse_quantity_value(huge).error() == errc::quantity_overflow);
  CHECK(parse_quantity_value(huge + "e-99980").error() == errc::quantity_overflow);
  CHECK(*parse_quantity_value(huge + "e-99990") == 10000000000);
}

TEST_CASE("quantity: random garbage never crashes and keeps value and milli consistent") {
  // Mostly characters of the grammar, so that many strings are valid and
  // the arithmetic paths are exercised, plus a few arbitrary bytes.
  static constexpr std::string_view alphabet = "0123456789012345678.+-eEKMGTPiunmk \x01\xff";
  std::mt19937_64 rng(20260101);
  int valid = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string s;
    const auto len = rng() % 24;
    for (std::uint64_t j = 0; j < len; ++j) s.push_back(alphabet[rng() % alphabet.size()]);
    const auto v = parse_quantity_value(s);
    const auto m = parse_quantity_milli(s);
    CAPTURE(s);
    if (v.has_error()) {
      const bool known = v.error() == errc::quantity_invalid || v.error() == errc::quantity_overflow;
      REQUIRE(known);
    }
    if (m.has_error()) {
      const bool known = m.error() == errc::quantity_invalid || m.error() == errc::quantity_overflow;
      REQUIRE(known);
    }
    // Both units agree on what is syntactically valid.
    REQUIRE((v.has_error() && v.error() == errc::quantity_invalid) ==
            (m.has_error() && m.error() == errc::quantity_invalid));
    if (v && m) {
      ++valid;
      // ceil(1000x) lies in (1000·(ceil(x) − 1), 1000·ceil(x)] for x > 0,
      // mirrored for x < 0.
      const std::int64_t a = *v, b = *m;
      if (a > 0) {
        REQUIRE(b > (a - 1) * 1000);
        REQUIRE(b <= a * 1000);
      } else if (a < 0) {
        REQUIRE(b < (a + 1) * 1000);
        REQUIRE(b >= a * 1000);
      } else {
        REQUIRE(b == 0);
      }
    }
  }
  CHECK(valid > 1000);  // the test would be hollow if nothing parsed
}

// Issue 13 item 2: "memory: 100E" and "cpu: 1e16" are valid to the API
// server; the scheduler must read them (as "more than any node has"), not
// fail the watch event that carries them.
TEST_CASE("quantity: the saturating forms clamp to kQuantityMax and never overflow") {
  struct Sat {
    std::string_view input;
    unit u;
    std::int64_t expected;
  };
  const Sat cases[] = {
      {"100E", V, kQuantityMax},                  // 1e20: beyond int64
      {"1e20", V, kQuantityMax},                  //
      {"1e16", M, kQuantityMax},                  // 1e19 millicores: beyond int64
      {"1e16", V, kQuantityMax},                  // within int64, beyond the bound
      {"9Ei", V, kQuantityMax},                   //
      {"1e999999999", V, kQuantityMax},           //
      {"-100E", V, -kQuantityMax},                // the sign is kept
      {"-1e16", M, -kQuantityMax},                //
      {"1Pi", V, kQuantityMax},                   // exactly 2^50: not clamped, equal
      {"1Pi", M, kQuantityMax},                   // 2^50 × 1000 millis: clamped
      {"1125899906842623", V, kQuantityMax - 1},  // just below: exact
      {"32Gi", V, std::int64_t{32} << 30},        // ordinary values are untouched
      {"4", M, 4000},                             //
      {"0.1m", M, 1},                             //
      {"0", V, 0},                                //
  };
  for (const Sat& c : cases) {
    CAPTURE(c.input);
    CAPTURE(static_cast<int>(c.u));
    const auto r = c.u == V ? parse_quantity_value_saturating(c.input) : parse_quantity_milli_saturating(c.input);
    REQUIRE(r.has_value());
    CHECK(*r == c.expected);
  }
  // A sum of 8191 saturated values still fits in int64.
  CHECK(kQuantityMax <= std::numeric_limits<std::int64_t>::max() / 8191);
  // Invalid stays invalid.
  for (std::string_view s : kInvalid) {
    CAPTURE(std::string(s));
    CHECK(parse_quantity_value_saturating(s).error() == errc::quantity_invalid);
    CHECK(parse_quantity_milli_saturating(s).error() == errc::quantity_invalid);
  }
  // Whatever parses, the saturating form is the exact value clamped.
  std::mt19937_64 rng(7);
  static constexpr std::string_view alphabet = "0123456789.eEKMGTPi-";
  for (int i = 0; i < 50000; ++i) {
    std::string s;
    for (std::uint64_t j = 0, len = rng() % 20; j < len; ++j) s.push_back(alphabet[rng() % alphabet.size()]);
    CAPTURE(s);
    const auto exact = parse_quantity_value(s);
    const auto sat = parse_quantity_value_saturating(s);
    if (exact) {
      REQUIRE(sat.has_value());
      REQUIRE(*sat == std::clamp(*exact, -kQuantityMax, kQuantityMax));
    } else if (exact.error() == errc::quantity_invalid) {
      REQUIRE(sat.has_error());
      REQUIRE(sat.error() == errc::quantity_invalid);
    } else {  // overflow: the bound, signed
      REQUIRE(sat.has_value());
      REQUIRE((*sat == kQuantityMax || *sat == -kQuantityMax));
    }
  }
}
