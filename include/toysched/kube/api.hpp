// The requests the scheduler makes, typed: paginated lists, binding, the
// PodScheduled status patch, a preemption victim's delete, events, and the
// Lease for leader election.
//
// Every failure is an ApiError: our code, the HTTP status when there was one,
// and the server's decoded Status when the body was JSON (plain-text bodies,
// like the API server's 429s, keep their text in `message`).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/system/result.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "toysched/kube/decode.hpp"
#include "toysched/kube/kinds.hpp"
#include "toysched/kube/objects.hpp"
#include "toysched/kube/transport.hpp"

namespace toysched::kube {

struct ApiError {
  boost::system::error_code code;  // errc::http_status for a server refusal
  int http_status = 0;             // 0: no response (transport failure)
  std::optional<Status> status;    // decoded when the body was a JSON Status
  std::string message;             // one line for people
  // The transport sent the request twice (its first connection died with
  // no answer): the server may have applied the first, so a POST's 409 can
  // be our own first send's doing.
  bool replayed = false;

  bool is_conflict() const noexcept { return http_status == 409; }
  bool is_not_found() const noexcept { return http_status == 404; }
  bool is_expired() const noexcept { return http_status == 410 || (status && kube::is_expired(*status)); }
};
template <class T>
using api_result = boost::system::result<T, ApiError>;
[[noreturn]] void throw_exception_from_error(const ApiError& e, const boost::source_location& loc);

// Turns a non-2xx response into an ApiError (Status decoded if JSON).
ApiError api_error_from(const HttpResponse& r, std::string_view what);

// Percent-encoding for query values (field selectors contain = ! ,).
std::string url_encode(std::string_view s);

struct ListOptions {
  std::string ns;  // empty: every namespace (or a cluster-scoped kind)
  std::string field_selector;
  std::string label_selector;
  int page_size = 500;  // client-go's pager
};

class Api {
 public:
  explicit Api(Transport& t) : t_(t) {}
  Transport& transport() noexcept { return t_; }

  // Every page of a list of T (a kind of kinds.hpp), merged. An expired
  // continue token (410: etcd compacted between pages) restarts the list
  // from the first page.
  template <class T>
  boost::asio::awaitable<api_result<List<T>>> list(ListOptions opts);

  // POST pods/NAME/binding with the pod's UID as a precondition.
  boost::asio::awaitable<api_result<void>> bind(std::string_view ns, std::string_view name, std::string_view uid,
                                                std::string_view node, RequestLimits limits = {},
                                                RequestTrace* trace = nullptr);

  // GET one pod: the server's copy, when the watch's may lag.
  boost::asio::awaitable<api_result<Pod>> get_pod(std::string_view ns, std::string_view name,
                                                  RequestLimits limits = {});

  // Strategic-merge patch of the pod's status (PodScheduled condition).
  boost::asio::awaitable<api_result<void>> patch_pod_status(std::string_view ns, std::string_view name,
                                                            std::string patch, RequestLimits limits = {});

  // JSON merge patches of a PersistentVolume and of a claim (VolumeBinding's
  // PreBind): the object as the server has it after the write. A patch that
  // names metadata.resourceVersion is refused (409) when the object changed.
  boost::asio::awaitable<api_result<PersistentVolume>> patch_volume(std::string_view name, std::string patch,
                                                                    RequestLimits limits = {});
  boost::asio::awaitable<api_result<PersistentVolumeClaim>> patch_claim(std::string_view ns, std::string_view name,
                                                                        std::string patch, RequestLimits limits = {});

  // DELETE the pod with its UID as a precondition (DeleteOptions), so that
  // a pod recreated under the name since we read it is never deleted: the
  // server answers 409 on a UID mismatch, 404 when the pod is gone. The
  // pod's own grace period applies. (Preemption's victim delete; upstream
  // deletes without the precondition, which can hit a successor pod.) A
  // 404 after a replay (ApiError::replayed) may be our own first send's
  // doing: the pod is gone either way.
  boost::asio::awaitable<api_result<void>> delete_pod(std::string_view ns, std::string_view name, std::string_view uid,
                                                      RequestLimits limits = {});

  // events.k8s.io/v1; falls back to core/v1 when the group is not served.
  struct Event {
    std::string ns, pod_name, pod_uid;
    std::string type;    // Normal / Warning
    std::string reason;  // Scheduled / FailedScheduling / Preempted
    std::string action;  // Binding / Scheduling / Preempting
    std::string note;    // cut to 1024 bytes
    std::string reporting_controller, reporting_instance;
    // A second Pod the event is about (`related`: a Preempted event on the
    // victim names its preemptor, which may live in another namespace);
    // related_name empty = none. The `{}` lets brace-initialised Events
    // that stop before these say so without -Wmissing-field-initializers.
    std::string related_ns{}, related_name{}, related_uid{};
  };
  boost::asio::awaitable<api_result<void>> create_event(const Event& e, RequestLimits limits = {});

  boost::asio::awaitable<api_result<Lease>> get_lease(std::string_view ns, std::string_view name,
                                                      RequestLimits limits = {});
  boost::asio::awaitable<api_result<Lease>> create_lease(const Lease& l, RequestLimits limits = {});
  // PUT with the lease's resourceVersion: 409 when someone wrote it since.
  boost::asio::awaitable<api_result<Lease>> update_lease(const Lease& l, RequestLimits limits = {});

 private:
  boost::asio::awaitable<api_result<HttpResponse>> call(HttpRequest req, std::string_view what);
  boost::asio::awaitable<api_result<Lease>> lease_call(HttpRequest req, std::string what);
  template <class T>
  boost::asio::awaitable<api_result<T>> merge_patch(std::string target, std::string patch, RequestLimits limits,
                                                    std::string what);

  Transport& t_;
  Decoder decoder_;
  bool core_events_ = false;  // events.k8s.io was not found once: use core/v1
};

// Api::list for every kind of kinds.hpp, compiled once in api.cpp.
#define TOYSCHED_EXTERN_LIST(Type, ...) \
  extern template boost::asio::awaitable<api_result<List<Type>>> Api::list<Type>(ListOptions);
TOYSCHED_KINDS(TOYSCHED_EXTERN_LIST)
#undef TOYSCHED_EXTERN_LIST

}  // namespace toysched::kube
