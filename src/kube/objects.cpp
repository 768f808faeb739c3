// MicroTime and the Lease body: what objects.hpp declares beside the
// structs, the few things we write rather than read.
#include "toysched/kube/objects.hpp"

#include "toysched/json/writer.hpp"

#include <chrono>
#include <cstdio>

namespace toysched::kube {

std::string format_micro_time(TimePoint t) {
  using namespace std::chrono;
  const auto us = floor<microseconds>(t);
  const auto day = floor<days>(us);
  const year_month_day ymd{day};
  const hh_mm_ss hms{us - day};
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%06dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()), static_cast<int>(hms.subseconds().count()));
  return buf;
}

std::optional<TimePoint> parse_micro_time(std::string_view s) {
  using namespace std::chrono;
  auto num = [&](std::size_t pos, std::size_t n, int& out) {
    if (pos + n > s.size()) return false;
    out = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      out = out * 10 + (s[i] - '0');
    }
    return true;
  };
  int Y = 0, M = 0, D = 0, h = 0, m = 0, sec = 0;
  if (!num(0, 4, Y) || !num(5, 2, M) || !num(8, 2, D) || !num(11, 2, h) || !num(14, 2, m) || !num(17, 2, sec) ||
      s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  std::size_t pos = 19;
  std::int64_t micros = 0;
  if (pos < s.size() && s[pos] == '.') {
    const std::size_t start = ++pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      // Digits past the sixth are below our precision: truncated.
      if (pos - start < 6) micros = micros * 10 + (s[pos] - '0');
      ++pos;
    }
    if (pos == start) return std::nullopt;
    for (std::size_t n = pos - start; n < 6; ++n) micros *= 10;
  }
  int offset_min = 0;
  if (pos < s.size() && s[pos] == 'Z') {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh = 0, om = 0;
    if (!num(pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' || !num(pos + 4, 2, om) || oh > 23 ||
        om > 59) {
      return std::nullopt;
    }
    offset_min = (s[pos] == '-' ? -1 : 1) * (oh * 60 + om);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  const year_month_day ymd{year{Y}, month{static_cast<unsigned>(M)}, day{static_cast<unsigned>(D)}};
  if (!ymd.ok() || h > 23 || m > 59 || sec > 59) return std::nullopt;
  const auto tp = sys_days{ymd} + hours{h} + minutes{m - offset_min} + seconds{sec} + microseconds{micros};
  // TimePoint counts nanoseconds in 64 bits: 1677-09-21 to 2262-04-11. Go's
  // times run from year 0 to 9999, so a well-formed time can lie outside;
  // it is refused like a malformed one (the cast would overflow: UB).
  constexpr auto lo = ceil<microseconds>(TimePoint::min());
  constexpr auto hi = floor<microseconds>(TimePoint::max());
  if (tp < lo || tp > hi) return std::nullopt;
  return time_point_cast<TimePoint::duration>(tp);
}

std::string encode_lease(const Lease& l) {
  json::Writer w;
  w.object().field("apiVersion", "coordination.k8s.io/v1").field("kind", "Lease");
  w.key("metadata").object().field("name", l.name);
  if (!l.ns.empty()) w.field("namespace", l.ns);
  // uid and resourceVersion make a PUT conditional on the object we read.
  if (!l.uid.empty()) w.field("uid", l.uid);
  if (!l.resource_version.empty()) w.field("resourceVersion", l.resource_version);
  w.end().key("spec").object();
  // Always written, even empty: releasing the lease is holderIdentity "".
  w.field("holderIdentity", l.holder_identity);
  if (l.lease_duration_seconds) w.field("leaseDurationSeconds", *l.lease_duration_seconds);
  if (l.acquire_time) w.field("acquireTime", format_micro_time(*l.acquire_time));
  if (l.renew_time) w.field("renewTime", format_micro_time(*l.renew_time));
  if (l.lease_transitions) w.field("leaseTransitions", *l.lease_transitions);
  if (l.strategy) w.field("strategy", *l.strategy);
  if (l.preferred_holder) w.field("preferredHolder", *l.preferred_holder);
  return std::move(w.end().end()).str();
}

}  // namespace toysched::kube
