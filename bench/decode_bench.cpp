// Decoding a PodList of 10 000 pods: our simdjson on-demand Decoder against
// nlohmann-json (DOM, then the same fields pulled into the same kube::Pod),
// in one run, interleaved. Prints figures, never decides pass/fail.
//
// The list is generated here, deterministically, shaped like what the API
// server sends for a busy namespace set (Deployment pods with the projected
// service-account volume, probes, env, the default tolerations, conditions
// and container statuses; no managedFields, as a list without them).
//
//   decode-bench [pods=10000] [runs=7]
#include <simdjson.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "toysched/kube/decode.hpp"
#include "toysched/kube/quantity.hpp"

using namespace toysched::kube;
using Clock = std::chrono::steady_clock;

namespace {

// --- the list ----------------------------------------------------------

struct Gen {
  std::mt19937_64 rng{20260101};  // fixed: the same bytes on every run
  int pick(int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); }
  bool chance(int percent) { return pick(100) < percent; }
  std::string hex(int n) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    for (int i = 0; i < n; ++i) s += digits[pick(16)];
    return s;
  }
  std::string uid() { return hex(8) + "-" + hex(4) + "-4" + hex(3) + "-a" + hex(3) + "-" + hex(12); }
  std::string time() {
    char b[32];
    std::snprintf(b, sizeof b, "2026-01-%02dT%02d:%02d:%02dZ", 1 + pick(28), pick(24), pick(60), pick(60));
    return b;
  }
};

const char* const kCpu[] = {"50m", "100m", "250m", "500m", "1", "2", "1500m"};
const char* const kMem[] = {"64Mi", "128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "1500M"};

std::string container(Gen& g, const std::string& name, const std::string& image, const std::string& sa_vol,
                      bool host_port) {
  const int c = g.pick(7), m = g.pick(7);
  std::string s =
      R"({"name":")" + name + R"(","image":")" + image + R"(","ports":[{"name":"http","containerPort":8080,)";
  if (host_port) s += R"("hostPort":)" + std::to_string(30000 + g.pick(2000)) + ",";
  s += R"("protocol":"TCP"}],"env":[{"name":"LOG_LEVEL","value":"info"},{"name":"POD_NAME","valueFrom":{"fieldRef":)"
       R"({"apiVersion":"v1","fieldPath":"metadata.name"}}},{"name":"GOMAXPROCS","valueFrom":{"resourceFieldRef":)"
       R"({"containerName":")" +
       name + R"(","resource":"limits.cpu","divisor":"0"}}}],"resources":{)";
  if (g.chance(70))
    s += std::string(R"("limits":{"cpu":")") + kCpu[std::min(c + 1, 6)] + R"(","memory":")" + kMem[m] + R"("},)";
  s += std::string(R"("requests":{"cpu":")") + kCpu[c] + R"(","memory":")" + kMem[m] + R"("}},)";
  s += R"("volumeMounts":[{"name":")" + sa_vol +
       R"(","readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],)"
       R"("livenessProbe":{"httpGet":{"path":"/healthz","port":8080,"scheme":"HTTP"},"timeoutSeconds":1,)"
       R"("periodSeconds":10,"successThreshold":1,"failureThreshold":3},"readinessProbe":{"httpGet":)"
       R"({"path":"/ready","port":8080,"scheme":"HTTP"},"timeoutSeconds":1,"periodSeconds":5,"successThreshold":1,)"
       R"("failureThreshold":3},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",)"
       R"("imagePullPolicy":"IfNotPresent"})";
  return s;
}

std::string condition(const char* type, const char* status, const std::string& at) {
  return std::string(R"({"type":")") + type + R"(","status":")" + status +
         R"(","lastProbeTime":null,"lastTransitionTime":")" + at + R"("})";
}

