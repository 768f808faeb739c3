// The server side of TLS for the secure port (--secure-port): the certificate
// and key from --tls-cert-file / --tls-private-key-file, or, as
// kube-scheduler does without them, a self-signed one made at start and kept
// in memory only (never written, never logged).
#pragma once

#include <memory>
#include <string>
#include <variant>

namespace boost::asio::ssl {
class context;
}

namespace toysched::serve {

struct TlsFiles {
  std::string cert_file;  // PEM chain, leaf first
  std::string key_file;   // PEM private key
};

// A server context, TLS 1.2 and up. Empty files: a self-signed certificate
// for localhost, 127.0.0.1 and `hostname`. The error is one line naming the
// file and what is wrong with it (never its content).
std::variant<std::shared_ptr<boost::asio::ssl::context>, std::string> make_server_tls(const TlsFiles& files,
                                                                                      const std::string& hostname);

}  // namespace toysched::serve
