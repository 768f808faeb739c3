#include "pod_server.hpp"

#include <stdexcept>

#include "toysched/json/writer.hpp"

namespace toysched::testing {

namespace http = boost::beast::http;

namespace {

std::uint64_t rv_from(const std::string& target) {
  auto at = target.find("resourceVersion=");
  if (at == std::string::npos) return 0;
  return std::stoull(target.substr(at + 16));
}

}  // namespace

std::string string_after(const std::string& body, const std::string& key, std::size_t from) {
  auto at = body.find(key, from);
  if (at == std::string::npos) return {};
  auto open = body.find('"', at + key.size());
  auto close = body.find('"', open + 1);
  if (open == std::string::npos || close == std::string::npos) return {};
  return body.substr(open + 1, close - open - 1);
}

std::string PodServer::pod_json(const ServerPod& p) {
  json::Writer w;
  w.object().field("kind", "Pod").field("apiVersion", "v1");
  w.key("metadata").object().field("name", p.name).field("namespace", p.ns).field("uid", p.uid);
  w.field("resourceVersion", std::to_string(p.rv)).end();
  w.key("spec").object().field("schedulerName", "toy-scheduler");
  if (!p.node.empty()) w.field("nodeName", p.node);
  w.key("containers").array().object().field("name", "c").field("image", "pause").end().end().end();
  w.key("status").object().field("phase", p.node.empty() ? "Pending" : "Running");
  if (!p.nominated.empty()) w.field("nominatedNodeName", p.nominated);
  w.end();
  return std::move(w.end()).str();
}

ServerPod& PodServer::add(const std::string& ns, const std::string& name, const std::string& uid,
                          const std::string& node) {
  ServerPod& p = pods_[ns + "/" + name];
  p = ServerPod{ns, name, uid, node, ++rv_};
  record("ADDED", p);
  return p;
}

ServerPod* PodServer::find(const std::string& key) {
  auto it = pods_.find(key);
  return it == pods_.end() ? nullptr : &it->second;
}

void PodServer::modify(const std::string& key) {
  ServerPod& p = pods_.at(key);
  p.rv = ++rv_;
  record("MODIFIED", p);
}

void PodServer::remove(const std::string& key) {
  ServerPod p = pods_.at(key);
  pods_.erase(key);
  p.rv = ++rv_;
  record("DELETED", p);
}

void PodServer::record(const std::string& type, const ServerPod& p) { history_.push_back({p.rv, type, pod_json(p)}); }

Reply PodServer::list() const {
  std::string items;
  for (const auto& [key, p] : pods_) items += (items.empty() ? "" : ",") + pod_json(p);
  return Reply{200, R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")" + std::to_string(rv_) +
                        R"("},"items":[)" + items + "]}"};
}

StreamScript PodServer::watch(const std::string& target, StreamScript::End end) const {
  const std::uint64_t from = rv_from(target);
  StreamScript s;
  s.end = end;
  if (from < compacted_) {
    s.events.push_back(R"({"type":"ERROR","object":)" +
                       status_body(410, "Expired", "too old resource version: " + std::to_string(from)) + "}");
    return s;
  }
  for (const Event& e : history_)
    if (e.rv > from) s.events.push_back(R"({"type":")" + e.type + R"(","object":)" + e.object + "}");
  return s;
}

std::string PodServer::key_of(const std::string& target) {
  const std::string prefix = "/api/v1/namespaces/";
  if (target.rfind(prefix, 0) != 0) throw std::logic_error("not a pod path: " + target);
  auto ns_end = target.find('/', prefix.size());
  auto name_at = ns_end + std::string("/pods/").size();
  auto name_end = target.find_first_of("/?", name_at);
  return target.substr(prefix.size(), ns_end - prefix.size()) + "/" + target.substr(name_at, name_end - name_at);
}

Reply PodServer::bind(const kube::HttpRequest& req) {
  ServerPod* p = find(key_of(req.target));
  if (p == nullptr) return status_reply(404, "NotFound", "pods not found");
  if (string_after(req.body, "\"uid\":") != p->uid)
    return status_reply(409, "Conflict", "Precondition failed: UID in precondition does not match");
  if (!p->node.empty())
    return status_reply(409, "Conflict", "pod " + p->name + " is already assigned to node " + p->node);
  p->node = string_after(req.body, "\"name\":", req.body.find("\"target\":"));
  ++p->bindings;
  modify(p->ns + "/" + p->name);
  return Reply{201, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201})"};
}

Reply PodServer::get(const kube::HttpRequest& req) const {
  auto it = pods_.find(key_of(req.target));
  if (it == pods_.end()) return status_reply(404, "NotFound", "pods not found");
  return Reply{200, pod_json(it->second)};
}

Reply PodServer::patch_status(const kube::HttpRequest& req) {
  ServerPod* p = find(key_of(req.target));
  if (p == nullptr) return status_reply(404, "NotFound", "pods not found");
  if (string_after(req.body, "\"uid\":") != p->uid) {
    return Reply{422, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                      R"("message":"metadata.uid: field is immutable","reason":"Invalid",)"
                      R"("details":{"causes":[{"reason":"FieldValueInvalid","field":"metadata.uid"}]},"code":422})"};
  }
  ++p->patches;
  if (!p->node.empty() && req.body.find(R"("type":"PodScheduled","status":"False")") != std::string::npos)
    ++stale_false_patches_;
  if (req.body.find("DisruptionTarget") != std::string::npos) p->disrupted = true;
  if (req.body.find(R"("nominatedNodeName":null)") != std::string::npos) p->nominated.clear();
  if (req.body.find(R"("nominatedNodeName":")") != std::string::npos)
    p->nominated = string_after(req.body, "\"nominatedNodeName\":");
  modify(p->ns + "/" + p->name);
  return Reply{200, pod_json(*p)};
}

Reply PodServer::remove_with_precondition(const kube::HttpRequest& req) {
  const std::string key = key_of(req.target);
  ServerPod* p = find(key);
  if (p == nullptr) return status_reply(404, "NotFound", "pods not found");
  if (string_after(req.body, "\"uid\":") != p->uid)
    return status_reply(409, "Conflict", "Precondition failed: UID in precondition does not match");
  std::string json = pod_json(*p);
  if (!p->disrupted) ++deleted_undisrupted_;
  remove(key);
  return Reply{200, json};
}

void PodServer::serve_on(ScriptedTransport& t) {
  t.on(http::verb::get, "/api/v1/pods", [this](const kube::HttpRequest&) { return list(); });
  t.on_watch("/api/v1/pods", [this](const std::string& target) { return watch(target, StreamScript::End::park); });
  t.on(http::verb::post, "/api/v1/namespaces/*/pods/*/binding", [this](const kube::HttpRequest& r) { return bind(r); });
  t.on(http::verb::get, "/api/v1/namespaces/*/pods/*", [this](const kube::HttpRequest& r) { return get(r); });
  t.on(http::verb::patch, "/api/v1/namespaces/*/pods/*/status",
       [this](const kube::HttpRequest& r) { return patch_status(r); });
  t.on(http::verb::delete_, "/api/v1/namespaces/*/pods/*",
       [this](const kube::HttpRequest& r) { return remove_with_precondition(r); });
}

}  // namespace toysched::testing
