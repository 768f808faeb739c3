// Client configuration: kubeconfig files, the in-cluster config, and the
// rotating bearer token. Behaviour follows client-go (tools/clientcmd
// loader.go and validation.go, rest.InClusterConfig, transport
// token_source.go); see config.hpp for the rules.
#include "toysched/kube/config.hpp"

#include "kubeconfig_fields.hpp"
#include "toysched/kube/errors.hpp"

#include <yaml-cpp/yaml.h>

#include <boost/throw_exception.hpp>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>

namespace toysched::kube {

namespace fs = std::filesystem;

namespace kubeconfig {

// main() prints the message as one log line; YAML messages and paths could
// otherwise break it, and yaml-cpp quotes a bad escape's byte raw (an ESC
// from a binary file would reach the terminal).
std::string one_line(std::string s) {
  for (char& c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
    else if (u < 0x20 || u == 0x7f)
      c = '?';
  }
  return s;
}

Error make_error(errc code, std::string message) { return {make_error_code(code), one_line(std::move(message))}; }

std::string q(std::string_view s) { return "\"" + std::string(s) + "\""; }

[[noreturn]] void fail(errc code, std::string message) { throw Failure{make_error(code, std::move(message))}; }

std::string line_of(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  if (m.is_null()) return {};
  return " (line " + std::to_string(m.line + 1) + ")";
}

std::string get_string(const YAML::Node& map, const char* key, const std::string& what) {
  const YAML::Node n = map[key];
  if (!n || n.IsNull()) return {};
  if (!n.IsScalar()) fail(errc::config_malformed, what + ": field " + key + " must be a string" + line_of(n));
  return n.Scalar();
}

bool get_bool(const YAML::Node& map, const char* key, const std::string& what) {
  const YAML::Node n = map[key];
  if (!n || n.IsNull()) return false;
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v))
    fail(errc::config_malformed, what + ": field " + key + " must be true or false" + line_of(n));
  return v;
}

fs::path resolve(const fs::path& p, const fs::path& defining_file) {
  if (p.is_absolute()) return p;
  return (defining_file.parent_path() / p).lexically_normal();
}

}  // namespace kubeconfig

namespace {

using namespace kubeconfig;

std::string trim(std::string_view s) {
  const char* ws = " \t\r\n";
  auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  auto e = s.find_last_not_of(ws);
  return std::string(s.substr(b, e - b + 1));
}

// Whole-file read with errno's reason on failure (ifstream loses it). Reads
// stop past kMaxConfigFileBytes: a huge file or /dev/zero must fail at once,
// not after eating the memory YAML::Load would then need.
bool read_file(const fs::path& p, std::string& out, std::string& why) {
  std::FILE* f = std::fopen(p.c_str(), "rb");
  if (!f) {
    why = std::strerror(errno);
    return false;
  }
  std::string data;
  char buf[8192];
  std::size_t n;
  while (data.size() <= kMaxConfigFileBytes && (n = std::fread(buf, 1, sizeof buf, f)) > 0) data.append(buf, n);
  if (data.size() > kMaxConfigFileBytes) {
    std::fclose(f);
    why = "the file is too large (over " + std::to_string(kMaxConfigFileBytes >> 20) + " MiB)";
    return false;
  }
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed) {
    why = std::strerror(err);
    return false;
  }
  out = std::move(data);
  return true;
}

// Standard base64 with padding, as Go's []byte JSON decoding wants it;
// whitespace is skipped because YAML block scalars wrap long data.
std::optional<std::string> base64_decode(std::string_view in) {
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t chars = 0, pad = 0;
  for (char c : in) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      ++pad;
      continue;
    }
    if (pad != 0) return std::nullopt;  // data after padding
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+')
      v = 62;
    else if (c == '/')
      v = 63;
    else
      return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    ++chars;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  if (pad > 2 || (chars + pad) % 4 != 0 || chars % 4 == 1) return std::nullopt;
  return out;
}

// ---- kubeconfig files --------------------------------------------------

// One named entry: the body under `cluster:` / `user:` / `context:` and the
// file that defined it (relative paths resolve against its directory).
struct Entry {
  YAML::Node body;
  fs::path file;
};

struct Merged {
  std::map<std::string, Entry> clusters, users, contexts;
  std::string current_context;
  std::vector<fs::path> loaded;
  std::size_t with_content = 0;  // loaded files that are not empty (or comments only)

  std::string files() const {
    std::string s;
    for (const auto& f : loaded) s += (s.empty() ? "" : ":") + f.string();
    return s;
  }
};

