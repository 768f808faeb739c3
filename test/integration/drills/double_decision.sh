#!/usr/bin/env bash
# ./dev drill double-decision --json: with leader election, no over-commit.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_drill.sh"
run_drill double-decision
pass "drill double-decision"
