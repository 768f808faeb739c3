// Node names as small numbers, for what /debug/explain records of a
// decision (explain.hpp). A recorded decision lists its feasible nodes,
// hundreds of them; copying each one's name read a cache line of the node
// that nothing else in the decision reads. At 15 000 nodes, with the loop
// decoding watch events and handling binds between two decisions (so the
// nodes are no longer in cache), that read was 13 of the 60 µs a live
// decision took. A NodeInfo carries its name's number in a line the
// filters read anyway, and a record keeps numbers.
//
// Names are never forgotten: a record may outlive its node. A name costs
// about 100 bytes here, so a cluster that brings up 10 000 new node names a
// day grows this by about 1 MB a day.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace toysched::sched {

class NodeNames {
 public:
  using Id = std::uint32_t;  // 0 is no name: a NodeInfo nobody has named
  // The name's number, the same for equal names for the life of the process.
  static Id intern(std::string_view name);
  // What intern returned `id` for ("" for 0).
  static std::string_view name(Id id);
  // How many names are known (for tests and the size note above).
  static std::size_t size();
};

}  // namespace toysched::sched
