// An API client on a lab for C++ integration tests: config from the lab's
// kubeconfig, a transport on the test's loop, the typed calls.
#pragma once

#include <doctest/doctest.h>

#include <boost/asio/io_context.hpp>

#include <memory>
#include <string>

#include "toysched/kube/api.hpp"
#include "toysched/kube/config.hpp"
#include "toysched/kube/http_transport.hpp"

namespace toysched::testing {

struct LabClient {
  std::unique_ptr<kube::Transport> transport;
  std::unique_ptr<kube::Api> api;

  LabClient(boost::asio::io_context& io, const std::string& kubeconfig) {
    auto cfg = kube::load_kubeconfig({kubeconfig});
    REQUIRE_MESSAGE(cfg.has_value(), (cfg ? "" : cfg.error().message));
    auto t = kube::HttpTransport::create(io.get_executor(), std::move(*cfg));
    REQUIRE_MESSAGE(t.has_value(), (t ? "" : t.error().message));
    transport = std::move(*t);
    api = std::make_unique<kube::Api>(*transport);
  }
};

}  // namespace toysched::testing
