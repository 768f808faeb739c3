#include <doctest/doctest.h>

#include "toysched/kube/reflector.hpp"

using namespace toysched::kube;

namespace {
Node node(std::string name, std::string rv) {
  Node n;
  n.name = std::move(name);
  n.uid = "uid-" + n.name;
  n.resource_version = std::move(rv);
  return n;
}
struct Recorder : Handler<Node> {
  std::vector<std::string> log;
  void on_add(const Node& n) override { log.push_back("add " + n.name); }
  void on_update(const Node& o, const Node& n) override {
    log.push_back("update " + n.name + " " + o.resource_version + "->" + n.resource_version);
  }
  void on_delete(const Node& n) override { log.push_back("delete " + n.name); }
};
}  // namespace

TEST_CASE("a relist delivers what changed while disconnected, deletes included") {
  Store<Node> s;
  Recorder r;
  s.replace({node("a", "1"), node("b", "2"), node("c", "3")}, r);
  CHECK(r.log == std::vector<std::string>{"add a", "add b", "add c"});
  r.log.clear();
  // While we were away: b changed, c was deleted, d was created.
  s.replace({node("a", "1"), node("b", "7"), node("d", "8")}, r);
  std::sort(r.log.begin(), r.log.end());
  CHECK(r.log == std::vector<std::string>{"add d", "delete c", "update b 2->7"});
  CHECK(s.size() == 3);
}

TEST_CASE("watch events: same-RV repeats are dropped, deletes of unknown objects ignored") {
  Store<Node> s;
  Recorder r;
  s.add_or_update(node("a", "1"), r);
  s.add_or_update(node("a", "1"), r);
  s.add_or_update(node("a", "2"), r);
  s.remove(node("zz", "3"), r);
  s.remove(node("a", "4"), r);
  CHECK(r.log == std::vector<std::string>{"add a", "update a 1->2", "delete a"});
  CHECK(s.size() == 0);
}

TEST_CASE("backoff: 0.8 s doubling to 30 s, jittered up to 100 %, reset") {
  Backoff b(42);
  std::vector<double> base = {0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30};
  for (double want : base) {
    double got = b.next().count() / 1000.0;
    CHECK(got >= want - 0.001);
    CHECK(got <= 2 * want + 0.001);
  }
  b.reset();
  CHECK(b.next().count() <= 1600);
}
