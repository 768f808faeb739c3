// Shared by the config decoder's files.
#pragma once

#include "toysched/config/scheduler_config.hpp"
#include "yaml_fields.hpp"

namespace toysched::config::detail {

// pluginConfig[i].args of plugin `name` into `out` (plugin_args.cpp).
// Throws ConfigError for bad args, and for args toy-scheduler cannot apply.
void decode_plugin_args(const std::string& name, const YAML::Node& args, const std::string& path, PluginArgs& out);

}  // namespace toysched::config::detail