void merge_list(const YAML::Node& root, const char* list, const char* body_key, const fs::path& file,
                std::map<std::string, Entry>& into) {
  const YAML::Node items = root[list];
  if (!items || items.IsNull()) return;
  const std::string where = "kubeconfig " + file.string();
  if (!items.IsSequence()) fail(errc::config_malformed, where + ": " + list + " must be a list" + line_of(items));
  for (const YAML::Node& item : items) {
    if (!item.IsMap()) fail(errc::config_malformed, where + ": entries of " + list + " must be maps" + line_of(item));
    const std::string name = get_string(item, "name", where);
    if (name.empty()) fail(errc::config_malformed, where + ": an entry of " + list + " has no name" + line_of(item));
    YAML::Node body = item[body_key];
    if (body && !body.IsNull() && !body.IsMap())
      fail(errc::config_malformed, where + ": " + body_key + " " + q(name) + " must be a map" + line_of(body));
    if (!body || body.IsNull()) body = YAML::Node(YAML::NodeType::Map);
    into.emplace(name, Entry{body, file});  // first definition wins
  }
}

void merge_file(const fs::path& file, Merged& m) {
  std::string text, why;
  if (!read_file(file, text, why))
    fail(errc::config_unreadable, "cannot read kubeconfig " + file.string() + ": " + why);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    fail(errc::config_malformed, "kubeconfig " + file.string() + " is not valid YAML: line " +
                                     std::to_string(e.mark.line + 1) + ", column " + std::to_string(e.mark.column + 1) +
                                     ": " + e.msg);
  }
  m.loaded.push_back(file);
  if (root.IsNull()) return;  // an empty file is an empty config, as in client-go
  if (!root.IsMap()) fail(errc::config_malformed, "kubeconfig " + file.string() + " is not a YAML map");
  ++m.with_content;
  merge_list(root, "clusters", "cluster", file, m.clusters);
  merge_list(root, "users", "user", file, m.users);
  merge_list(root, "contexts", "context", file, m.contexts);
  if (m.current_context.empty()) m.current_context = get_string(root, "current-context", "kubeconfig " + file.string());
}

// `key-data` (base64) or else the file named by `key`; "" when neither is set.
std::string pem_field(const Entry& e, const std::string& key, const std::string& what) {
  const std::string data_key = key + "-data";
  const std::string data = get_string(e.body, data_key.c_str(), what);
  if (!data.empty()) {
    auto decoded = base64_decode(data);
    if (!decoded) fail(errc::config_malformed, what + ": " + data_key + " is not valid base64");
    return std::move(*decoded);
  }
  const std::string path = get_string(e.body, key.c_str(), what);
  if (path.empty()) return {};
  const fs::path full = resolve(path, e.file);
  std::string bytes, why;
  if (!read_file(full, bytes, why))
    fail(errc::config_unreadable, what + ": cannot read " + key + " " + full.string() + ": " + why);
  return bytes;
}

// The user part of build(): its credentials into c.
void read_user(const Entry& ue, const std::string& us_what, ClientConfig& c) {
  const std::string unsupported = ", which toy-scheduler does not support; use a token or client certificate";
  const YAML::Node exec = ue.body["exec"];
  const YAML::Node ap = ue.body["auth-provider"];
  if (exec && !exec.IsNull() && ap && !ap.IsNull())  // as client-go's validation
    fail(errc::config_invalid, us_what + " has both exec and auth-provider; remove one");
  if (ap && !ap.IsNull()) {
    std::string name = ap.IsMap() ? get_string(ap, "name", us_what) : std::string();
    fail(errc::config_unsupported_auth,
         us_what + " uses an auth-provider" + (name.empty() ? "" : " (" + name + ")") + unsupported);
  }
  if (!get_string(ue.body, "username", us_what).empty() || !get_string(ue.body, "password", us_what).empty())
    fail(errc::config_unsupported_auth, us_what + " uses basic auth (username/password)" + unsupported);

  const bool has_cert = !get_string(ue.body, "client-certificate-data", us_what).empty() ||
                        !get_string(ue.body, "client-certificate", us_what).empty();
  const bool has_key =
      !get_string(ue.body, "client-key-data", us_what).empty() || !get_string(ue.body, "client-key", us_what).empty();
  if (has_cert && !has_key) fail(errc::config_invalid, us_what + " has client-certificate but no client-key");
  if (has_key && !has_cert) fail(errc::config_invalid, us_what + " has client-key but no client-certificate");
  c.client_cert_pem = pem_field(ue, "client-certificate", us_what);
  c.client_key_pem = pem_field(ue, "client-key", us_what);

  c.token = get_string(ue.body, "token", us_what);
  if (const std::string tf = get_string(ue.body, "tokenFile", us_what); !tf.empty()) {
    const fs::path full = resolve(tf, ue.file);
    std::string ignored, why;  // read only to fail early, as client-go does; TokenSource reads it for real
    if (!read_file(full, ignored, why))
      fail(errc::config_unreadable, us_what + ": cannot read tokenFile " + full.string() + ": " + why);
    c.token_file = full.string();
  }
  // client-go runs the plugin only for users with no token or certificate
  // of their own (exec's UpdateTransportConfig); the block is still checked.
  if (exec && !exec.IsNull()) {
    ExecConfig e = read_exec(exec, us_what, ue.file);
    if (c.token.empty() && c.token_file.empty() && c.client_cert_pem.empty()) c.exec = std::move(e);
  }
}

