#include <doctest/doctest.h>

#include "toysched/kube/reflector.hpp"

#include <algorithm>
#include <string>
#include <vector>

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
  void on_undecodable(const Undecodable& u, const Node* last, bool deleted) override {
    log.push_back(std::string(deleted ? "undecodable-deleted " : "undecodable ") + u.name + "@" + u.resource_version +
                  (last ? " keeps " + last->resource_version : " never read"));
  }
};
Undecodable bad(std::string name, std::string rv) {
  Undecodable u;
  u.name = std::move(name);
  u.resource_version = std::move(rv);
  u.error = "invalid quantity";
  return u;
}
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

namespace {
Node node_uid(std::string name, std::string rv, std::string uid) {
  Node n = node(std::move(name), std::move(rv));
  n.uid = std::move(uid);
  return n;
}
// Logs which object (by UID) each delta was about.
struct UidRecorder : Handler<Node> {
  std::vector<std::string> log;
  void on_add(const Node& n) override { log.push_back("add " + n.uid); }
  void on_update(const Node& o, const Node& n) override { log.push_back("update " + o.uid + "->" + n.uid); }
  void on_delete(const Node& n) override { log.push_back("delete " + n.uid); }
};
}  // namespace

TEST_CASE("a relist: the same name under a new UID is a delete of the old and an add of the new") {
  Store<Node> s;
  UidRecorder r;
  s.replace({node_uid("a", "1", "a-1"), node_uid("b", "2", "b-1")}, r);
  r.log.clear();
  // While we were away: a was deleted and created again under its name.
  s.replace({node_uid("a", "5", "a-2"), node_uid("b", "2", "b-1")}, r);
  CHECK(r.log == std::vector<std::string>{"delete a-1", "add a-2"});
  REQUIRE(s.find("a") != nullptr);
  CHECK(s.find("a")->uid == "a-2");
}

TEST_CASE("a watch MODIFIED/ADDED under a new UID is a delete of the old and an add of the new") {
  Store<Node> s;
  UidRecorder r;
  s.add_or_update(node_uid("a", "1", "a-1"), r);
  s.add_or_update(node_uid("a", "2", "a-1"), r);
  s.add_or_update(node_uid("a", "3", "a-2"), r);  // the DELETED of a-1 was missed
  CHECK(r.log == std::vector<std::string>{"add a-1", "update a-1->a-1", "delete a-1", "add a-2"});
  CHECK(s.find("a")->uid == "a-2");
}

TEST_CASE("a DELETED for another UID than the one held forgets the one held") {
  Store<Node> s;
  UidRecorder r;
  s.add_or_update(node_uid("a", "1", "a-1"), r);
  s.remove(node_uid("a", "4", "a-2"), r);  // a-2 came and went unseen; a-1 is gone too
  CHECK(r.log == std::vector<std::string>{"add a-1", "delete a-1"});
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

TEST_CASE("backoff: a test's steps, doubling from its initial step to its cap, reset to the initial step") {
  Backoff b(42, std::chrono::milliseconds(2), std::chrono::milliseconds(5));
  std::vector<std::int64_t> base = {2, 4, 5, 5};
  for (std::int64_t want : base) {
    auto got = b.next().count();
    CHECK(got >= want);
    CHECK(got <= 2 * want);
  }
  b.reset();
  CHECK(b.next().count() <= 4);
}

// Issue 13 item 2: an object that cannot be decoded is skipped, never a
// failed list or watch, and never read as a deletion.
TEST_CASE("undecodable objects: skipped, told once per resourceVersion, last copy kept") {
  Store<Node> s;
  Recorder r;
  s.replace({node("a", "1"), node("b", "2")}, {bad("x", "3")}, r);
  CHECK(r.log == std::vector<std::string>{"add a", "add b", "undecodable x@3 never read"});
  CHECK(s.size() == 2);
  CHECK(s.is_undecodable("x"));
  r.log.clear();

  // The same list again: nothing new to tell.
  s.replace({node("a", "1"), node("b", "2")}, {bad("x", "3")}, r);
  CHECK(r.log.empty());

  // b turns undecodable: its last copy stays (a bound pod stays counted),
  // on the watch and across a relist, where it is not a deletion.
  s.skip(bad("b", "4"), r);
  s.skip(bad("b", "4"), r);
  CHECK(r.log == std::vector<std::string>{"undecodable b@4 keeps 2"});
  r.log.clear();
  s.replace({node("a", "1")}, {bad("x", "3"), bad("b", "4")}, r);
  CHECK(r.log.empty());
  REQUIRE(s.objects().count("b") == 1);
  CHECK(s.objects().at("b").resource_version == "2");

  // b reads again: an update from the copy it kept.
  s.add_or_update(node("b", "5"), r);
  CHECK(r.log == std::vector<std::string>{"update b 2->5"});
  CHECK_FALSE(s.is_undecodable("b"));
  r.log.clear();

  // Deletions by key: with a copy, an ordinary delete; without, told so.
  s.skip(bad("b", "6"), r);
  s.remove(bad("b", "7"), r);
  s.remove(bad("x", "8"), r);
  CHECK(r.log == std::vector<std::string>{"undecodable b@6 keeps 5", "delete b", "undecodable-deleted x@8 never read"});
  CHECK(s.size() == 1);
  CHECK_FALSE(s.is_undecodable("x"));
  r.log.clear();

  // A relist no longer listing an undecodable object forgets it.
  s.skip(bad("y", "9"), r);
  s.replace({node("a", "1")}, {}, r);
  CHECK(r.log == std::vector<std::string>{"undecodable y@9 never read"});
  CHECK_FALSE(s.is_undecodable("y"));
}
