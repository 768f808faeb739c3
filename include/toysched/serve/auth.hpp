// Delegated authentication and authorization for the secure port, as
// kube-scheduler does it with k8s.io/apiserver's delegating options: the
// request's bearer token goes to the API server in a TokenReview, the user it
// names and the request's path and verb in a SubjectAccessReview
// (non-resource attributes). Answers are cached for 10 s each, as upstream's
// defaults; the reviews are coroutines on the loop and never hold up
// scheduling (they also use a client of their own, so they never take the
// binds' rate-limit tokens).
//
// Where we differ from upstream: a request without a token is refused with
// 401 instead of being reviewed as system:anonymous (which RBAC refuses
// with 403 anyway); that also keeps unauthenticated clients from making us
// send reviews. Client certificates are not accepted (no --client-ca-file).
// Tokens are never logged, and the cache keys are their SHA-256.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "toysched/serve/http_server.hpp"

namespace toysched::kube {
class Transport;
}

namespace toysched::serve {

struct AuthOptions {
  std::chrono::milliseconds token_ttl{10'000};  // --authentication-token-webhook-cache-ttl
  std::chrono::milliseconds allow_ttl{10'000};  // --authorization-webhook-cache-authorized-ttl
  std::chrono::milliseconds deny_ttl{10'000};   // --authorization-webhook-cache-unauthorized-ttl
  // Open to anyone, token or not (a token that is sent must still be good).
  std::vector<std::string> always_allow_paths{"/healthz", "/readyz", "/livez"};
  // Members may do anything without a SubjectAccessReview.
  std::vector<std::string> always_allow_groups{"system:masters"};
  std::chrono::milliseconds review_timeout{10'000};
  std::size_t max_cache_entries = 1024;
};

struct UserInfo {
  std::string name, uid;
  std::vector<std::string> groups;
  std::vector<std::pair<std::string, std::vector<std::string>>> extra;
};

// --- the pure parts, exposed for tests ---------------------------------------

// The token from "Bearer <token>" (scheme case-insensitive); nullopt when
// the header holds no bearer token.
std::optional<std::string_view> bearer_token(std::string_view authorization);
// The verb a non-resource request is authorized for: get, update, create...
std::string_view request_verb(std::string_view method);
// "/healthz" matches "/healthz"; "/debug/*" matches every path under /debug/.
bool path_matches(std::string_view path, const std::vector<std::string>& patterns);

std::string token_review_body(std::string_view token);
std::string access_review_body(const UserInfo& user, std::string_view verb, std::string_view path);
struct TokenReviewStatus {
  bool authenticated = false;
  UserInfo user;
  std::string error;
};
struct AccessReviewStatus {
  bool allowed = false;
  std::string reason;
};
// nullopt: the body is not a review answer.
std::optional<TokenReviewStatus> parse_token_review(std::string_view body);
std::optional<AccessReviewStatus> parse_access_review(std::string_view body);

// Answers kept for a while, by key. Bounded: when full, expired entries go,
// then everything (a flood of distinct keys must not grow memory).
template <class V>
class TtlCache {
 public:
  using clock = std::chrono::steady_clock;
  explicit TtlCache(std::size_t max_entries) : max_(max_entries) {}
  const V* get(const std::string& key, clock::time_point now) const {
    auto it = entries_.find(key);
    return it == entries_.end() || it->second.first <= now ? nullptr : &it->second.second;
  }
  void put(std::string key, V value, clock::time_point expires, clock::time_point now) {
    if (entries_.size() >= max_) std::erase_if(entries_, [&](const auto& e) { return e.second.first <= now; });
    if (entries_.size() >= max_) entries_.clear();
    entries_.insert_or_assign(std::move(key), std::pair{expires, std::move(value)});
  }
  std::size_t size() const noexcept { return entries_.size(); }

 private:
  std::size_t max_;
  std::map<std::string, std::pair<clock::time_point, V>, std::less<>> entries_;
};

// The Guard of the secure port.
class DelegatingAuth final : public Guard {
 public:
  // `authn` sends the TokenReviews, `authz` the SubjectAccessReviews (the
  // same transport unless --authentication/--authorization-kubeconfig
  // differ); both must outlive this.
  DelegatingAuth(kube::Transport& authn, kube::Transport& authz, AuthOptions options = {});
  boost::asio::awaitable<std::optional<Response>> admit(const Request& r) override;

  // Reviews sent so far (tests check the cache spares them).
  std::size_t token_reviews() const noexcept { return token_reviews_; }
  std::size_t access_reviews() const noexcept { return access_reviews_; }

 private:
  struct Authn {
    bool ok = false;
    UserInfo user;
  };
  boost::asio::awaitable<Authn> authenticate(std::string_view token);
  // true, false, or nullopt when the review could not be made (500).
  boost::asio::awaitable<std::optional<AccessReviewStatus>> authorize(const UserInfo& user, std::string_view verb,
                                                                      std::string_view path);

  kube::Transport& authn_;
  kube::Transport& authz_;
  AuthOptions opts_;
  TtlCache<Authn> tokens_;
  TtlCache<AccessReviewStatus> decisions_;
  std::size_t token_reviews_ = 0, access_reviews_ = 0;
};

// The JSON Status bodies the API server sends with 401 and 403.
Response unauthorized();
Response forbidden(std::string_view user, std::string_view verb, std::string_view path, std::string_view reason);

}  // namespace toysched::serve
