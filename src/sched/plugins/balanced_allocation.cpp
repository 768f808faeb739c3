// The arithmetic follows upstream step by step (float64 where it uses
// floats) so scores, and so ties, come out identical.
#include "toysched/sched/plugins/balanced_allocation.hpp"
#include "toysched/sched/plugin_args.hpp"

#include <bit>
#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace toysched::sched {
namespace {

// balancedResourceScore over cpu and memory: (1 − std) × 100 truncated,
// std = |f_cpu − f_mem| / 2, each fraction capped at 1. With fewer than two
// fractions (a resource the node does not advertise is left out) std is 0.
inline std::int64_t balance(std::int64_t cpu, std::int64_t mem, const kube::Resources& alloc) noexcept {
  if (alloc.milli_cpu == 0 || alloc.memory == 0) return kMaxNodeScore;
  const auto fraction = [](std::int64_t requested, std::int64_t allocatable) {
    const double f = static_cast<double>(requested) / static_cast<double>(allocatable);
    return f > 1 ? 1.0 : f;
  };
  const double std_dev = std::abs((fraction(cpu, alloc.milli_cpu) - fraction(mem, alloc.memory)) / 2);
  return static_cast<std::int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
}

// balancedResourceScorer: how much the pod improves the node's balance.
// Both balances lie in [50, 100], so their difference in [−50, 50]; the
// score maps it to [50, 100]: 75 when the pod changes nothing.
// `cpu`/`mem` are the pod's real request.
inline std::int64_t balanced_allocation(std::int64_t cpu, std::int64_t mem, const NodeInfo& ni) noexcept {
  const auto& alloc = ni.node.allocatable;
  const auto& used = ni.requested;
  const std::int64_t with_pod = balance(used.milli_cpu + cpu, used.memory + mem, alloc);
  const std::int64_t without_pod = balance(used.milli_cpu, used.memory, alloc);
  return kMaxNodeScore / 2 + (kMaxNodeScore / 2 + with_pod - without_pod) / 2;
}

// Out of line: the loop below calls it rarely, and keeping its loads apart
// keeps those of the fast path in vector registers.
[[gnu::noinline]] void score_each(std::int64_t cpu, std::int64_t mem, std::span<const NodeInfo* const> feasible,
                                  std::int64_t* out) noexcept {
  for (std::size_t i = 0; i < feasible.size(); ++i) out[i] = balanced_allocation(cpu, mem, *feasible[i]);
}

#if defined(__SSE2__)
constexpr std::int64_t kHighBits = ~((std::int64_t{1} << 52) - 1);

// Two nodes at once, node a in lane 0 and node b in lane 1: the same IEEE
// operations as balance() on each lane, in the same order, so the same
// bits. Worth it because a decision scores every feasible node, each with
// two balances (the pre-1.36 formula computed one).
class PairScorer {
 public:
  // false: the pod's request is outside what score() computes exactly.
  bool init(std::int64_t cpu, std::int64_t mem) noexcept {
    pod_cpu_ = _mm_set1_pd(static_cast<double>(cpu));
    pod_mem_ = _mm_set1_pd(static_cast<double>(mem));
    return ((cpu | mem) & kHighBits) == 0;
  }

  // Scores a and b into out[0], out[1]; false (and nothing written) when a
  // value is outside what this computes exactly.
  bool score(const NodeInfo& a, const NodeInfo& b, std::int64_t* out) const noexcept {
    const __m128i used_cpu = pair(a.requested.milli_cpu, b.requested.milli_cpu);
    const __m128i used_mem = pair(a.requested.memory, b.requested.memory);
    const __m128i minus_one = _mm_set1_epi64x(-1);
    const __m128i alloc_cpu_1 =
        _mm_add_epi64(pair(a.node.allocatable.milli_cpu, b.node.allocatable.milli_cpu), minus_one);
    const __m128i alloc_mem_1 = _mm_add_epi64(pair(a.node.allocatable.memory, b.node.allocatable.memory), minus_one);
    // Every request in [0, 2^52) and every allocatable in [1, 2^52): the
    // conversions and sums below are exact, no resource is left out, the
    // fractions lie in [0, 1] and the balances in [50, 100]. Anything else
    // takes balance() itself.
    const __m128i any = _mm_or_si128(_mm_or_si128(used_cpu, used_mem), _mm_or_si128(alloc_cpu_1, alloc_mem_1));
    const __m128i high = _mm_srli_epi64(any, 52);
    if (_mm_movemask_epi8(_mm_cmpeq_epi32(high, _mm_setzero_si128())) != 0xFFFF) return false;
    const __m128d alloc_cpu = to_double(alloc_cpu_1, 1);
    const __m128d alloc_mem = to_double(alloc_mem_1, 1);
    const __m128d used_cpu_d = to_double(used_cpu, 0);
    const __m128d used_mem_d = to_double(used_mem, 0);
    // Integers under 2^53: the sum is exact, as the int64 sum converted.
    const __m128i with = balance(fraction(_mm_add_pd(used_cpu_d, pod_cpu_), alloc_cpu),
                                 fraction(_mm_add_pd(used_mem_d, pod_mem_), alloc_mem));
    const __m128i without = balance(fraction(used_cpu_d, alloc_cpu), fraction(used_mem_d, alloc_mem));
    // 50 + (50 + with − without) / 2; 50 + with − without ≥ 0, so the
    // division is a shift: (150 + with − without) >> 1.
    const __m128i sum = _mm_add_epi32(_mm_sub_epi32(with, without), _mm_set1_epi32(3 * kMaxNodeScore / 2));
    const __m128i scores = _mm_srli_epi32(sum, 1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_unpacklo_epi32(scores, _mm_setzero_si128()));
    return true;
  }

