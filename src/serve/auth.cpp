#include "toysched/serve/auth.hpp"

#include <openssl/evp.h>
#include <simdjson.h>

#include "toysched/json/writer.hpp"
#include "toysched/kube/transport.hpp"
#include "toysched/log/log.hpp"

#include <algorithm>
#include <cctype>

namespace toysched::serve {

namespace asio = boost::asio;
namespace http = boost::beast::http;

// --- pure parts --------------------------------------------------------------

std::optional<std::string_view> bearer_token(std::string_view authorization) {
  auto space = authorization.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::string_view scheme = authorization.substr(0, space);
  constexpr std::string_view bearer = "bearer";
  if (scheme.size() != bearer.size() || !std::equal(scheme.begin(), scheme.end(), bearer.begin(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == b;
      }))
    return std::nullopt;
  std::string_view token = authorization.substr(space + 1);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  if (token.empty()) return std::nullopt;
  return token;
}

// As the API server's request info for a path outside /api and /apis: the
// method in lower case (PUT /debug/flags/v needs verb "put" in RBAC).
std::string_view request_verb(std::string_view method) {
  static const std::map<std::string, std::string, std::less<>> verbs{
      {"GET", "get"},     {"HEAD", "head"},     {"PUT", "put"},        {"POST", "post"},
      {"PATCH", "patch"}, {"DELETE", "delete"}, {"OPTIONS", "options"}};
  auto it = verbs.find(method);
  return it == verbs.end() ? std::string_view("unknown") : std::string_view(it->second);
}

bool path_matches(std::string_view path, const std::vector<std::string>& patterns) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
    if (!p.empty() && p.back() == '*') return path.starts_with(std::string_view(p).substr(0, p.size() - 1));
    return path == p;
  });
}

std::string token_review_body(std::string_view token) {
  json::Writer w;
  w.object().field("apiVersion", "authentication.k8s.io/v1").field("kind", "TokenReview");
  w.key("spec").object().field("token", token).end();
  return std::move(w.end()).str();
}

std::string access_review_body(const UserInfo& user, std::string_view verb, std::string_view path) {
  json::Writer w;
  w.object().field("apiVersion", "authorization.k8s.io/v1").field("kind", "SubjectAccessReview");
  w.key("spec").object().field("user", user.name);
  if (!user.uid.empty()) w.field("uid", user.uid);
  w.key("groups").array();
  for (const auto& g : user.groups) w.value(g);
  w.end();
  if (!user.extra.empty()) {
    w.key("extra").object();
    for (const auto& [k, values] : user.extra) {
      w.key(k).array();
      for (const auto& v : values) w.value(v);
      w.end();
    }
    w.end();
  }
  w.key("nonResourceAttributes").object().field("path", path).field("verb", verb).end();
  return std::move(w.end().end()).str();
}

namespace {

namespace dom = simdjson::dom;

std::vector<std::string> strings_of(dom::element e) {
  std::vector<std::string> out;
  dom::array a;
  if (e.get_array().get(a) != simdjson::SUCCESS) return out;
  for (auto v : a) {
    std::string_view s;
    if (v.get_string().get(s) == simdjson::SUCCESS) out.emplace_back(s);
  }
  return out;
}

std::string string_at(dom::object o, std::string_view key) {
  std::string_view s;
  if (o[key].get_string().get(s) != simdjson::SUCCESS) return {};
  return std::string(s);
}

bool bool_at(dom::object o, std::string_view key) {
  bool b = false;
  return o[key].get_bool().get(b) == simdjson::SUCCESS && b;
}

std::optional<dom::object> status_of(dom::parser& parser, std::string_view body) {
  dom::element doc;
  if (parser.parse(body.data(), body.size()).get(doc) != simdjson::SUCCESS) return std::nullopt;
  dom::object status;
  if (doc["status"].get_object().get(status) != simdjson::SUCCESS) return std::nullopt;
  return status;
}

}  // namespace

std::optional<TokenReviewStatus> parse_token_review(std::string_view body) {
  dom::parser parser;
  auto status = status_of(parser, body);
  if (!status) return std::nullopt;
  TokenReviewStatus out{bool_at(*status, "authenticated"), {}, string_at(*status, "error")};
  dom::object user;
  if ((*status)["user"].get_object().get(user) == simdjson::SUCCESS) {
    out.user.name = string_at(user, "username");
    out.user.uid = string_at(user, "uid");
    dom::element groups;
    if (user["groups"].get(groups) == simdjson::SUCCESS) out.user.groups = strings_of(groups);
    dom::object extra;
    if (user["extra"].get_object().get(extra) == simdjson::SUCCESS)
      for (auto [k, v] : extra) out.user.extra.emplace_back(std::string(k), strings_of(v));
  }
  return out;
}

std::optional<AccessReviewStatus> parse_access_review(std::string_view body) {
  dom::parser parser;
  auto status = status_of(parser, body);
  if (!status) return std::nullopt;
  return AccessReviewStatus{bool_at(*status, "allowed"), string_at(*status, "reason")};
}

