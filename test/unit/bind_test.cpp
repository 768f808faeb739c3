// Whose bind a 409 was: a bind the transport replayed on a new connection
// (the first died before any answer) is answered 409 when the server had
// applied the first send; that is our bind, not a race lost.
#include <doctest/doctest.h>

#include "toysched/sched/scheduler.hpp"

using namespace toysched;

namespace {
kube::ApiError conflict(bool replayed) {
  kube::ApiError e;
  e.code = kube::make_error_code(kube::errc::http_status);
  e.http_status = 409;
  e.replayed = replayed;
  e.message = R"(bind ns/p: HTTP 409: Operation cannot be fulfilled on pods/binding "p": pod p is already assigned)";
  return e;
}
kube::Pod on_node(std::string uid, std::string node) {
  kube::Pod p;
  p.ns = "ns";
  p.name = "p";
  p.uid = std::move(uid);
  p.node_name = std::move(node);
  return p;
}
}  // namespace

TEST_CASE("a replayed bind's 409 with the pod now on our node is our bind") {
  auto now = on_node("u1", "n1");
  CHECK(sched::bind_conflict_was_ours(conflict(true), &now, "u1", "n1"));
}

TEST_CASE("a 409 is a lost race otherwise") {
  auto mine = on_node("u1", "n1");
  auto elsewhere = on_node("u1", "n2");
  auto recreated = on_node("u2", "n1");
  auto pending = on_node("u1", "");
  // Sent once: someone else bound it, even if to the node we chose.
  CHECK_FALSE(sched::bind_conflict_was_ours(conflict(false), &mine, "u1", "n1"));
  CHECK_FALSE(sched::bind_conflict_was_ours(conflict(true), &elsewhere, "u1", "n1"));
  CHECK_FALSE(sched::bind_conflict_was_ours(conflict(true), &recreated, "u1", "n1"));
  CHECK_FALSE(sched::bind_conflict_was_ours(conflict(true), &pending, "u1", "n1"));
  CHECK_FALSE(sched::bind_conflict_was_ours(conflict(true), nullptr, "u1", "n1"));
  auto not_found = conflict(true);
  not_found.http_status = 404;
  CHECK_FALSE(sched::bind_conflict_was_ours(not_found, &mine, "u1", "n1"));
}