 private:
  static __m128i pair(std::int64_t a, std::int64_t b) noexcept { return _mm_set_epi64x(b, a); }
  // x + plus for x in [0, 2^52): the double 2^52 + x has x as its mantissa,
  // and adding plus − 2^52 to it is exact for plus 0 or 1.
  __m128d to_double(__m128i x, int plus) const noexcept {
    const __m128i with_2_52 = _mm_or_si128(x, _mm_castpd_si128(two_52_));
    return _mm_sub_pd(_mm_castsi128_pd(with_2_52), plus == 0 ? two_52_ : two_52_minus_1_);
  }
  // requested / allocatable capped at 1 (never NaN here, so min(f, 1) is
  // f > 1 ? 1 : f).
  __m128d fraction(__m128d requested, __m128d allocatable) const noexcept {
    return _mm_min_pd(_mm_div_pd(requested, allocatable), one_);
  }
  // (1 − |f_cpu − f_mem| / 2) × 100 truncated, as 32-bit lanes 0 and 1.
  __m128i balance(__m128d cpu, __m128d mem) const noexcept {
    const __m128d half_diff = _mm_mul_pd(_mm_sub_pd(cpu, mem), half_);  // x / 2, exactly
    const __m128d std_dev = _mm_and_pd(half_diff, abs_);
    const __m128d balance = _mm_mul_pd(_mm_sub_pd(one_, std_dev), hundred_);
    return _mm_cvttpd_epi32(balance);
  }

  // Both lanes the same. Opaque to the compiler: GCC would otherwise rebuild
  // each constant from its scalar inside the loop, two instructions a time.
  static __m128d splat(double x) noexcept {
    __m128d v = _mm_set1_pd(x);
    asm("" : "+x"(v));
    return v;
  }

  __m128d pod_cpu_ = _mm_setzero_pd();
  __m128d pod_mem_ = _mm_setzero_pd();
  __m128d one_ = splat(1);
  __m128d half_ = splat(0.5);
  __m128d hundred_ = splat(kMaxNodeScore);
  __m128d two_52_ = splat(0x1p52);
  __m128d two_52_minus_1_ = splat(0x1p52 - 1);
  __m128d abs_ = splat(std::bit_cast<double>(INT64_MAX));  // all but the sign bit
};
#endif

}  // namespace

bool is_best_effort(const kube::Pod& pod) noexcept { return pod.requests.milli_cpu == 0 && pod.requests.memory == 0; }

std::int64_t score_balanced_allocation(const kube::Pod& pod, const NodeInfo& ni) noexcept {
  return is_best_effort(pod) ? 0 : balanced_allocation(pod.requests.milli_cpu, pod.requests.memory, ni);
}

bool BalancedAllocation::pre_score(const kube::Pod& pod, std::span<const NodeInfo* const> /*feasible*/,
                                   const Cluster& /*cluster*/) {
  return !is_best_effort(pod);
}

void BalancedAllocation::score(const kube::Pod& pod, std::span<const NodeInfo* const> feasible,
                               std::span<std::int64_t> out) {
  const std::int64_t cpu = pod.requests.milli_cpu;
  const std::int64_t mem = pod.requests.memory;
  std::size_t i = 0;
#if defined(__SSE2__)
  PairScorer pairs;
  if (pairs.init(cpu, mem)) {
    for (; i + 1 < feasible.size(); i += 2) {
      if (!pairs.score(*feasible[i], *feasible[i + 1], out.data() + i))
        score_each(cpu, mem, feasible.subspan(i, 2), out.data() + i);
    }
  }
#endif
  score_each(cpu, mem, feasible.subspan(i), out.data() + i);
}

std::unique_ptr<Plugin> make_balanced_allocation(const PluginArgs& /*args*/) {
  return std::make_unique<BalancedAllocation>();
}

}  // namespace toysched::sched
