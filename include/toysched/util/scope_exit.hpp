// scope_exit: runs a cleanup when the scope that holds it ends, however it
// ends: a return, an exception, or a suspended coroutine's frame destroyed
// at shutdown (the io_context going away with the coroutine still parked).
// The last is why the code uses it around a wait: a pointer into the frame
// that was handed to someone else (a waiter list, a timer slot) must not
// outlive the frame.
//
//   waiters_.push_back(&timer);
//   util::scope_exit leave([&] { std::erase(waiters_, &timer); });
//   co_await timer.async_wait(...);
//
// The cleanup runs in a destructor, so it must not throw.
#pragma once

#include <type_traits>
#include <utility>

namespace toysched::util {

template <class F>
class [[nodiscard]] scope_exit {
  static_assert(std::is_invocable_v<F&>, "a cleanup takes no arguments");

 public:
  explicit scope_exit(F f) noexcept(std::is_nothrow_move_constructible_v<F>) : f_(std::move(f)) {}
  ~scope_exit() { f_(); }

  scope_exit(const scope_exit&) = delete;
  scope_exit& operator=(const scope_exit&) = delete;

 private:
  F f_;
};

}  // namespace toysched::util
