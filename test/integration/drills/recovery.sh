#!/usr/bin/env bash
# ./dev drill recovery --json: killed mid-burst three ways, it loses nothing.
# SIGQUIT (the task dump), SIGKILL (no dump, no chance to do anything) and
# --crash-at=bind.post:5 (binds decided, none posted).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_drill.sh"
run_drill recovery
pass "drill recovery (SIGQUIT)"
mv "$TEST_TMP/recovery.json" "$TEST_TMP/recovery-sigquit.json"
run_drill recovery --signal KILL
pass "drill recovery (SIGKILL)"
mv "$TEST_TMP/recovery.json" "$TEST_TMP/recovery-sigkill.json"
run_drill recovery --crash-at bind.post:5
pass "drill recovery (--crash-at bind.post:5)"
