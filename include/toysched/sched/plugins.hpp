// Every plugin class this build has, for code that names them by type
// (tests, benches). Each plugin is one unit: its source under
// src/sched/plugins/ (and its header here under plugins/ when other code
// names its type), after upstream's pkg/scheduler/framework/plugins/<name>/,
// and one line in registry.hpp, from which profiles make it.
#pragma once

#include "toysched/sched/framework.hpp"
#include "toysched/sched/plugins/balanced_allocation.hpp"
#include "toysched/sched/plugins/image_locality.hpp"
#include "toysched/sched/plugins/inter_pod_affinity.hpp"
#include "toysched/sched/plugins/node_affinity.hpp"
#include "toysched/sched/plugins/node_name.hpp"
#include "toysched/sched/plugins/node_ports.hpp"
#include "toysched/sched/plugins/node_resources_fit.hpp"
#include "toysched/sched/plugins/node_unschedulable.hpp"
#include "toysched/sched/plugins/pod_topology_spread.hpp"
#include "toysched/sched/plugins/taint_toleration.hpp"
#include "toysched/sched/plugins/volume_binding.hpp"
#include "toysched/sched/profile.hpp"
