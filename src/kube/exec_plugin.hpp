// Running an exec credential plugin as a child process without blocking
// the event loop. Private to src/kube (ExecAuthenticator).
//
// posix_spawn, not fork: the child execs at once, so nothing of ours
// (locks, the loop) is copied half-way. The child gets its own process
// group, so a timeout kills the plugin and whatever it started (a shell
// script's `sleep` would otherwise keep the pipes open); stdin is
// /dev/null (never a terminal); stdout and stderr are pipes read on the
// io_context. The child is reaped with waitpid(WNOHANG) polls once its
// pipes close: no SIGCHLD handler, which would be process-wide.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <string>

#include "toysched/kube/errors.hpp"
#include "toysched/kube/exec_credential.hpp"

namespace toysched::kube {

// The most of a plugin's stdout read (a credential is a few KiB); more is
// an error, as is anything left running past `timeout`.
inline constexpr std::size_t kMaxExecOutputBytes = std::size_t{1} << 20;

// The plugin's stdout once it exits 0 within `timeout`; otherwise
// errc::exec_failed saying why (not found, with the install hint; its exit
// code and last stderr line; timed out, killed). Never a secret: stdout is
// not quoted.
boost::asio::awaitable<expected<std::string>> run_exec_plugin(boost::asio::any_io_executor ex, const ExecConfig& c,
                                                              std::chrono::milliseconds timeout);

}  // namespace toysched::kube
