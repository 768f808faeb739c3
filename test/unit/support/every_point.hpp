// "Fail every await point in turn", as boost.mysql's tests do: a scenario is
// run once with nothing failing, to count the await points it meets in the
// transport (N); then, for each kind of failure and each i in 1..N, it is
// run again from scratch with point i failing that way. The scenario builds
// its own world each time, runs it to the end, and checks its invariants;
// it returns the number of await points it met.
#pragma once

#include <doctest/doctest.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scripted_transport.hpp"

namespace toysched::testing {

struct Injection {
  std::size_t point;
  FaultSpec fault;
};

// The usual failures of a request: lost before or after it left, replayed,
// timed out, and refused with 409, 410, 429 and 500.
inline std::vector<FaultSpec> every_fault() {
  return {{Fault::reset_before_send}, {Fault::reset_after_send}, {Fault::replay},      {Fault::timeout},
          {Fault::status, 409},       {Fault::status, 410},      {Fault::status, 429}, {Fault::status, 500}};
}

// Returns the clean run's point count (so callers can say it was not zero).
inline std::size_t every_await_point(const std::vector<FaultSpec>& faults,
                                     const std::function<std::size_t(const std::optional<Injection>&)>& scenario) {
  const std::size_t n = scenario(std::nullopt);
  for (const FaultSpec& f : faults) {
    for (std::size_t i = 1; i <= n; ++i) {
      INFO("failing await point " << i << " of " << n << ": " << describe(f));
      scenario(Injection{i, f});
    }
  }
  return n;
}

// The same for an event of the test's own (a gate closing, another replica
// taking the lease, SIGTERM) at each point in turn: `scenario(0)` is the
// clean run; `scenario(i)` makes the event happen at point i.
inline void at_every_await_point(const std::string& event, const std::function<std::size_t(std::size_t)>& scenario) {
  const std::size_t n = scenario(0);
  for (std::size_t i = 1; i <= n; ++i) {
    INFO(event << " at await point " << i << " of " << n);
    scenario(i);
  }
}

}  // namespace toysched::testing
