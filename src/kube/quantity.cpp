// Exact quantity parsing; see quantity.hpp for the grammar, the rounding rule
// and where we deliberately differ from apimachinery.
#include "toysched/kube/quantity.hpp"

#include <array>
#include <cstddef>
#include <limits>
#include <vector>

namespace toysched::kube {
namespace {

__extension__ typedef unsigned __int128 u128;

constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();

// Exponents this large already mean "overflow" (or "rounds to 1") for any
// input we could hold in memory; clamping keeps all exponent arithmetic
// within int64 without a single overflow check further down.
constexpr std::int64_t kExponentClamp = 1'000'000'000'000'000;

// A syntactically valid quantity, not yet scaled: ±digits × 10^dec_exp ×
// 2^bin_exp, where digits = int_digits followed by frac_digits and dec_exp
// already accounts for the fraction's length.
struct Scanned {
  bool negative = false;
  std::string_view int_digits;
  std::string_view frac_digits;
  std::int64_t dec_exp = 0;
  int bin_exp = 0;
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The (e|E)[+-]digits exponent, read the way strconv.ParseInt reads it (the
// call in suffix.go interpret): any int64 is accepted, anything else is not.
bool parse_exponent(std::string_view s, std::int64_t& out) {
  bool neg = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    neg = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  std::uint64_t v = 0;
  constexpr std::uint64_t limit = std::uint64_t{1} << 63;  // |INT64_MIN|
  for (char c : s) {
    if (!is_digit(c)) return false;
    if (v > (limit - static_cast<unsigned>(c - '0')) / 10) return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (!neg && v == limit) return false;
  const std::uint64_t clamp = static_cast<std::uint64_t>(kExponentClamp);
  const auto mag = static_cast<std::int64_t>(v > clamp ? clamp : v);
  out = neg ? -mag : mag;
  return true;
}

// The suffix table of suffix.go (newSuffixer / fastLookup.interpret).
bool interpret_suffix(std::string_view s, Scanned& q) {
  struct Entry {
    std::string_view name;
    int dec;
    int bin;
  };
  static constexpr std::array<Entry, 16> table{{
      {"", 0, 0},
      {"n", -9, 0},
      {"u", -6, 0},
      {"m", -3, 0},
      {"k", 3, 0},
      {"M", 6, 0},
      {"G", 9, 0},
      {"T", 12, 0},
      {"P", 15, 0},
      {"E", 18, 0},
      {"Ki", 0, 10},
      {"Mi", 0, 20},
      {"Gi", 0, 30},
      {"Ti", 0, 40},
      {"Pi", 0, 50},
      {"Ei", 0, 60},
  }};
  for (const auto& e : table) {
    if (s == e.name) {
      q.dec_exp += e.dec;
      q.bin_exp = e.bin;
      return true;
    }
  }
  if (s.size() > 1 && (s.front() == 'e' || s.front() == 'E')) {
    std::int64_t exp = 0;
    if (!parse_exponent(s.substr(1), exp)) return false;
    q.dec_exp += exp;
    return true;
  }
  return false;
}

result<Scanned> scan(std::string_view s) {
  Scanned q;
  std::size_t pos = 0;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    q.negative = s[pos] == '-';
    ++pos;
  }
  std::size_t start = pos;
  while (pos < s.size() && is_digit(s[pos])) ++pos;
  q.int_digits = s.substr(start, pos - start);
  if (pos < s.size() && s[pos] == '.') {
    start = ++pos;
    while (pos < s.size() && is_digit(s[pos])) ++pos;
    q.frac_digits = s.substr(start, pos - start);
  }
  if (q.int_digits.empty() && q.frac_digits.empty()) return errc::quantity_invalid;
  if (!interpret_suffix(s.substr(pos), q)) return errc::quantity_invalid;
  // The fraction's length can be anything the caller had in memory; the
  // clamp keeps dec_exp meaningful (see kExponentClamp).
  const auto frac_len = static_cast<std::int64_t>(
      q.frac_digits.size() > static_cast<std::size_t>(kExponentClamp) ? kExponentClamp : q.frac_digits.size());
  q.dec_exp -= frac_len;
  return q;
}

// 10^k for k in [0, 38]: the largest power of ten below 2^128.
u128 pow10_u128(int k) {
  u128 v = 1;
  for (int i = 0; i < k; ++i) v *= 10;
  return v;
}

// ceil(P × 10^t) for 0 < P < 2^124, or overflow beyond int64.
result<std::int64_t> scale_small(u128 p, std::int64_t t) {
  if (t >= 0) {
    // p ≥ 1, so this loop ends after at most 19 rounds, whatever t is.
    for (; t > 0; --t) {
      if (p > static_cast<u128>(kMaxInt64)) return errc::quantity_overflow;
      p *= 10;
    }
  } else {
    // p < 2^124 < 10^38: dividing by 10^39 or more leaves only a fraction.
    if (t < -38) return std::int64_t{1};
    const u128 d = pow10_u128(static_cast<int>(-t));
    const bool frac = p % d != 0;
    p = p / d + (frac ? 1 : 0);
  }
  if (p > static_cast<u128>(kMaxInt64)) return errc::quantity_overflow;
  return static_cast<std::int64_t>(p);
}

// The same for more than 19 significant digits (rare: hand-written inputs
// like "1.00000000000000000000001"): multiply a decimal digit vector by
// 2^bin_exp, then split it at the decimal point.
result<std::int64_t> scale_big(std::vector<std::uint8_t> digits, int bin_exp, std::int64_t t) {
  while (bin_exp > 0) {
    const int step = bin_exp > 10 ? 10 : bin_exp;
    bin_exp -= step;
    unsigned carry = 0;
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
      const unsigned v = (static_cast<unsigned>(*it) << step) + carry;
      *it = static_cast<std::uint8_t>(v % 10);
      carry = v / 10;
    }
    while (carry > 0) {
      digits.insert(digits.begin(), static_cast<std::uint8_t>(carry % 10));
      carry /= 10;
    }
  }
  // At least 20 significant digits: with t ≥ 0 the value is ≥ 10^19.
  if (t >= 0) return errc::quantity_overflow;
  const auto len = static_cast<std::int64_t>(digits.size());
  const std::int64_t int_len = len + t;  // digits left of the decimal point
  if (int_len > 19) return errc::quantity_overflow;
  u128 v = 0;
  std::int64_t i = 0;
  for (; i < int_len; ++i) v = v * 10 + digits[static_cast<std::size_t>(i)];
  bool frac = false;
  for (; i < len && !frac; ++i) frac = digits[static_cast<std::size_t>(i)] != 0;
  if (frac) ++v;
  if (v > static_cast<u128>(kMaxInt64)) return errc::quantity_overflow;
  return static_cast<std::int64_t>(v);
}

// ceil(|q| × 10^scale), signed like q.
result<std::int64_t> to_scaled(const Scanned& q, int scale) {
  const std::string_view a = q.int_digits;
  const std::string_view b = q.frac_digits;
  const std::size_t total = a.size() + b.size();
  auto digit_at = [&](std::size_t i) { return i < a.size() ? a[i] : b[i - a.size()]; };

  std::size_t first = 0;
  while (first < total && digit_at(first) == '0') ++first;
  if (first == total) return std::int64_t{0};
  std::size_t last = total - 1;
  while (digit_at(last) == '0') --last;
  const std::size_t trailing = total - 1 - last;
  const std::size_t n = last - first + 1;

  std::int64_t t = q.dec_exp + scale;
  t += static_cast<std::int64_t>(trailing > static_cast<std::size_t>(kExponentClamp) ? kExponentClamp : trailing);

  result<std::int64_t> mag = std::int64_t{0};
  if (n <= 19) {
    std::uint64_t m = 0;
    for (std::size_t i = first; i <= last; ++i) {
      m = m * 10 + static_cast<unsigned>(digit_at(i) - '0');
    }
    mag = scale_small(static_cast<u128>(m) << q.bin_exp, t);
  } else {
    std::vector<std::uint8_t> digits;
    digits.reserve(n);
    for (std::size_t i = first; i <= last; ++i) {
      digits.push_back(static_cast<std::uint8_t>(digit_at(i) - '0'));
    }
    mag = scale_big(std::move(digits), q.bin_exp, t);
  }
  if (!mag) return mag;
  return q.negative ? -*mag : *mag;
}

result<std::int64_t> parse_scaled(std::string_view s, int scale) {
  auto q = scan(s);
  if (!q) return q.error();
  return to_scaled(*q, scale);
}

result<std::int64_t> saturate(std::string_view s, int scale) {
  auto q = scan(s);
  if (!q) return q.error();
  const auto v = to_scaled(*q, scale);
  // Overflow, the only other failure, is beyond the bound as well.
  if (v && *v >= -kQuantityMax && *v <= kQuantityMax) return *v;
  return q->negative ? -kQuantityMax : kQuantityMax;
}

}  // namespace

result<std::int64_t> parse_quantity_value(std::string_view s) { return parse_scaled(s, 0); }

result<std::int64_t> parse_quantity_milli(std::string_view s) { return parse_scaled(s, 3); }

result<std::int64_t> parse_quantity_value_saturating(std::string_view s) { return saturate(s, 0); }

result<std::int64_t> parse_quantity_milli_saturating(std::string_view s) { return saturate(s, 3); }

}  // namespace toysched::kube
