#include <doctest/doctest.h>
#include <simdjson.h>

#include "toysched/json/writer.hpp"
#include "toysched/kube/objects.hpp"

using toysched::json::Writer;

namespace {
// The writer's output must be JSON a real parser accepts.
bool parses(const std::string& s) {
  simdjson::dom::parser p;
  simdjson::dom::element e;
  return p.parse(s).get(e) == simdjson::SUCCESS;
}
}  // namespace

TEST_CASE("commas and nesting follow the structure") {
  Writer w;
  w.object().field("a", 1).key("b").array().value("x").value(true).null().object().end().array().end().end();
  w.field("c", "d").end();
  auto s = std::move(w).str();
  CHECK(s == R"({"a":1,"b":["x",true,null,{},[]],"c":"d"})");
  CHECK(parses(s));
}

TEST_CASE("strings are escaped per RFC 8259, UTF-8 kept") {
  Writer w;
  w.object().field("k\"ey", std::string("a\\b\n\t\r\x01 é")).end();
  auto s = std::move(w).str();
  CHECK(s == "{\"k\\\"ey\":\"a\\\\b\\n\\t\\r\\u0001 é\"}");
  CHECK(parses(s));
}

TEST_CASE("numbers at the edges of int64 and uint64") {
  Writer w;
  w.array().value(std::int64_t{-9223372036854775807LL - 1}).value(std::uint64_t{18446744073709551615ULL}).end();
  CHECK(std::move(w).str() == "[-9223372036854775808,18446744073709551615]");
}

TEST_CASE("raw inserts an encoded body in place of a value") {
  Writer w;
  w.object().key("inner").raw(R"({"x":[1]})").field("y", 2).end();
  CHECK(std::move(w).str() == R"({"inner":{"x":[1]},"y":2})");
}

TEST_CASE("the Lease body is JSON with every field written") {
  toysched::kube::Lease l;
  l.ns = "kube-system";
  l.name = "n\"ame";
  l.resource_version = "12";
  l.holder_identity = "";
  l.lease_duration_seconds = 15;
  l.lease_transitions = 3;
  auto s = toysched::kube::encode_lease(l);
  CHECK(parses(s));
  CHECK(s.find(R"("holderIdentity":"")") != std::string::npos);
  CHECK(s.find(R"("name":"n\"ame")") != std::string::npos);
  CHECK(s.find(R"("leaseDurationSeconds":15,"leaseTransitions":3)") != std::string::npos);
}
