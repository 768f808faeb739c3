#include "toysched/kube/errors.hpp"

#include <boost/throw_exception.hpp>

#include <stdexcept>

namespace toysched::kube {
namespace {

class category final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "toysched.kube"; }
  std::string message(int ev) const override {
    switch (static_cast<errc>(ev)) {
      case errc::ok:
        return "success";
      case errc::config_invalid:
        return "invalid client configuration";
      case errc::config_unsupported_auth:
        return "authentication method not supported";
      case errc::config_not_found:
        return "no client configuration found";
      case errc::config_unreadable:
        return "configuration file unreadable";
      case errc::config_malformed:
        return "malformed configuration file";
      case errc::token_unreadable:
        return "token file unreadable";
      case errc::exec_failed:
        return "exec credential plugin failed";
      case errc::json_malformed:
        return "malformed JSON";
      case errc::json_missing_field:
        return "required field missing";
      case errc::object_too_large:
        return "object too large";
      case errc::stream_truncated:
        return "stream ended in the middle of an event";
      case errc::quantity_invalid:
        return "invalid quantity";
      case errc::quantity_overflow:
        return "quantity out of range";
      case errc::connect_timeout:
        return "connect timed out";
      case errc::connect_failed:
        return "connect failed";
      case errc::connection_lost:
        return "connection lost";
      case errc::request_timeout:
        return "request timed out";
      case errc::tls_failed:
        return "TLS handshake failed";
      case errc::http_status:
        return "HTTP error status";
      case errc::cancelled:
        return "request cancelled before it was sent";
      case errc::watch_expired:
        return "resource version expired";
    }
    return "unknown toysched.kube error";
  }
};

}  // namespace

const boost::system::error_category& error_category() noexcept {
  static const category instance;
  return instance;
}

void throw_exception_from_error(const Error& e, const boost::source_location& loc) {
  boost::throw_with_location(std::runtime_error(e.message), loc);
}

}  // namespace toysched::kube
