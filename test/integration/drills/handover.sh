#!/usr/bin/env bash
# ./dev drill handover --json: graceful and forced, transitions, the gap.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_drill.sh"
run_drill handover
pass "drill handover"
