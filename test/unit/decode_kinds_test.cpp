// Decoding the kinds read only for the pod plugins: Namespaces, Services,
// ReplicationControllers, ReplicaSets, StatefulSets, as lists and as watch
// events. JSON in the shape the API server writes (abridged: the decoder
// skips what it does not read, and tests elsewhere cover skipping).
#include "toysched/kube/decode.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace toysched::kube;

namespace {

std::string meta(const std::string& name, const std::string& ns, const std::string& rv) {
  std::string s = R"("metadata":{"name":")" + name + R"(",)";
  if (!ns.empty()) s += R"("namespace":")" + ns + R"(",)";
  return s + R"("uid":"uid-)" + name + R"(","resourceVersion":")" + rv +
         R"(","creationTimestamp":"2026-01-01T10:00:00Z","labels":{"team":"a"},)"
         R"("managedFields":[{"manager":"kubectl","operation":"Update"}]})";
}

std::string list(const char* kind, const std::string& items) {
  return std::string(R"({"kind":")") + kind +
         R"(","apiVersion":"v1","metadata":{"resourceVersion":"500",)"
         R"("continue":"tok"},"items":[)" +
         items + "]}";
}

std::string event(const char* type, const std::string& object) {
  return std::string(R"({"type":")") + type + R"(","object":)" + object + "}";
}

const std::string kNamespace = R"({"kind":"Namespace","apiVersion":"v1",)" + meta("shop", "", "11") +
                               R"(,"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}})";
const std::string kService = R"({"kind":"Service","apiVersion":"v1",)" + meta("web", "shop", "12") +
                             R"(,"spec":{"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":8080}],)"
                             R"("selector":{"app":"web","tier":"frontend"},"clusterIP":"10.96.0.10",)"
                             R"("type":"ClusterIP","sessionAffinity":"None"},"status":{"loadBalancer":{}}})";
const std::string kHeadless = R"({"kind":"Service","apiVersion":"v1",)" + meta("external", "shop", "13") +
                              R"(,"spec":{"ports":[{"port":443}],"clusterIP":"None","type":"ClusterIP"}})";
const std::string kRc = R"({"kind":"ReplicationController","apiVersion":"v1",)" + meta("legacy", "shop", "14") +
                        R"(,"spec":{"replicas":2,"selector":{"app":"legacy"},"template":{"metadata":)"
                        R"({"labels":{"app":"legacy"}},"spec":{"containers":[{"name":"c","image":"i"}]}}},)"
                        R"("status":{"replicas":2}})";
const std::string kRs =
    R"({"kind":"ReplicaSet","apiVersion":"apps/v1",)" + meta("web-7d4b9c", "shop", "15") +
    R"(,"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web","pod-template-hash":"7d4b9c"},)"
    R"("matchExpressions":[{"key":"track","operator":"NotIn","values":["canary"]}]},"template":{"metadata":)"
    R"({"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"i"}]}}},"status":{"replicas":3}})";
const std::string kSts = R"({"kind":"StatefulSet","apiVersion":"apps/v1",)" + meta("db", "shop", "16") +
                         R"(,"spec":{"replicas":1,"selector":{"matchLabels":{"app":"db"}},"serviceName":"db",)"
                         R"("template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[]}}}})";

}  // namespace

TEST_CASE("decode: Namespaces, list and watch event") {
  Decoder d;
  auto l = d.namespace_list(list("NamespaceList", kNamespace));
  REQUIRE(l.has_value());
  CHECK(l->resource_version == "500");
  CHECK(l->continue_token == "tok");
  REQUIRE(l->items.size() == 1);
  const Namespace& n = l->items[0];
  CHECK(n.name == "shop");
  CHECK(n.uid == "uid-shop");
  CHECK(n.resource_version == "11");
  CHECK(n.labels == StringPairs{{"team", "a"}});

  auto ev = d.namespace_event(event("MODIFIED", kNamespace));
  REQUIRE(ev.has_value());
  CHECK(ev->type == EventType::modified);
  CHECK(ev->object.name == "shop");
  CHECK(ev->object.labels == StringPairs{{"team", "a"}});
}

TEST_CASE("decode: Services and ReplicationControllers keep their map selectors") {
  Decoder d;
  auto l = d.service_list(list("ServiceList", kService + "," + kHeadless));
  REQUIRE(l.has_value());
  REQUIRE(l->items.size() == 2);
  CHECK(l->items[0].ns == "shop");
  CHECK(l->items[0].name == "web");
  CHECK(l->items[0].uid == "uid-web");
  CHECK(l->items[0].resource_version == "12");
  CHECK(l->items[0].selector == StringPairs{{"app", "web"}, {"tier", "frontend"}});
  CHECK(l->items[1].selector.empty());  // a Service without a selector

  auto ev = d.service_event(event("ADDED", kService));
  REQUIRE(ev.has_value());
  CHECK(ev->type == EventType::added);
  CHECK(ev->object.selector == StringPairs{{"app", "web"}, {"tier", "frontend"}});

  auto rl = d.replication_controller_list(list("ReplicationControllerList", kRc));
  REQUIRE(rl.has_value());
  REQUIRE(rl->items.size() == 1);
  CHECK(rl->items[0].ns == "shop");
  CHECK(rl->items[0].name == "legacy");
  CHECK(rl->items[0].selector == StringPairs{{"app", "legacy"}});
  auto rev = d.replication_controller_event(event("DELETED", kRc));
  REQUIRE(rev.has_value());
  CHECK(rev->type == EventType::deleted);
  CHECK(rev->object.resource_version == "14");
  CHECK(rev->object.selector == StringPairs{{"app", "legacy"}});
}

