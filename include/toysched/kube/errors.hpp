// Error codes of the Kubernetes client, one documented value per failure.
// Expected failures are values: boost::system::result<T> carrying these
// codes (plus, where the server sent one, its decoded Status beside it).
#pragma once

#include <boost/assert/source_location.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>

#include <string>
#include <type_traits>

namespace toysched::kube {

enum class errc {
  ok = 0,
  // configuration
  config_invalid = 1,       // a kubeconfig or in-cluster config that cannot be used
  config_unsupported_auth,  // auth-provider and basic-auth users, exec plugins wanting a terminal
  config_not_found,         // no --kubeconfig, $KUBECONFIG, in-cluster env or ~/.kube/config
  config_unreadable,        // a kubeconfig, CA, certificate, key or token file that cannot be read
  config_malformed,         // bad YAML, a field of the wrong type, bad base64
  token_unreadable,         // a token file that could not be re-read (the last token is kept)
  exec_failed,              // an exec credential plugin that failed, hung or printed no credential
  // decoding what the server sent
  json_malformed = 20,  // not JSON, or the wrong JSON type where an object was needed
  json_missing_field,   // a field scheduling cannot do without (name, uid, ...)
  object_too_large,     // a single object or event beyond the decoder's limit
  stream_truncated,     // a watch stream that ended in the middle of an event
  quantity_invalid,     // "12x", "", "1.2.3"
  quantity_overflow,    // beyond int64 in the unit we count in
  // transport
  connect_timeout = 40,
  connect_failed,   // DNS or TCP refused / unreachable
  connection_lost,  // the connection broke before a whole response arrived
  request_timeout,
  tls_failed,
  http_status,  // a non-success HTTP status; the Status is kept beside it
  cancelled,    // not sent: its sender no longer wanted it (RequestLimits::may_send)
  // protocol
  watch_expired = 60,  // 410 Gone / reason Expired: relist
};

const boost::system::error_category& error_category() noexcept;

inline boost::system::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), error_category()}; }

template <class T>
using result = boost::system::result<T>;

// A failure with a sentence for people: the code for programs, one line
// that names what failed (the file, the server, the request) and never
// contains credential bytes. Configuration and transport failures both use
// it; API refusals carry more (ApiError in api.hpp).
struct Error {
  boost::system::error_code code;
  std::string message;
};
template <class T>
using expected = boost::system::result<T, Error>;
// Lets expected<T>::value() throw (start-up code may prefer that).
[[noreturn]] void throw_exception_from_error(const Error& e, const boost::source_location& loc);

}  // namespace toysched::kube

template <>
struct boost::system::is_error_code_enum<toysched::kube::errc> : std::true_type {};
