#!/usr/bin/env bash
# SIGQUIT from outside, mid-burst: a dump in which every live task appears
# exactly once with an await point, then exit status 2. The same dump is
# written to a file in --dump-dir (default: the working directory), whose
# path is logged at start and again after the dump.
source "$(dirname "$0")/../lib.sh"
use_private_lab --nodes 3 --controllers
mkdir "$TEST_TMP/dumps"
start_toy "$TEST_TMP/toy.log" -v=2 --kube-api-qps=10 --kube-api-burst=1 --dump-dir="$TEST_TMP/dumps" 
deployment burst 30 toy-scheduler
wait_until 20 "a few binds" '[ "$(grep -c "Successfully bound" "$TEST_TMP/toy.log")" -ge 3 ]'
signal_and_wait QUIT "$TOY_PID"
[ "$EXIT_STATUS" = 2 ] || fail "exit status $EXIT_STATUS after SIGQUIT, expected 2"
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
# The file: named in one line at start, and holds the same task lines.
dump=$TEST_TMP/dumps/toy-scheduler-dump-$TOY_PID.txt
grep -q "dumps are also written to a file.*$dump" "$TEST_TMP/toy.log" || fail "the start-up log does not name $dump"
grep -q "^toy-scheduler: dump written to $dump\$" "$TEST_TMP/toy.log" || fail "no 'dump written to $dump' line"
[ -s "$dump" ] || fail "no dump file $dump: $(ls "$TEST_TMP/dumps")"
head -n1 "$dump" | grep -q '^SIGQUIT: quit$' || fail "the dump file does not start with the SIGQUIT line"
[ "$(grep -E '^task [0-9]+ \[' "$dump")" = "$lines" ] || fail "the dump file's tasks differ from stderr's"
grep -q '^native backtrace:' "$dump" || fail "no backtrace in the dump file"

# Without --dump-dir: the working directory (here a scratch one).
mkdir "$TEST_TMP/cwd"
(cd "$TEST_TMP/cwd" && exec "$TOYSCHED_BUILD/toy-scheduler" --kubeconfig "$KCFG" --secure-port=0 \
  --scheduler-name=sigquit-cwd >"$TEST_TMP/cwd.log" 2>&1) &
CWD_PID=$!
on_exit "kill -KILL $CWD_PID 2>/dev/null"
wait_until 20 "the second scheduler starts" 'grep -q "Starting Kubernetes Scheduler" "$TEST_TMP/cwd.log"'
kill -QUIT "$CWD_PID"
wait "$CWD_PID" || true
[ -s "$TEST_TMP/cwd/toy-scheduler-dump-$CWD_PID.txt" ] || fail "no dump in the working directory: $(ls "$TEST_TMP/cwd")"

binds=$(grep -c '\] bind/.* at bind.post' <<<"$lines" || true)
pass "SIGQUIT dump: $want tasks, each once with its await point ($binds binds at bind.post), also in $(basename "$dump")"
