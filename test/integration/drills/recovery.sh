#!/usr/bin/env bash
# ./dev drill recovery --json: SIGQUIT mid-burst, then --crash-at=bind.post:5.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_drill.sh"
run_drill recovery
pass "drill recovery (SIGQUIT)"
mv "$TEST_TMP/recovery.json" "$TEST_TMP/recovery-sigquit.json"
run_drill recovery --crash-at bind.post:5
pass "drill recovery (--crash-at bind.post:5)"
