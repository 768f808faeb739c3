#!/usr/bin/env bash
# ./dev drill race --json: the race against kube-scheduler, on its own lab.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_drill.sh"
run_drill race
pass "drill race"
