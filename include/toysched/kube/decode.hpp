// JSON → compact objects (objects.hpp), with simdjson on-demand.
//
// A Decoder owns one reusable simdjson parser and a padded scratch buffer:
// the scheduler decodes tens of thousands of objects, and reusing both keeps
// a decode free of parser allocations. One Decoder per thread; it is cheap
// to keep, expensive to build per call.
//
// Rules (the server's data is never trusted):
//  - unknown fields are ignored; JSON `null` reads as "absent";
//  - the root must be a JSON object, fully consumed (trailing bytes, a
//    truncated event, the wrong type for a known field → json_malformed);
//  - a missing metadata.name (or uid, for pods and nodes) →
//    json_missing_field; a missing label selector (null or absent) is
//    nullopt, never an empty selector (which would match everything);
//  - a quantity that does not parse → quantity_invalid; one beyond
//    kQuantityMax (quantity.hpp) reads as kQuantityMax, never an error;
//  - one object or watch event beyond kMaxObjectBytes → object_too_large
//    (see there); a list page beyond kMaxListBytes → object_too_large;
//  - in a list or a watch event, an object that fails any of these rules
//    is not the list's or the event's failure: it is left out, and what a
//    tolerant second read finds of it (name, uid, ...) is returned as an
//    Undecodable beside the rest. A list or an event whose own JSON is
//    broken (truncated, not JSON) still fails whole.
#pragma once

#include "toysched/kube/errors.hpp"
#include "toysched/kube/kinds.hpp"
#include "toysched/kube/objects.hpp"

#include <cstddef>
#include <memory>
#include <string_view>

namespace toysched::kube {

// etcd holds at most 1.5 MiB per object (its default --max-request-bytes),
// but the API server's JSON escapes '<', '>', '&' and control characters
// as six bytes each (encoding/json), so a valid pod of 1.3 MB of such text
// arrives as a 7.8 MB watch event: refusing it wedged the watch for good.
// 16 MiB holds the worst escaped 1.5 MiB object with room to spare, and
// still bounds what a hostile peer can make us allocate.
inline constexpr std::size_t kMaxObjectBytes = std::size_t{16} << 20;
// A page of 500 nodes with long status.images lists runs to tens of MiB.
inline constexpr std::size_t kMaxListBytes = std::size_t{256} << 20;
// Bytes simdjson may read past the end of the JSON (SIMDJSON_PADDING).
inline constexpr std::size_t kJsonPadding = 64;

// 410 Gone/Expired in an ERROR event or a response: the RV is too old, relist.
inline bool is_expired(const Status& s) noexcept {
  return s.code == 410 || s.reason == "Expired" || s.reason == "Gone";
}

class Decoder {
 public:
  Decoder();
  ~Decoder();
  Decoder(Decoder&&) noexcept;
  Decoder& operator=(Decoder&&) noexcept;
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // `readable` is how many bytes from json.data() may be read. When it is
  // at least json.size() + kJsonPadding (a caller that keeps its receive
  // buffer padded), the JSON is parsed in place; otherwise it is first
  // copied into the decoder's padded scratch buffer.
  result<Pod> pod(std::string_view json, std::size_t readable = 0);
  result<Node> node(std::string_view json, std::size_t readable = 0);
  result<Lease> lease(std::string_view json, std::size_t readable = 0);
  result<Status> status(std::string_view json, std::size_t readable = 0);
  // A list page, or one watch event, of any kind of kinds.hpp (each kind's
  // object is read by its get_obj(), decode_kinds.cpp).
  template <class T>
  result<List<T>> list(std::string_view json, std::size_t readable = 0);
  template <class T>
  result<WatchEvent<T>> event(std::string_view line, std::size_t readable = 0);
  // One object of such a kind (the answer to a write of it).
  template <class T>
  result<T> object(std::string_view json, std::size_t readable = 0);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Decoder::list and Decoder::event for every kind, compiled once in decode.cpp.
#define TOYSCHED_EXTERN_DECODE(Type, ...)                                                                     \
  extern template result<List<Type>> Decoder::list<Type>(std::string_view json, std::size_t readable);        \
  extern template result<WatchEvent<Type>> Decoder::event<Type>(std::string_view line, std::size_t readable); \
  extern template result<Type> Decoder::object<Type>(std::string_view json, std::size_t readable);
TOYSCHED_KINDS(TOYSCHED_EXTERN_DECODE)
#undef TOYSCHED_EXTERN_DECODE

// Conveniences on a per-thread Decoder, for tests and cold paths; hot
// paths (watches, lists) hold their own Decoder.
Decoder& thread_decoder();
result<Pod> decode_pod(std::string_view json);
result<Node> decode_node(std::string_view json);
result<Lease> decode_lease(std::string_view json);
result<Status> decode_status(std::string_view json);
template <class T>
result<List<T>> decode_list(std::string_view json) {
  return thread_decoder().list<T>(json);
}
template <class T>
result<WatchEvent<T>> decode_event(std::string_view line) {
  return thread_decoder().event<T>(line);
}

}  // namespace toysched::kube
