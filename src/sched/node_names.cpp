#include "toysched/sched/node_names.hpp"

#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

namespace toysched::sched {
namespace {

// A deque never moves what it holds, so the map's keys and the views name()
// returns stay valid as names are added. One thread schedules; the lock is
// for whatever else reads a record (a test's thread, a future server
// thread), and costs nothing on the decision's path, which reads only the
// numbers.
struct Table {
  std::mutex mu;
  std::deque<std::string> names{std::string()};  // id 0: no name
  std::unordered_map<std::string_view, NodeNames::Id> ids;
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

NodeNames::Id NodeNames::intern(std::string_view name) {
  Table& t = table();
  const std::lock_guard lock(t.mu);
  if (auto it = t.ids.find(name); it != t.ids.end()) return it->second;
  const auto id = static_cast<Id>(t.names.size());
  const std::string& kept = t.names.emplace_back(name);
  t.ids.emplace(kept, id);
  return id;
}

std::string_view NodeNames::name(Id id) {
  Table& t = table();
  const std::lock_guard lock(t.mu);
  return id < t.names.size() ? std::string_view(t.names[id]) : std::string_view();
}

std::size_t NodeNames::size() {
  Table& t = table();
  const std::lock_guard lock(t.mu);
  return t.names.size() - 1;
}

}  // namespace toysched::sched