ClientConfig build(const Merged& m, std::string_view context_override) {
  const std::string files = m.files();
  const std::string context = context_override.empty() ? m.current_context : std::string(context_override);
  // client-go reads an empty file as an empty config; say so rather than
  // point at one of the many fields it lacks.
  if (m.with_content == 0) fail(errc::config_invalid, "kubeconfig " + files + " is empty");
  if (context.empty()) fail(errc::config_invalid, "no current-context in kubeconfig " + files + "; pass --context");
  const auto ctx = m.contexts.find(context);
  if (ctx == m.contexts.end())
    fail(errc::config_invalid, "context " + q(context) + " not found in kubeconfig " + files);
  const std::string ctx_what = "context " + q(context) + " in " + ctx->second.file.string();
  const std::string cluster_name = get_string(ctx->second.body, "cluster", ctx_what);
  const std::string user_name = get_string(ctx->second.body, "user", ctx_what);
  if (cluster_name.empty()) fail(errc::config_invalid, ctx_what + " names no cluster");
  if (user_name.empty()) fail(errc::config_invalid, ctx_what + " names no user");
  const auto cluster = m.clusters.find(cluster_name);
  if (cluster == m.clusters.end())
    fail(errc::config_invalid,
         "cluster " + q(cluster_name) + " (used by " + ctx_what + ") not found in kubeconfig " + files);
  const auto user = m.users.find(user_name);
  if (user == m.users.end())
    fail(errc::config_invalid, "user " + q(user_name) + " (used by " + ctx_what + ") not found in kubeconfig " + files);

  ClientConfig c;
  c.origin = {false, ctx->second.file.string(), context, cluster_name, user_name};
  const std::string ns = get_string(ctx->second.body, "namespace", ctx_what);
  if (!ns.empty()) c.namespace_name = ns;

  // cluster
  const Entry& ce = cluster->second;
  const std::string cl_what = "cluster " + q(cluster_name) + " in " + ce.file.string();
  const std::string server = get_string(ce.body, "server", cl_what);
  if (server.empty()) fail(errc::config_invalid, cl_what + " has no server");
  auto url = parse_server_url(server);
  if (!url) fail(errc::config_invalid, cl_what + ": " + url.error().message);
  c.server = *url;
  if (!get_string(ce.body, "proxy-url", cl_what).empty())
    fail(errc::config_invalid, cl_what + " uses proxy-url, which toy-scheduler does not support");
  c.tls_server_name = get_string(ce.body, "tls-server-name", cl_what);
  c.insecure_skip_tls_verify = get_bool(ce.body, "insecure-skip-tls-verify", cl_what);
  const bool has_ca = !get_string(ce.body, "certificate-authority-data", cl_what).empty() ||
                      !get_string(ce.body, "certificate-authority", cl_what).empty();
  // client-go refuses this pair: a CA that is then not checked is a mistake.
  if (c.insecure_skip_tls_verify && has_ca)
    fail(errc::config_invalid, cl_what + " sets both insecure-skip-tls-verify and certificate-authority; remove one");
  c.ca_pem = pem_field(ce, "certificate-authority", cl_what);

  read_user(user->second, "user " + q(user_name) + " in " + user->second.file.string(), c);
  if (c.exec && c.exec->provide_cluster_info)
    c.exec->cluster_json = exec_cluster_json(
        {server, c.tls_server_name, c.insecure_skip_tls_verify, c.ca_pem, exec_extension_json(ce.body, cl_what)});
  return c;
}

}  // namespace

