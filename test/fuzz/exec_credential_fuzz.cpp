// Fuzz target: what an exec credential plugin prints, decoded as both
// apiVersions. Garbage is an error with a one-line message, never a crash;
// a decoded credential has a token or both halves of a certificate pair.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "toysched/kube/exec_credential.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (auto version : {toysched::kube::kExecV1, toysched::kube::kExecV1beta1}) {
    auto r = toysched::kube::parse_exec_credential(text, version);
    if (!r && r.error().message.find('\n') != std::string::npos) std::abort();
    if (r && r->token.empty() && r->client_cert_pem.empty()) std::abort();
    if (r && r->client_cert_pem.empty() != r->client_key_pem.empty()) std::abort();
  }
  return 0;
}