std::string pod(Gen& g, int i) {
  const int app = g.pick(400);
  const std::string ns = "team-" + std::to_string(app % 40);
  const std::string deploy = "svc-" + std::to_string(app);
  const std::string hash = g.hex(10);
  const std::string name = deploy + "-" + hash + "-" + g.hex(5);
  const std::string sa_vol = "kube-api-access-" + g.hex(5);
  const std::string created = g.time();
  const bool bound = g.chance(85);
  const std::string node = "node-" + std::to_string(g.pick(500));
  const std::string image = "registry.example.com/" + ns + "/" + deploy + ":1." + std::to_string(g.pick(20)) + ".0";

  std::string s = R"({"metadata":{"name":")" + name + R"(","generateName":")" + deploy + "-" + hash +
                  R"(-","namespace":")" + ns + R"(","uid":")" + g.uid() + R"(","resourceVersion":")" +
                  std::to_string(100000 + i * 3) + R"(","creationTimestamp":")" + created +
                  R"(","labels":{"app.kubernetes.io/name":")" + deploy + R"(","app.kubernetes.io/part-of":")" + ns +
                  R"(","pod-template-hash":")" + hash +
                  R"(","tier":"backend"},"annotations":{"kubectl.kubernetes.io/restartedAt":")" + created +
                  R"(","prometheus.io/scrape":"true","prometheus.io/port":"9090"},"ownerReferences":[{"apiVersion":)"
                  R"("apps/v1","kind":"ReplicaSet","name":")" +
                  deploy + "-" + hash + R"(","uid":")" + g.uid() +
                  R"(","controller":true,"blockOwnerDeletion":true}]},"spec":{"volumes":[{"name":")" + sa_vol +
                  R"(","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},)"
                  R"({"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},)"
                  R"({"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1","fieldPath":)"
                  R"("metadata.namespace"}}]}}],"defaultMode":420}}],)";
  if (g.chance(10)) {
    s += R"("initContainers":[)" + container(g, "migrate", image, sa_vol, false) + "],";
  }
  s += R"("containers":[)" + container(g, "app", image, sa_vol, g.chance(2));
  if (g.chance(30)) s += "," + container(g, "proxy", "registry.example.com/mesh/proxy:2.3.1", sa_vol, false);
  s += R"(],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",)";
  if (g.chance(20)) s += R"("nodeSelector":{"kubernetes.io/os":"linux","pool":"general"},)";
  s += R"("serviceAccountName":"default","serviceAccount":"default",)";
  if (bound) s += R"("nodeName":")" + node + R"(",)";
  s += R"("securityContext":{},)";
  if (g.chance(25)) {
    s +=
        R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":)"
        R"([{"matchExpressions":[{"key":"topology.kubernetes.io/zone","operator":"In","values":["zone-a","zone-b"]}]}]},)"
        R"("preferredDuringSchedulingIgnoredDuringExecution":[{"weight":50,"preference":{"matchExpressions":)"
        R"([{"key":"node.kubernetes.io/instance-type","operator":"In","values":["m5.large","m5.xlarge"]}]}}]},)"
        R"("podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100,"podAffinityTerm":)"
        R"({"labelSelector":{"matchLabels":{"app.kubernetes.io/name":")" +
        deploy + R"("}},"topologyKey":"kubernetes.io/hostname"}}]}},)";
  }
  s += R"("schedulerName":"default-scheduler","tolerations":[)";
  if (g.chance(10)) s += R"({"key":"dedicated","operator":"Equal","value":"batch","effect":"NoSchedule"},)";
  s += R"({"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},)"
       R"({"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],)"
       R"("priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},"status":{)";
  if (!bound) {
    s += R"("phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","lastProbeTime":null,)"
         R"("lastTransitionTime":")" +
         created +
         R"(","reason":"Unschedulable","message":"0/500 nodes are )"
         R"(available: 500 Insufficient cpu. preemption: 0/500 nodes are available: 500 No preemption victims )"
         R"(found for incoming pod."}],"qosClass":"Burstable"}})";
    return s;
  }
  const std::string ip = "10.244." + std::to_string(g.pick(256)) + "." + std::to_string(g.pick(256));
  const std::string host = "10.0." + std::to_string(g.pick(2)) + "." + std::to_string(g.pick(256));
  s += R"("phase":"Running","conditions":[)" + condition("PodReadyToStartContainers", "True", created) + "," +
       condition("Initialized", "True", created) + "," + condition("Ready", "True", created) + "," +
       condition("ContainersReady", "True", created) + "," + condition("PodScheduled", "True", created) +
       R"(],"hostIP":")" + host + R"(","hostIPs":[{"ip":")" + host + R"("}],"podIP":")" + ip +
       R"(","podIPs":[{"ip":")" + ip + R"("}],"startTime":")" + created +
       R"(","containerStatuses":[{"name":"app",)"
       R"("state":{"running":{"startedAt":")" +
       created +
       R"("}},"lastState":{},"ready":true,"restartCount":0,)"
       R"("image":")" +
       image + R"(","imageID":")" + image + "@sha256:" + g.hex(64) + R"(","containerID":"containerd://)" + g.hex(64) +
       R"(","started":true}],"qosClass":"Burstable"}})";
  return s;
}