// ---- server URL --------------------------------------------------------

std::string ServerUrl::authority() const {
  std::string a = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (port != (tls() ? 443 : 80)) a += ":" + std::to_string(port);
  return a;
}

std::string ServerUrl::to_string() const { return scheme + "://" + authority() + base_path; }

expected<ServerUrl> parse_server_url(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return make_error(errc::config_invalid, "server URL " + q(text) + " " + std::string(why));
  };
  ServerUrl u;
  std::string_view rest = text;
  if (auto p = rest.find("://"); p != std::string_view::npos) {
    std::string scheme(rest.substr(0, p));
    for (char& ch : scheme) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (scheme != "https" && scheme != "http") return bad("has an unsupported scheme (want https or http)");
    u.scheme = scheme;
    rest.remove_prefix(p + 3);
  }
  if (rest.find_first_of("?#") != std::string_view::npos) return bad("has a query or fragment");
  const auto slash = rest.find('/');
  const std::string_view auth = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view path = rest.substr(slash);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    u.base_path = std::string(path);
  }
  if (auth.find('@') != std::string_view::npos) return bad("contains user info");
  u.port = u.tls() ? 443 : 80;
  std::optional<std::string_view> port_text;
  if (!auth.empty() && auth.front() == '[') {
    const auto close = auth.find(']');
    if (close == std::string_view::npos) return bad("has an unclosed IPv6 bracket");
    u.host = std::string(auth.substr(1, close - 1));
    const std::string_view after = auth.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("has junk after the IPv6 address");
      port_text = after.substr(1);
    }
  } else if (const auto colon = auth.find(':'); colon != std::string_view::npos) {
    if (auth.find(':', colon + 1) != std::string_view::npos) return bad("has an IPv6 address without brackets");
    u.host = std::string(auth.substr(0, colon));
    port_text = auth.substr(colon + 1);
  } else {
    u.host = std::string(auth);
  }
  if (u.host.empty()) return bad("has no host");
  if (port_text) {
    unsigned v = 0;
    auto [end, ec] = std::from_chars(port_text->data(), port_text->data() + port_text->size(), v);
    if (ec != std::errc() || end != port_text->data() + port_text->size() || v == 0 || v > 65535)
      return bad("has an invalid port");
    u.port = static_cast<std::uint16_t>(v);
  }
  return u;
}

std::string ConfigOrigin::describe() const {
  if (in_cluster) return "in-cluster config";
  return "context " + q(context) + " (cluster " + q(cluster) + ", user " + q(user) + ") in " + file;
}

// ---- loading -----------------------------------------------------------

Environment Environment::process() {
  Environment e;
  e.lookup = [](const std::string& name) -> std::optional<std::string> {
    if (const char* v = std::getenv(name.c_str())) return std::string(v);
    return std::nullopt;
  };
  return e;
}

std::string Environment::get(const std::string& name) const {
  if (!lookup) return {};
  return lookup(name).value_or(std::string());
}

std::vector<fs::path> split_kubeconfig_list(std::string_view value) {
  std::vector<fs::path> out;
  std::set<std::string> seen;
  while (true) {
    const auto colon = value.find(':');
    const std::string item(value.substr(0, colon));
    if (!item.empty() && seen.insert(item).second) out.emplace_back(item);
    if (colon == std::string_view::npos) break;
    value.remove_prefix(colon + 1);
  }
  return out;
}

expected<ClientConfig> load_kubeconfig(const std::vector<fs::path>& files, std::string_view context) {
  try {
    Merged m;
    std::string looked;
    for (const fs::path& f : files) {
      std::error_code ec;
      fs::path abs = fs::absolute(f, ec);  // absolute, so messages and token_file paths do not depend on cwd later
      if (ec) abs = f;
      abs = abs.lexically_normal();
      looked += (looked.empty() ? "" : ":") + abs.string();
      if (!fs::exists(abs, ec)) continue;  // KUBECONFIG may list files that do not exist yet
      merge_file(abs, m);
    }
    if (m.loaded.empty())
      return make_error(errc::config_not_found, "no kubeconfig file found (looked for " + looked + ")");
    return build(m, context);
  } catch (const Failure& f) {
    return f.error;
  } catch (const YAML::Exception& e) {  // a yaml-cpp surprise on a strange document
    return make_error(errc::config_malformed, "kubeconfig: " + std::string(e.what()));
  }
}