TEST_CASE("decode: ReplicaSets and StatefulSets keep their label selectors") {
  Decoder d;
  auto l = d.replica_set_list(list("ReplicaSetList", kRs));
  REQUIRE(l.has_value());
  REQUIRE(l->items.size() == 1);
  const ReplicaSet& rs = l->items[0];
  CHECK(rs.ns == "shop");
  CHECK(rs.name == "web-7d4b9c");
  REQUIRE(rs.selector.has_value());
  CHECK(rs.selector->match_labels == StringPairs{{"app", "web"}, {"pod-template-hash", "7d4b9c"}});
  CHECK(rs.selector->match_expressions ==
        std::vector<NodeSelectorRequirement>{{"track", SelectorOp::not_in, {"canary"}}});
  auto ev = d.replica_set_event(event("MODIFIED", kRs));
  REQUIRE(ev.has_value());
  CHECK(ev->object.selector == rs.selector);

  auto sl = d.stateful_set_list(list("StatefulSetList", kSts));
  REQUIRE(sl.has_value());
  REQUIRE(sl->items.size() == 1);
  CHECK(sl->items[0].name == "db");
  CHECK(sl->items[0].selector == LabelSelector{{{"app", "db"}}, {}});
  auto sev = d.stateful_set_event(event("ADDED", kSts));
  REQUIRE(sev.has_value());
  CHECK(sev->object.selector == LabelSelector{{{"app", "db"}}, {}});

  // No selector (the API server requires one for apps/v1; nothing trusted):
  // nullopt, which selects nothing, never an empty selector, which selects all.
  auto none = d.replica_set_event(event("ADDED", R"({"metadata":{"name":"x","namespace":"shop"},"spec":{}})"));
  REQUIRE(none.has_value());
  CHECK_FALSE(none->object.selector.has_value());
  auto null_sel =
      d.stateful_set_event(event("ADDED", R"({"metadata":{"name":"x","namespace":"shop"},"spec":{"selector":null}})"));
  REQUIRE(null_sel.has_value());
  CHECK_FALSE(null_sel->object.selector.has_value());
}

TEST_CASE("decode: bookmarks and errors of the new kinds' watches") {
  Decoder d;
  auto bm = d.service_event(
      R"({"type":"BOOKMARK","object":{"kind":"Service","apiVersion":"v1","metadata":{"resourceVersion":"900",)"
      R"("annotations":{"k8s.io/initial-events-end":"true"}}}})");
  REQUIRE(bm.has_value());
  CHECK(bm->type == EventType::bookmark);
  CHECK(bm->object.resource_version == "900");
  CHECK(bm->initial_events_end);
  auto err = d.namespace_event(R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},)"
                               R"("status":"Failure","message":"too old resource version","reason":"Expired",)"
                               R"("code":410}})");
  REQUIRE(err.has_value());
  CHECK(err->type == EventType::error);
  CHECK(is_expired(err->status));
}

TEST_CASE("decode: a new kind's unreadable object is skipped with its identity, not the list's failure") {
  Decoder d;
  const std::string bad_service = R"({"metadata":{"name":"bad","namespace":"shop","uid":"u-bad",)"
                                  R"("resourceVersion":"20"},"spec":{"selector":["app"]}})";
  auto l = d.service_list(list("ServiceList", kService + "," + bad_service));
  REQUIRE(l.has_value());
  REQUIRE(l->items.size() == 1);
  CHECK(l->items[0].name == "web");
  REQUIRE(l->undecodable.size() == 1);
  CHECK(l->undecodable[0].name == "bad");
  CHECK(l->undecodable[0].ns == "shop");
  CHECK(l->undecodable[0].resource_version == "20");

  const std::string bad_rs = R"({"metadata":{"name":"rs","namespace":"shop","resourceVersion":"21"},)"
                             R"("spec":{"selector":{"matchExpressions":{"key":"a"}}}})";
  auto ev = d.replica_set_event(event("MODIFIED", bad_rs));
  REQUIRE(ev.has_value());
  REQUIRE(ev->undecodable.has_value());
  CHECK(ev->undecodable->name == "rs");
  CHECK(ev->undecodable->error == make_error_code(errc::json_malformed).message());

  // Wrong types anywhere the decoder reads, each an undecodable object.
  const std::string bad_objects[] = {
      R"({"metadata":{"name":"n","labels":{"a":1}}})",  // namespace labels
      R"({"metadata":{"name":"n","namespace":"s"},"spec":{"selector":{"app":["x"]}}})",
      R"({"metadata":{"name":"n","namespace":"s"},"spec":{"selector":{"matchLabels":[]}}})",
      R"({"metadata":{"name":"n","namespace":"s"},"spec":"x"})",
  };
  CHECK(d.namespace_event(event("ADDED", bad_objects[0]))->undecodable.has_value());
  CHECK(d.replication_controller_event(event("ADDED", bad_objects[1]))->undecodable.has_value());
  CHECK(d.stateful_set_event(event("ADDED", bad_objects[2]))->undecodable.has_value());
  CHECK(d.service_event(event("ADDED", bad_objects[3]))->undecodable.has_value());
  // A nameless object is missing a required field.
  auto nameless = d.namespace_event(event("ADDED", R"({"metadata":{"uid":"u"}})"));
  REQUIRE(nameless.has_value());
  REQUIRE(nameless->undecodable.has_value());
  CHECK(nameless->undecodable->error == make_error_code(errc::json_missing_field).message());
  // A broken event is the event's failure.
  auto broken = d.stateful_set_event(R"({"type":"ADDED","object":{"metadata":)");
  CHECK_FALSE(broken.has_value());
}
