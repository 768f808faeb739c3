#include "toysched/serve/tls.hpp"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/ssl/context.hpp>

#include <ctime>

namespace toysched::serve {

namespace ssl = boost::asio::ssl;

namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
template <class T>
using owned = std::unique_ptr<T, Free>;

std::string openssl_reason() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

bool add_ext(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  owned<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  return ext && X509_add_ext(cert, ext.get(), -1) == 1;
}

// A P-256 key and a certificate for it, valid from an hour ago (clock skew)
// for a year, as client-go's cert helper makes them for a serving cert.
std::string self_signed(SSL_CTX* ctx, const std::string& hostname) {
  owned<EVP_PKEY> key(EVP_EC_gen("P-256"));
  owned<X509> cert(X509_new());
  if (!key || !cert) return openssl_reason();
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) return openssl_reason();
  serial[0] &= 0x7f;  // a positive serial number
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  bool ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  std::string cn = "localhost@" + std::to_string(std::time(nullptr));
  X509_NAME* name = X509_get_subject_name(cert.get());
  ok = ok && X509_set_version(cert.get(), 2) == 1 && X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) &&
       X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 3600) &&
       X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1,
                                  0) == 1 &&
       X509_set_issuer_name(cert.get(), name) == 1 && X509_set_pubkey(cert.get(), key.get()) == 1;
  std::string san = "DNS:localhost,IP:127.0.0.1";
  if (!hostname.empty() && hostname != "localhost") san += ",DNS:" + hostname;
  ok = ok && add_ext(cert.get(), NID_basic_constraints, "critical,CA:FALSE") &&
       add_ext(cert.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment") &&
       add_ext(cert.get(), NID_ext_key_usage, "serverAuth") && add_ext(cert.get(), NID_subject_alt_name, san) &&
       X509_sign(cert.get(), key.get(), EVP_sha256()) > 0 && SSL_CTX_use_certificate(ctx, cert.get()) == 1 &&
       SSL_CTX_use_PrivateKey(ctx, key.get()) == 1;
  return ok ? std::string() : openssl_reason();
}

}  // namespace

std::variant<std::shared_ptr<ssl::context>, std::string> make_server_tls(const TlsFiles& files,
                                                                         const std::string& hostname) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  // TLS 1.2 is kube-scheduler's minimum too.
  if (SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION) != 1) return openssl_reason();
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3);
  if (files.cert_file.empty() != files.key_file.empty())
    return std::string("--tls-cert-file and --tls-private-key-file must be given together");
  if (files.cert_file.empty()) {
    if (auto err = self_signed(ctx->native_handle(), hostname); !err.empty())
      return "cannot make a self-signed certificate: " + err;
    return ctx;
  }
  boost::system::error_code ec;
  ctx->use_certificate_chain_file(files.cert_file, ec);
  if (ec) return "--tls-cert-file=" + files.cert_file + ": " + ec.message();
  ctx->use_private_key_file(files.key_file, ssl::context::pem, ec);
  if (ec) return "--tls-private-key-file=" + files.key_file + ": " + ec.message();
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1)
    return "--tls-private-key-file=" + files.key_file + " does not match --tls-cert-file=" + files.cert_file;
  return ctx;
}

}  // namespace toysched::serve
