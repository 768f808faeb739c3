#include <doctest/doctest.h>

#include <regex>

#include "toysched/log/log.hpp"

using namespace toysched;

namespace {
struct capture {
  std::string text;
  capture() { log::capture_to(&text); }
  ~capture() {
    log::capture_to(nullptr);
    log::set_verbosity(0);
  }
};
}  // namespace

TEST_CASE("a line has klog's header and kube-scheduler's words") {
  capture c;
  log::set_verbosity(2);
  TS_LOG(2, "Successfully bound pod to node", {"pod", "ns/p"}, {"node", "n1"});
  // I1130 09:21:05.123456   12345 log_test.cpp:22] "msg" ...
  std::regex header(R"(^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ log_test\.cpp:\d+\] )");
  CHECK(std::regex_search(c.text, header));
  CHECK(c.text.find(R"("Successfully bound pod to node" pod="ns/p" node="n1")") != std::string::npos);
  CHECK(c.text.back() == '\n');
}

TEST_CASE("levels above -v are not printed, nor their arguments evaluated") {
  capture c;
  log::set_verbosity(2);
  int evaluated = 0;
  auto arg = [&] {
    ++evaluated;
    return 1;
  };
  TS_LOG(3, "Attempting to schedule pod", {"n", arg()});
  CHECK(c.text.empty());
  CHECK(evaluated == 0);
  log::set_verbosity(3);  // runtime change takes effect at once
  TS_LOG(3, "Attempting to schedule pod", {"n", arg()});
  CHECK(evaluated == 1);
  CHECK(c.text.find("Attempting to schedule pod") != std::string::npos);
}

TEST_CASE("warnings and errors carry W and E and are printed at any level") {
  capture c;
  TS_WARN("insecure", {"server", "https://x"});
  TS_ERROR("boom", {"err", "bad"});
  CHECK(c.text.rfind('W', 0) == 0);
  CHECK(c.text.find("\nE") != std::string::npos);
}

TEST_CASE("values are quoted like klog: strings escaped, numbers and bools bare") {
  auto body = log::format_body("a \"b\"\n", {{"s", "x\\y"}, {"i", -3}, {"u", 7u}, {"b", true}, {"d", 0.5}});
  CHECK(body == R"("a \"b\"\n" s="x\\y" i=-3 u=7 b=true d=0.5)");
}

TEST_CASE("--logging-format=json: klog's JSON lines, one object per line") {
  capture c;
  log::set_format(log::format::json);
  log::set_verbosity(2);
  TS_LOG(2, "Successfully bound pod to node", {"pod", "ns/p\"q"}, {"attempts", 3}, {"ok", true});
  TS_ERROR("Error binding pod", {"err", "boom"});
  log::set_format(log::format::text);
  // {"ts":1700000000123.456,"caller":"unit/log_test.cpp:NN","msg":"...","v":2,...}
  std::regex info(
      R"re(^\{"ts":\d{13}\.\d{3},"caller":"unit/log_test\.cpp:\d+","msg":"Successfully bound pod to node","v":2,"pod":"ns/p\\"q","attempts":3,"ok":true\}
)re");
  CHECK(std::regex_search(c.text, info));
  // Errors carry no "v"; their err is a field.
  std::regex error(R"re(
\{"ts":\d{13}\.\d{3},"caller":"unit/log_test\.cpp:\d+","msg":"Error binding pod","err":"boom"\}
$)re");
  CHECK(std::regex_search(c.text, error));
}

TEST_CASE("--vmodule: a file's own level, by name or by path glob; the first match decides") {
  capture c;
  log::set_verbosity(0);
  CHECK(log::set_vmodule("log_te*=4,unit/other=9") == "");
  TS_LOG(4, "shown by vmodule");
  TS_LOG(5, "above the file's level");
  CHECK(log::enabled(4, "../src/sched/scheduler.cpp") == false);
  CHECK(log::enabled(9, "../test/unit/other.cpp"));
  CHECK(log::set_vmodule("") == "");
  TS_LOG(4, "vmodule cleared");
  CHECK(c.text.find("shown by vmodule") != std::string::npos);
  CHECK(c.text.find("above the file's level") == std::string::npos);
  CHECK(c.text.find("vmodule cleared") == std::string::npos);
  CHECK(log::set_vmodule("x") == "\"x\" is not pattern=N");
  CHECK(log::set_vmodule("x=-1") == "\"x=-1\": N must be a non-negative integer");
}
