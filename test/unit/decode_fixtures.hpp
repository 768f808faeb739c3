// Pods as the API server sends them, for the decoder's tests: the JSON
// shape of `kubectl get -o json` (k8s-api note §1), with the spec and its
// containers supplied by the test.
#pragma once

#include "toysched/kube/decode.hpp"

#include <doctest/doctest.h>

#include <string>

namespace toysched::test::decoding {

// A pod as the server sends it, with `spec` supplied by the test.
inline std::string pod_json(const std::string& spec, const std::string& name = "web-0") {
  return R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name +
         R"(","namespace":"default","uid":"0b7e5b3c-1111-4c2a-9d1e-5f6a7b8c9d0e","resourceVersion":"12345",)"
         R"("creationTimestamp":"2026-01-01T10:00:00Z","managedFields":[{"manager":"kubectl","operation":"Update"}]},)"
         R"("spec":)" +
         spec + R"(,"status":{"phase":"Pending","qosClass":"Burstable"}})";
}

// One container; `resources` is the body of its resources object.
inline std::string ctr(const std::string& name, const std::string& resources, const std::string& extra = "") {
  return R"({"name":")" + name + R"(","image":"registry.k8s.io/pause:3.10","resources":{)" + resources + "}" +
         (extra.empty() ? "" : "," + extra) + "}";
}

inline std::string spec_of(const std::string& containers, const std::string& init = "", const std::string& more = "") {
  std::string s = R"({"containers":[)" + containers + "]";
  if (!init.empty()) s += R"(,"initContainers":[)" + init + "]";
  if (!more.empty()) s += "," + more;
  return s + "}";
}

inline kube::Resources requests_of(const std::string& spec) {
  auto p = kube::decode_pod(pod_json(spec));
  REQUIRE(p.has_value());
  return p->requests;
}

}  // namespace toysched::test::decoding