expected<ClientConfig> load_in_cluster(const Environment& env) {
  const std::string host = env.get("KUBERNETES_SERVICE_HOST");
  const std::string port = env.get("KUBERNETES_SERVICE_PORT");
  if (host.empty() || port.empty())
    return make_error(errc::config_not_found,
                      "in-cluster config needs both KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT");
  const std::string bracketed = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  auto url = parse_server_url("https://" + bracketed + ":" + port);
  if (!url) return make_error(errc::config_invalid, "in-cluster config: " + url.error().message);

  ClientConfig c;
  c.server = *url;
  c.origin.in_cluster = true;
  const fs::path dir = env.serviceaccount_dir;
  std::string why;
  if (!read_file(dir / "ca.crt", c.ca_pem, why))
    return make_error(errc::config_unreadable,
                      "in-cluster config: cannot read " + (dir / "ca.crt").string() + ": " + why);
  std::string ignored;  // read to fail early; TokenSource re-reads it as it rotates
  if (!read_file(dir / "token", ignored, why))
    return make_error(errc::config_unreadable, "in-cluster config: cannot read service account token " +
                                                   (dir / "token").string() + ": " + why +
                                                   " (is automountServiceAccountToken off?)");
  c.token_file = (dir / "token").string();
  // POD_NAMESPACE first, as client-go's in-cluster loader does.
  std::string ns = env.get("POD_NAMESPACE");
  if (ns.empty()) {
    std::string text;
    if (read_file(dir / "namespace", text, why)) ns = trim(text);
  }
  if (!ns.empty()) c.namespace_name = ns;
  return c;
}

expected<ClientConfig> load_client_config(std::string_view kubeconfig, std::string_view context,
                                          const Environment& env) {
  if (!kubeconfig.empty()) {
    // An explicit path must exist: silently falling back would talk to the wrong cluster.
    const fs::path p(kubeconfig);
    std::error_code ec;
    if (!fs::exists(p, ec))
      return make_error(errc::config_unreadable, "kubeconfig " + p.string() + " (from --kubeconfig) does not exist");
    return load_kubeconfig({p}, context);
  }
  if (const std::string list = env.get("KUBECONFIG"); !list.empty()) {
    auto r = load_kubeconfig(split_kubeconfig_list(list), context);
    if (!r && r.error().code == errc::config_not_found)
      return make_error(errc::config_not_found, "none of the files in $KUBECONFIG exist (" + list + ")");
    return r;
  }
  if (!env.get("KUBERNETES_SERVICE_HOST").empty() && !env.get("KUBERNETES_SERVICE_PORT").empty())
    return load_in_cluster(env);
  if (const std::string home = env.get("HOME"); !home.empty()) {
    const fs::path p = fs::path(home) / ".kube" / "config";
    std::error_code ec;
    if (fs::exists(p, ec)) return load_kubeconfig({p}, context);
  }
  return make_error(errc::config_not_found,
                    "no configuration: pass --kubeconfig, set $KUBECONFIG, run in a pod, or create ~/.kube/config");
}

// ---- token source ------------------------------------------------------

TokenSource TokenSource::fixed(std::string token) {
  TokenSource s;
  s.token_ = std::move(token);
  return s;
}

TokenSource TokenSource::file(fs::path path, std::string initial, Now now) {
  TokenSource s;
  s.path_ = std::move(path);
  s.token_ = std::move(initial);
  s.now_ = std::move(now);
  return s;
}

TokenSource TokenSource::for_config(const ClientConfig& config, Now now) {
  if (!config.token_file.empty()) return file(config.token_file, config.token, std::move(now));
  return fixed(config.token);
}

const std::string& TokenSource::current() {
  if (!path_.empty() && (stale_ || !last_read_ || now_() - *last_read_ > reload_period)) reload();
  return token_;
}

void TokenSource::reload() {
  std::string text, why;
  if (read_file(path_, text, why)) {
    text = trim(text);
    if (!text.empty()) {
      token_ = std::move(text);
      last_read_ = now_();
      stale_ = false;
      failing_ = false;
      return;
    }
    why = "the file is empty";
  }
  // last_read_ is left alone so the next call tries again.
  if (failing_) return;
  failing_ = true;
  pending_error_ = make_error(errc::token_unreadable, "cannot read token file " + path_.string() + ": " + why +
                                                          (token_.empty() ? "" : "; keeping the last token"));
}

std::optional<Error> TokenSource::take_error() {
  auto e = std::move(pending_error_);
  pending_error_.reset();
  return e;
}

}  // namespace toysched::kube