std::string pod_list_json(int n) {
  Gen g;
  std::string s = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"987654"},"items":[)";
  for (int i = 0; i < n; ++i) {
    if (i) s += ',';
    s += pod(g, i);
  }
  s += "]}";
  return s;
}

// --- nlohmann-json into the same kube::Pod ------------------------------
// The same fields and the same rules as decode_pod.cpp (limits default
// requests; max of app + sidecars vs each init container; overhead), so
// both sides produce equal objects; checked below.

using njson = nlohmann::json;

std::string str(const njson& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

struct ResList {
  Resources r;
  bool cpu = false, mem = false, eph = false;
};

ResList resources(const njson& o) {
  ResList out;
  if (!o.is_object()) return out;
  for (auto& [name, v] : o.items()) {
    const std::string q = v.is_string() ? v.get<std::string>() : v.dump();
    auto parsed = name == "cpu" ? parse_quantity_milli(q) : parse_quantity_value(q);
    if (!parsed) throw std::runtime_error("bad quantity " + q);
    if (name == "cpu")
      out.r.milli_cpu = *parsed, out.cpu = true;
    else if (name == "memory")
      out.r.memory = *parsed, out.mem = true;
    else if (name == "ephemeral-storage")
      out.r.ephemeral_storage = *parsed, out.eph = true;
    else if (name == "pods")
      out.r.pods = *parsed;
    else
      out.r.extended.emplace_back(name, *parsed);  // items() walks keys sorted
  }
  return out;
}

Resources effective(const njson& c) {
  ResList req, lim;
  if (auto it = c.find("resources"); it != c.end() && it->is_object()) {
    if (auto r = it->find("requests"); r != it->end()) req = resources(*r);
    if (auto l = it->find("limits"); l != it->end()) lim = resources(*l);
  }
  Resources out = req.r;
  if (!req.cpu && lim.cpu) out.milli_cpu = lim.r.milli_cpu;
  if (!req.mem && lim.mem) out.memory = lim.r.memory;
  if (!req.eph && lim.eph) out.ephemeral_storage = lim.r.ephemeral_storage;
  return out;  // extended resources: none in this list
}

void add(Resources& a, const Resources& b) {
  a.milli_cpu += b.milli_cpu, a.memory += b.memory, a.ephemeral_storage += b.ephemeral_storage;
}
void at_least(Resources& a, const Resources& b) {
  a.milli_cpu = std::max(a.milli_cpu, b.milli_cpu), a.memory = std::max(a.memory, b.memory);
  a.ephemeral_storage = std::max(a.ephemeral_storage, b.ephemeral_storage);
}

TaintEffect effect(const std::string& s) {
  if (s.empty()) return TaintEffect::all;
  if (s == "NoSchedule") return TaintEffect::no_schedule;
  if (s == "PreferNoSchedule") return TaintEffect::prefer_no_schedule;
  if (s == "NoExecute") return TaintEffect::no_execute;
  return TaintEffect::unknown;
}

SelectorOp selector_op(const std::string& s) {
  static const std::pair<const char*, SelectorOp> ops[] = {
      {"In", SelectorOp::in},         {"NotIn", SelectorOp::not_in},
      {"Exists", SelectorOp::exists}, {"DoesNotExist", SelectorOp::does_not_exist},
      {"Gt", SelectorOp::gt},         {"Lt", SelectorOp::lt}};
  for (auto& [n, op] : ops)
    if (s == n) return op;
  return SelectorOp::unknown;
}

NodeSelectorTerm term(const njson& t) {
  NodeSelectorTerm out;
  auto reqs = [&](const char* key, std::vector<NodeSelectorRequirement>& into) {
    if (auto it = t.find(key); it != t.end() && it->is_array())
      for (auto& e : *it) {
        auto& r = into.emplace_back();
        r.key = str(e, "key");
        r.op = selector_op(str(e, "operator"));
        if (auto v = e.find("values"); v != e.end() && v->is_array())
          for (auto& x : *v) r.values.push_back(x.get<std::string>());
      }
  };
  reqs("matchExpressions", out.match_expressions);
  reqs("matchFields", out.match_fields);
  return out;
}

Pod to_pod(const njson& j) {
  Pod p;
  const auto& meta = j.at("metadata");
  p.ns = str(meta, "namespace"), p.name = str(meta, "name"), p.uid = str(meta, "uid");
  p.resource_version = str(meta, "resourceVersion");
  p.deleting = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
  if (auto t = str(meta, "creationTimestamp"); !t.empty()) p.creation_timestamp = parse_micro_time(t);
  const auto& spec = j.at("spec");
  p.scheduler_name = str(spec, "schedulerName"), p.node_name = str(spec, "nodeName");
  if (auto it = spec.find("priority"); it != spec.end() && it->is_number()) p.priority = it->get<std::int32_t>();
  if (auto it = spec.find("nodeSelector"); it != spec.end() && it->is_object())
    for (auto& [k, v] : it->items()) p.node_selector.emplace_back(k, v.get<std::string>());
  p.scheduling_gated = spec.contains("schedulingGates") && !spec["schedulingGates"].empty();
  p.preempt_never = str(spec, "preemptionPolicy") == "Never";
  if (auto it = spec.find("tolerations"); it != spec.end())
    for (auto& t : *it) {
      auto& tol = p.tolerations.emplace_back();
      tol.key = str(t, "key"), tol.value = str(t, "value");
      const auto op = str(t, "operator");
      tol.op = op.empty() || op == "Equal" ? TolerationOp::equal
               : op == "Exists"            ? TolerationOp::exists
                                           : TolerationOp::unknown;
      tol.effect = effect(str(t, "effect"));
      if (auto s = t.find("tolerationSeconds"); s != t.end() && s->is_number())
        tol.toleration_seconds = s->get<std::int64_t>();
    }
  if (auto a = spec.find("affinity"); a != spec.end() && a->contains("nodeAffinity")) {
    const auto& na = (*a)["nodeAffinity"];
    if (auto r = na.find("requiredDuringSchedulingIgnoredDuringExecution"); r != na.end())
      for (auto& t : r->at("nodeSelectorTerms")) p.required_affinity.push_back(term(t));
    if (auto pr = na.find("preferredDuringSchedulingIgnoredDuringExecution"); pr != na.end())
      for (auto& t : *pr)
        p.preferred_affinity.push_back({t.at("weight").get<std::int32_t>(), term(t.at("preference"))});
  }
  Resources total, sidecars, init_peak;
  auto ports = [&](const njson& c) {
    if (auto it = c.find("ports"); it != c.end())
      for (auto& pt : *it)
        if (auto hp = pt.find("hostPort"); hp != pt.end() && hp->get<int>() > 0) {
          auto proto = str(pt, "protocol"), ip = str(pt, "hostIP");
          p.host_ports.push_back({hp->get<std::int32_t>(), proto.empty() ? "TCP" : proto, ip.empty() ? "0.0.0.0" : ip});
        }
  };
  if (auto it = spec.find("containers"); it != spec.end())
    for (auto& c : *it) add(total, effective(c)), ports(c);
  if (auto it = spec.find("initContainers"); it != spec.end())
    for (auto& c : *it) {
      const Resources r = effective(c);
      if (str(c, "restartPolicy") == "Always") {
        add(total, r), add(sidecars, r), at_least(init_peak, sidecars), ports(c);
      } else {
        Resources during = r;
        add(during, sidecars);
        at_least(init_peak, during);
      }
    }
  at_least(total, init_peak);
  if (auto it = spec.find("overhead"); it != spec.end()) add(total, resources(*it).r);
  p.requests = std::move(total);
  if (auto st = j.find("status"); st != j.end()) {
    p.phase = str(*st, "phase");
    p.nominated_node_name = str(*st, "nominatedNodeName");
    if (auto t = str(*st, "startTime"); !t.empty()) p.start_time = parse_micro_time(t);
    if (auto cs = st->find("conditions"); p.deleting && cs != st->end() && cs->is_array()) {
      for (auto& c : *cs) {
        if (str(c, "type") != "DisruptionTarget") continue;  // the first one decides, as upstream
        p.terminating_by_preemption = str(c, "status") == "True" && str(c, "reason") == "PreemptionByScheduler";
        break;
      }
    }
  }
  return p;
}

PodList nlohmann_pod_list(const std::string& text) {
  const njson doc = njson::parse(text);
  PodList out;
  out.resource_version = str(doc.at("metadata"), "resourceVersion");
  out.continue_token = str(doc.at("metadata"), "continue");
  const auto& items = doc.at("items");
  out.items.reserve(items.size());
  for (auto& item : items) out.items.push_back(to_pod(item));
  return out;
}

// The two decodes must agree, or the comparison means nothing.
bool same(const Pod& a, const Pod& b) {
  return a.ns == b.ns && a.name == b.name && a.uid == b.uid && a.resource_version == b.resource_version &&
         a.scheduler_name == b.scheduler_name && a.node_name == b.node_name && a.phase == b.phase &&
         a.deleting == b.deleting && a.scheduling_gated == b.scheduling_gated && a.priority == b.priority &&
         a.node_selector == b.node_selector && a.required_affinity == b.required_affinity &&
         a.preferred_affinity == b.preferred_affinity && a.tolerations == b.tolerations &&
         a.host_ports == b.host_ports && a.requests == b.requests && a.creation_timestamp == b.creation_timestamp &&
         a.preempt_never == b.preempt_never && a.terminating_by_preemption == b.terminating_by_preemption &&
         a.nominated_node_name == b.nominated_node_name && a.start_time == b.start_time;
}

// --- timing ------------------------------------------------------------

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Wall time, and the thread's CPU time: on a shared machine the second
// does not count the time other processes held the core.
struct Sample {
  double wall, cpu;
};
struct Row {
  const char* name;
  std::vector<double> wall, cpu;
};

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

template <class F>
Sample timed(F&& f) {
  const auto t0 = Clock::now();
  const double c0 = thread_cpu_seconds();
  f();
  return {std::chrono::duration<double>(Clock::now() - t0).count(), thread_cpu_seconds() - c0};
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 10000;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 7;
  const std::string json = pod_list_json(n);
  const double mb = static_cast<double>(json.size()) / 1e6;
  std::printf("PodList: %d pods, %.1f MB (%.0f bytes/pod); %d runs each, interleaved, after one warm-up\n", n, mb,
              static_cast<double>(json.size()) / n, runs);
  std::printf("simdjson %d.%d.%d, active implementation: %s (%s); compiled in:", simdjson::SIMDJSON_VERSION_MAJOR,
              simdjson::SIMDJSON_VERSION_MINOR, simdjson::SIMDJSON_VERSION_REVISION,
              simdjson::get_active_implementation()->name().c_str(),
              simdjson::get_active_implementation()->description().c_str());
  for (auto impl : simdjson::get_available_implementations())
    std::printf(" %s%s", impl->name().c_str(), impl->supported_by_runtime_system() ? "" : "(unsupported here)");
  std::printf("\nnlohmann-json %d.%d.%d\n\n", NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR,
              NLOHMANN_JSON_VERSION_PATCH);

  Decoder decoder;
  // Same input, padded: the in-place path for a caller that keeps its
  // receive buffer padded (the transport does not today: it copies).
  std::string padded = json;
  padded.resize(json.size() + kJsonPadding, '\0');

  auto ours = decoder.list<Pod>(json);
  if (!ours) {
    std::fprintf(stderr, "our decoder failed: %s\n", ours.error().message().c_str());
    return 1;
  }
  const PodList theirs = nlohmann_pod_list(json);
  if (ours->items.size() != static_cast<std::size_t>(n) || theirs.items.size() != ours->items.size() ||
      ours->resource_version != theirs.resource_version) {
    std::fprintf(stderr, "decoders disagree on the list\n");
    return 1;
  }
  for (std::size_t i = 0; i < ours->items.size(); ++i) {
    if (!same(ours->items[i], theirs.items[i])) {
      std::fprintf(stderr, "decoders disagree on pod %zu (%s/%s)\n", i, ours->items[i].ns.c_str(),
                   ours->items[i].name.c_str());
      return 1;
    }
  }
  std::int64_t cpu = 0;
  for (auto& p : ours->items) cpu += p.requests.milli_cpu;
  std::printf("both decoders agree on all %d pods (sum of cpu requests %lld m)\n\n", n, static_cast<long long>(cpu));

  Row rows[] = {{"toysched Decoder::list<Pod> (simdjson on-demand)", {}, {}},
                {"  same, input already padded (no copy)", {}, {}},
                {"nlohmann::json::parse + same fields", {}, {}},
                {"  nlohmann::json::parse alone (DOM, no fields)", {}, {}}};
  std::size_t sink = 0;
  for (int r = 0; r <= runs; ++r) {
    Sample t[4];
    t[0] = timed([&] { sink += decoder.list<Pod>(json)->items.size(); });
    t[1] = timed([&] { sink += decoder.list<Pod>({padded.data(), json.size()}, padded.size())->items.size(); });
    t[2] = timed([&] { sink += nlohmann_pod_list(json).items.size(); });
    t[3] = timed([&] { sink += njson::parse(json).size(); });
    if (r == 0) continue;  // warm-up: page faults, allocator growth
    for (int k = 0; k < 4; ++k) rows[k].wall.push_back(t[k].wall), rows[k].cpu.push_back(t[k].cpu);
  }

  // Rates from CPU time (see Sample); wall time beside it shows the noise.
  std::printf(
      "| decoder | CPU ms (median) | wall ms (median) | pods/s | MB/s | vs nlohmann |\n"
      "|---|---:|---:|---:|---:|---:|\n");
  const double base = median(rows[2].cpu);
  for (auto& row : rows) {
    const double s = median(row.cpu);
    std::printf("| %s | %.1f | %.1f | %.0f | %.0f | %.1fx |\n", row.name, s * 1e3, median(row.wall) * 1e3, n / s,
                mb / s, base / s);
  }
  std::printf("\n(sink %zu)\n", sink);
  return 0;
}
