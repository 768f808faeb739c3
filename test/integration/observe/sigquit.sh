#!/usr/bin/env bash
# SIGQUIT from outside, mid-burst: a dump in which every live task appears
# exactly once with an await point, then exit status 2.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3 --controllers
start_toy "$TEST_TMP/toy.log" -v=2 --kube-api-qps=10 --kube-api-burst=1
deployment burst 30 toy-scheduler
wait_until 20 "a few binds" '[ "$(grep -c "Successfully bound" "$TEST_TMP/toy.log")" -ge 3 ]'
kill -QUIT "$TOY_PID"
rc=0
wait "$TOY_PID" || rc=$?
[ "$rc" = 2 ] || fail "exit status $rc after SIGQUIT, expected 2"
grep -q '^SIGQUIT: quit' "$TEST_TMP/toy.log" || fail "no SIGQUIT line"
header=$(grep -E '^toy-scheduler: [0-9]+ tasks' "$TEST_TMP/toy.log")
want=$(sed -E 's/^toy-scheduler: ([0-9]+) tasks.*/\1/' <<<"$header")
lines=$(grep -E '^task [0-9]+ \[' "$TEST_TMP/toy.log")
[ "$(grep -c . <<<"$lines")" = "$want" ] || fail "header says $want tasks, the dump lists $(grep -c . <<<"$lines")"
ids=$(awk '{print $2}' <<<"$lines" | sort)
[ "$(uniq <<<"$ids" | wc -l)" = "$want" ] || fail "a task appears twice"
names=$(sed -E 's/^task [0-9]+ \[[^]]*\] ([^ ,]+).*/\1/' <<<"$lines" | sort)
[ "$(uniq -d <<<"$names" | grep -c .)" = 0 ] || fail "a task name appears twice: $(uniq -d <<<"$names")"
while read -r line; do
  grep -qE ' (at|last at) [a-z_]+\.[a-z_]+ \(' <<<"$line" || fail "no await point: $line"
done <<<"$lines"
for t in watch/nodes watch/pods schedule serve/http; do grep -q "\] $t[ ,]" <<<"$lines" || fail "no $t in the dump"; done
binds=$(grep -c '\] bind/.* at bind.post' <<<"$lines" || true)
pass "SIGQUIT dump: $want tasks, each once with its await point ($binds binds at bind.post)"
