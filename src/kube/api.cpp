#include "toysched/kube/api.hpp"

#include <boost/throw_exception.hpp>

#include "toysched/json/writer.hpp"

#include <chrono>
#include <cstdio>
#include <stdexcept>

namespace toysched::kube {

namespace asio = boost::asio;
namespace http = boost::beast::http;

void throw_exception_from_error(const ApiError& e, const boost::source_location& loc) {
  boost::throw_exception(std::runtime_error(e.message), loc);
}

std::string url_encode(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

ApiError api_error_from(const HttpResponse& r, std::string_view what) {
  ApiError e;
  e.code = make_error_code(errc::http_status);
  e.http_status = r.status;
  bool json = r.content_type.find("json") != std::string::npos;
  if (json) {
    if (auto st = decode_status(r.body)) e.status = std::move(*st);
  }
  std::string detail;
  if (e.status && !e.status->message.empty()) {
    detail = e.status->message;
  } else {
    detail = r.body.substr(0, 200);
    while (!detail.empty() && (detail.back() == '\n' || detail.back() == '\r')) detail.pop_back();
    for (auto& c : detail)
      if (c == '\n' || c == '\r') c = ' ';
  }
  e.message = std::string(what) + ": HTTP " + std::to_string(r.status) + (detail.empty() ? "" : ": " + detail);
  return e;
}

std::string truncate_note(std::string note) {
  constexpr std::size_t limit = 1024;  // events.k8s.io validation
  if (note.size() <= limit) return note;
  note.resize(limit - 4);
  // Do not cut a UTF-8 sequence in half.
  while (!note.empty() && (static_cast<unsigned char>(note.back()) & 0xC0) == 0x80) note.pop_back();
  if (!note.empty() && (static_cast<unsigned char>(note.back()) & 0x80)) note.pop_back();
  return note + " ...";
}

asio::awaitable<api_result<HttpResponse>> Api::call(HttpRequest req, std::string_view what) {
  auto r = co_await t_.request(std::move(req));
  if (!r) co_return ApiError{r.error().code, 0, std::nullopt, std::string(what) + ": " + r.error().message};
  if (r->status < 200 || r->status > 299) {
    auto e = api_error_from(*r, what);
    e.replayed = r->replayed;
    co_return e;
  }
  co_return std::move(*r);
}

std::string collection_path(std::string_view prefix, std::string_view resource, Scope scope, std::string_view ns) {
  std::string p(prefix);
  if (scope == Scope::namespaced && !ns.empty()) p += "/namespaces/" + url_encode(ns);
  p += '/';
  p += resource;
  return p;
}

template <class T>
asio::awaitable<api_result<List<T>>> Api::list(ListOptions opts) {
  const std::string path = kind_path<T>(opts.ns);
  for (int restarts = 0;; ++restarts) {
    List<T> all;
    std::string cont;
    bool expired = false;
    do {
      std::string target = path + "?limit=" + std::to_string(opts.page_size);
      if (!opts.field_selector.empty()) target += "&fieldSelector=" + url_encode(opts.field_selector);
      if (!opts.label_selector.empty()) target += "&labelSelector=" + url_encode(opts.label_selector);
      if (!cont.empty()) target += "&continue=" + url_encode(cont);
      HttpRequest req;
      req.target = target;
      auto r = co_await call(std::move(req), "list " + path);
      if (!r) {
        if (r.error().is_expired() && !cont.empty() && restarts < 5) {
          expired = true;  // the continue token outlived a compaction: start over
          break;
        }
        co_return r.error();
      }
      auto page = decoder_.list<T>(r->body);
      if (!page)
        co_return ApiError{page.error(), r->status, std::nullopt, "list " + path + ": " + page.error().message()};
      for (auto& item : page->items) all.items.push_back(std::move(item));
      for (auto& bad : page->undecodable) all.undecodable.push_back(std::move(bad));
      all.resource_version = page->resource_version;
      cont = page->continue_token;
    } while (!cont.empty());
    if (!expired) co_return all;
  }
}

#define TOYSCHED_LIST(Type, ...) template asio::awaitable<api_result<List<Type>>> Api::list<Type>(ListOptions);
TOYSCHED_KINDS(TOYSCHED_LIST)
#undef TOYSCHED_LIST

namespace {
std::string pod_path(std::string_view ns, std::string_view name) {
  return "/api/v1/namespaces/" + url_encode(ns) + "/pods/" + url_encode(name);
}
std::string now_micro() { return format_micro_time(std::chrono::system_clock::now()); }
}  // namespace

asio::awaitable<api_result<void>> Api::bind(std::string_view ns, std::string_view name, std::string_view uid,
                                            std::string_view node, RequestLimits limits, RequestTrace* trace) {
  json::Writer w;
  w.object().field("apiVersion", "v1").field("kind", "Binding");
  w.key("metadata").object().field("name", name).field("namespace", ns).field("uid", uid).end();
  w.key("target").object().field("kind", "Node").field("name", node).end();
  w.end();
  HttpRequest req;
  req.verb = http::verb::post;
  req.target = pod_path(ns, name) + "/binding";
  req.body = std::move(w).str();
  req.limits = std::move(limits);
  req.trace = trace;
  auto r = co_await call(std::move(req), "bind " + std::string(ns) + "/" + std::string(name));
  if (!r) co_return r.error();
  co_return api_result<void>{};
}

asio::awaitable<api_result<Pod>> Api::get_pod(std::string_view ns, std::string_view name, RequestLimits limits) {
  HttpRequest req;
  req.target = pod_path(ns, name);
  req.limits = std::move(limits);
  auto r = co_await call(std::move(req), "get pod " + std::string(ns) + "/" + std::string(name));
  if (!r) co_return r.error();
  auto p = decoder_.pod(r->body);
  if (!p) co_return ApiError{p.error(), r->status, std::nullopt, "decode pod: " + p.error().message()};
  co_return std::move(*p);
}

asio::awaitable<api_result<void>> Api::patch_pod_status(std::string_view ns, std::string_view name, std::string patch,
                                                        RequestLimits limits) {
  HttpRequest req;
  req.verb = http::verb::patch;
  req.target = pod_path(ns, name) + "/status";
  req.content_type = "application/strategic-merge-patch+json";
  req.body = std::move(patch);
  req.limits = std::move(limits);
  auto r = co_await call(std::move(req), "patch status of " + std::string(ns) + "/" + std::string(name));
  if (!r) co_return r.error();
  co_return api_result<void>{};
}

template <class T>
asio::awaitable<api_result<T>> Api::merge_patch(std::string target, std::string patch, RequestLimits limits,
                                                std::string what) {
  HttpRequest req;
  req.verb = http::verb::patch;
  req.target = std::move(target);
  req.content_type = "application/merge-patch+json";
  req.body = std::move(patch);
  req.limits = std::move(limits);
  auto r = co_await call(std::move(req), what);
  if (!r) co_return r.error();
  auto obj = decoder_.object<T>(r->body);
  if (!obj) co_return ApiError{obj.error(), r->status, std::nullopt, "decode " + what + ": " + obj.error().message()};
  co_return std::move(*obj);
}

asio::awaitable<api_result<PersistentVolume>> Api::patch_volume(std::string_view name, std::string patch,
                                                                RequestLimits limits) {
  return merge_patch<PersistentVolume>("/api/v1/persistentvolumes/" + std::string(name), std::move(patch),
                                       std::move(limits), "patch persistentvolume " + std::string(name));
}

asio::awaitable<api_result<PersistentVolumeClaim>> Api::patch_claim(std::string_view ns, std::string_view name,
                                                                    std::string patch, RequestLimits limits) {
  return merge_patch<PersistentVolumeClaim>(
      "/api/v1/namespaces/" + std::string(ns) + "/persistentvolumeclaims/" + std::string(name), std::move(patch),
      std::move(limits), "patch persistentvolumeclaim " + std::string(ns) + "/" + std::string(name));
}

asio::awaitable<api_result<void>> Api::delete_pod(std::string_view ns, std::string_view name, std::string_view uid,
                                                  RequestLimits limits) {
  json::Writer w;
  w.object().field("kind", "DeleteOptions").field("apiVersion", "v1");
  w.key("preconditions").object().field("uid", uid).end();
  w.end();
  HttpRequest req;
  req.verb = http::verb::delete_;
  req.target = pod_path(ns, name);
  req.body = std::move(w).str();
  req.limits = std::move(limits);
  auto r = co_await call(std::move(req), "delete pod " + std::string(ns) + "/" + std::string(name));
  if (!r) co_return r.error();
  co_return api_result<void>{};
}

namespace {
// An ObjectReference to a Pod: what regarding, involvedObject and related
// hold, in both Event APIs.
void pod_reference(json::Writer& w, std::string_view key, std::string_view ns, std::string_view name,
                   std::string_view uid) {
  w.key(key).object().field("kind", "Pod").field("apiVersion", "v1");
  w.field("namespace", ns).field("name", name).field("uid", uid).end();
}
}  // namespace

asio::awaitable<api_result<void>> Api::create_event(const Event& e, RequestLimits limits) {
  auto nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%llx", static_cast<unsigned long long>(nanos));
  std::string name = e.pod_name + suffix;
  std::string note = truncate_note(e.note);
  HttpRequest req;
  req.verb = http::verb::post;
  req.limits = std::move(limits);
  if (!core_events_) {
    json::Writer w;
    w.object().field("apiVersion", "events.k8s.io/v1").field("kind", "Event");
    w.key("metadata").object().field("name", name).field("namespace", e.ns).end();
    w.field("eventTime", now_micro());
    w.field("reportingController", e.reporting_controller).field("reportingInstance", e.reporting_instance);
    w.field("action", e.action).field("reason", e.reason);
    pod_reference(w, "regarding", e.ns, e.pod_name, e.pod_uid);
    if (!e.related_name.empty()) pod_reference(w, "related", e.related_ns, e.related_name, e.related_uid);
    w.field("note", note).field("type", e.type).end();
    req.target = "/apis/events.k8s.io/v1/namespaces/" + url_encode(e.ns) + "/events";
    req.body = std::move(w).str();
    auto r = co_await call(req, "create event");
    if (r) co_return api_result<void>{};
    if (!r.error().is_not_found() || r.error().status) co_return r.error();
    core_events_ = true;  // a 404 without a Status: the group is not served
  }
  std::string ts = format_micro_time(std::chrono::system_clock::now());
  ts = ts.substr(0, 19) + "Z";  // core/v1 timestamps are whole seconds
  json::Writer w;
  w.object().field("apiVersion", "v1").field("kind", "Event");
  w.key("metadata").object().field("name", name).field("namespace", e.ns).end();
  pod_reference(w, "involvedObject", e.ns, e.pod_name, e.pod_uid);
  if (!e.related_name.empty()) pod_reference(w, "related", e.related_ns, e.related_name, e.related_uid);
  w.field("reason", e.reason).field("message", note).field("type", e.type);
  w.key("source").object().field("component", e.reporting_controller).end();
  w.field("firstTimestamp", ts).field("lastTimestamp", ts).field("count", 1);
  w.field("reportingComponent", e.reporting_controller).field("reportingInstance", e.reporting_instance).end();
  req.target = "/api/v1/namespaces/" + url_encode(e.ns) + "/events";
  req.body = std::move(w).str();
  auto r = co_await call(std::move(req), "create event");
  if (!r) co_return r.error();
  co_return api_result<void>{};
}

namespace {
std::string lease_path(std::string_view ns, std::string_view name = {}) {
  std::string p = "/apis/coordination.k8s.io/v1/namespaces/" + url_encode(ns) + "/leases";
  if (!name.empty()) p += "/" + url_encode(name);
  return p;
}
}  // namespace

// One lease request; the answer is the Lease as the server now holds it.
asio::awaitable<api_result<Lease>> Api::lease_call(HttpRequest req, std::string what) {
  auto r = co_await call(std::move(req), what);
  if (!r) co_return r.error();
  auto l = decoder_.lease(r->body);
  if (!l) co_return ApiError{l.error(), r->status, std::nullopt, "decode lease: " + l.error().message()};
  co_return std::move(*l);
}

asio::awaitable<api_result<Lease>> Api::get_lease(std::string_view ns, std::string_view name, RequestLimits limits) {
  HttpRequest req;
  req.target = lease_path(ns, name);
  req.limits = std::move(limits);
  co_return co_await lease_call(std::move(req), "get lease " + std::string(ns) + "/" + std::string(name));
}

asio::awaitable<api_result<Lease>> Api::create_lease(const Lease& lease, RequestLimits limits) {
  HttpRequest req;
  req.verb = http::verb::post;
  req.target = lease_path(lease.ns);
  req.body = encode_lease(lease);
  req.limits = std::move(limits);
  co_return co_await lease_call(std::move(req), "create lease " + lease.ns + "/" + lease.name);
}

asio::awaitable<api_result<Lease>> Api::update_lease(const Lease& lease, RequestLimits limits) {
  HttpRequest req;
  req.verb = http::verb::put;
  req.target = lease_path(lease.ns, lease.name);
  req.body = encode_lease(lease);
  req.limits = std::move(limits);
  co_return co_await lease_call(std::move(req), "update lease " + lease.ns + "/" + lease.name);
}

}  // namespace toysched::kube