namespace {

Response status_response(unsigned code, std::string_view reason, std::string_view message) {
  json::Writer w;
  w.object().field("kind", "Status").field("apiVersion", "v1").key("metadata").object().end();
  w.field("status", "Failure").field("message", message).field("reason", reason);
  if (code == 403) w.key("details").object().end();
  w.field("code", static_cast<int>(code)).end();
  return Response{code, "application/json", std::move(w).str() + "\n", {{"X-Content-Type-Options", "nosniff"}}};
}

// The cache key of a token: its SHA-256, so the token itself is kept nowhere.
std::string token_key(std::string_view token) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(token.data(), token.size(), md, &len, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(md), len);
}

std::string decision_key(const UserInfo& u, std::string_view verb, std::string_view path) {
  std::string k = u.name + '\0' + u.uid + '\0' + std::string(verb) + '\0' + std::string(path);
  for (const auto& g : u.groups) k += '\0' + g;
  for (const auto& [name, values] : u.extra) {
    k += '\1' + name;
    for (const auto& v : values) k += '\0' + v;
  }
  return k;
}

}  // namespace

Response unauthorized() { return status_response(401, "Unauthorized", "Unauthorized"); }

Response forbidden(std::string_view user, std::string_view verb, std::string_view path, std::string_view reason) {
  std::string msg;
  json::append_string(msg, user);
  msg = "forbidden: User " + msg + " cannot " + std::string(verb) + " path ";
  json::append_string(msg, path);
  if (!reason.empty()) msg += ": " + std::string(reason);
  return status_response(403, "Forbidden", msg);
}

// --- the guard ----------------------------------------------------------------

DelegatingAuth::DelegatingAuth(kube::Transport& authn, kube::Transport& authz, AuthOptions options)
    : authn_(authn),
      authz_(authz),
      opts_(std::move(options)),
      tokens_(opts_.max_cache_entries),
      decisions_(opts_.max_cache_entries) {}

asio::awaitable<std::optional<Response>> DelegatingAuth::admit(const Request& r) {
  auto token = bearer_token(r.authorization);
  bool open = path_matches(r.path, opts_.always_allow_paths);
  if (!token) {
    if (open) co_return std::nullopt;
    TS_LOG(4, "Refused an unauthenticated request", {"path", r.path});
    co_return unauthorized();
  }
  std::string_view tok = *token;
  Authn who = co_await authenticate(tok);
  if (!who.ok) co_return unauthorized();
  if (open) co_return std::nullopt;
  std::string_view verb = request_verb(r.method);
  for (const auto& g : who.user.groups)
    if (std::find(opts_.always_allow_groups.begin(), opts_.always_allow_groups.end(), g) !=
        opts_.always_allow_groups.end())
      co_return std::nullopt;
  auto decision = co_await authorize(who.user, verb, r.path);
  if (!decision) co_return status_response(500, "InternalError", "Internal Server Error: authorization failed");
  if (decision->allowed) co_return std::nullopt;
  TS_LOG(4, "Refused a request", {"user", who.user.name}, {"verb", verb}, {"path", r.path});
  co_return forbidden(who.user.name, verb, r.path, decision->reason);
}

asio::awaitable<DelegatingAuth::Authn> DelegatingAuth::authenticate(std::string_view token) {
  auto now = TtlCache<Authn>::clock::now();
  std::string key = token_key(token);
  if (const Authn* hit = tokens_.get(key, now)) co_return *hit;
  kube::HttpRequest req;
  req.verb = http::verb::post;
  req.target = "/apis/authentication.k8s.io/v1/tokenreviews";
  req.body = token_review_body(token);
  req.limits.deadline = now + opts_.review_timeout;
  ++token_reviews_;
  auto res = co_await authn_.request(std::move(req));
  std::optional<TokenReviewStatus> review;
  if (res && res->status == 201) review = parse_token_review(res->body);
  if (!review) {
    // Not cached: the next request tries again.
    TS_ERROR("Unable to authenticate the request",
             {"err", res ? "TokenReview answered HTTP " + std::to_string(res->status) : res.error().message});
    co_return Authn{};
  }
  Authn out{review->authenticated, review->user};
  if (!review->authenticated) TS_LOG(4, "A bearer token was not authenticated", {"err", review->error});
  tokens_.put(std::move(key), out, TtlCache<Authn>::clock::now() + opts_.token_ttl, TtlCache<Authn>::clock::now());
  co_return out;
}

asio::awaitable<std::optional<AccessReviewStatus>> DelegatingAuth::authorize(const UserInfo& user,
                                                                             std::string_view verb,
                                                                             std::string_view path) {
  using clock = TtlCache<AccessReviewStatus>::clock;
  std::string key = decision_key(user, verb, path);
  if (const AccessReviewStatus* hit = decisions_.get(key, clock::now())) co_return *hit;
  kube::HttpRequest req;
  req.verb = http::verb::post;
  req.target = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
  req.body = access_review_body(user, verb, path);
  req.limits.deadline = clock::now() + opts_.review_timeout;
  ++access_reviews_;
  auto res = co_await authz_.request(std::move(req));
  std::optional<AccessReviewStatus> review;
  if (res && res->status == 201) review = parse_access_review(res->body);
  if (!review) {
    TS_ERROR("Unable to authorize the request", {"user", user.name}, {"path", path},
             {"err", res ? "SubjectAccessReview answered HTTP " + std::to_string(res->status) : res.error().message});
    co_return std::nullopt;
  }
  auto ttl = review->allowed ? opts_.allow_ttl : opts_.deny_ttl;
  decisions_.put(std::move(key), *review, clock::now() + ttl, clock::now());
  co_return review;
}

}  // namespace toysched::serve
