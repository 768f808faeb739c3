#!/usr/bin/env bash
# --leader-elect-release-on-cancel (client-go's ReleaseOnCancel; true, as
# kube-scheduler): on SIGTERM the leader empties the Lease so a standby takes
# over at once. With false it leaves it held, so seed 002's forced handover
# (a standby waiting out the lease duration) can be shown by a plain stop.
source "$(dirname "$0")/../lib.sh"
use_shared_lab
LEASE=(--leader-elect --leader-elect-resource-namespace="$NS" --leader-elect-resource-name=roc
  --leader-elect-lease-duration=4s --leader-elect-renew-deadline=3s --leader-elect-retry-period=1s)
holder() { k -n "$NS" get lease roc -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true; }
renewed() { k -n "$NS" get lease roc -o jsonpath='{.spec.renewTime}' 2>/dev/null || true; }

start_toy "$TEST_TMP/a.log" -v=2 "${LEASE[@]}" --leader-elect-identity=a --leader-elect-release-on-cancel=false
wait_until 20 "a leads" '[ "$(holder)" = a ]'
signal_and_wait TERM "$TOY_PID"
[ "$EXIT_STATUS" = 0 ] || fail "a exited $EXIT_STATUS after SIGTERM, want 0"
grep -q "Leaving the lease held until it expires" "$TEST_TMP/a.log" || fail "a did not say it keeps the lease"
grep -q "released leader lease" "$TEST_TMP/a.log" && fail "a released the lease with --leader-elect-release-on-cancel=false"
[ "$(holder)" = a ] || fail "after a's SIGTERM the Lease names '$(holder)', want a (held)"
last=$(renewed)

# The default: b takes over once a's lease expired, and releases it on SIGTERM.
start_toy "$TEST_TMP/b.log" -v=2 "${LEASE[@]}" --leader-elect-identity=b
wait_until 20 "b leads after a's lease expired" '[ "$(holder)" = b ]'
kill -TERM "$TOY_PID"
wait "$TOY_PID" || fail "b exited non-zero after SIGTERM"
[ -z "$(holder)" ] || fail "after b's SIGTERM the Lease names '$(holder)', want it released (empty)"
pass "release-on-cancel=false: the Lease still names a after SIGTERM (renewed last at $last); the default releases it"
