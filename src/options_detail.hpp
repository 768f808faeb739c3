// Shared by the command-line files (options.cpp, kube_scheduler_flags.cpp).
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <string>

#include "toysched/options.hpp"

namespace toysched::detail {

// A Go-duration flag into `into`.
CLI::Option* add_duration(CLI::App& app, const std::string& name, std::chrono::milliseconds& into,
                          const std::string& help);

// The rest of kube-scheduler v1.36's flags: those we implement (logging
// format, --vmodule, the Lease lock, the always-allowed paths, the
// unschedulable timeout) and those accepted and ignored with a warning.
void add_kube_scheduler_flags(CLI::App& app, Options& o);

// After parsing: applies what the flags above set, and adds one warning
// naming the ignored flags that were given. "" or the error line.
std::string finish_kube_scheduler_flags(const CLI::App& app, Options& o);

}  // namespace toysched::detail
