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
