#!/usr/bin/env bash
# Two SIGINTs during a long shape (the cpu backend): the first asks to stop
# after the shape, the second gives the shape up at its next batch of
# repetitions. The rows measured before it are committed (none were yet:
# --commit-rows and the 5 s commit interval are not reached), the process
# exits 3 promptly, the database passes db check, and the same command then
# resumes and completes the run. Before, the second SIGINT killed the
# process and every uncommitted row was lost.
set -u
. "$(dirname "$0")/lib.sh"
"$TC" collect --help | grep -q -- "--backend NAME" || { echo "no collect: skipped"; exit 77; }
cat >"$TMP/sweep.yaml" <<'YAML'
name: sigint
dtypes: [fp32]
layouts: [NN]
sets:
  - square: {pow2: [16, 64]}
  - square: [512]
YAML
args=(collect --backend cpu --sweep "$TMP/sweep.yaml" --db "$TMP/s.db" --min-reps 1500
      --max-reps 1500 --max-time-per-shape-ms 600000 --commit-rows 1000 --progress-interval 0.05)
"$TC" "${args[@]}" >"$TMP/out" 2>"$TMP/err" &
pid=$!
# wait until the small shapes are done and the large one is in progress
for _ in $(seq 600); do
    grep -q "3/4 shapes" "$TMP/err" && break
    sleep 0.1
done
grep -q "3/4 shapes" "$TMP/err" || fail "the collection did not reach the large shape: $(tail -c 300 "$TMP/err")"
sleep 0.5
kill -INT "$pid"
sleep 0.3
kill -INT "$pid"
t0=$(date +%s)
wait "$pid"
rc=$?
t1=$(date +%s)
[ "$rc" -eq 3 ] || fail "exit $rc after two SIGINTs (expected 3: interrupted)"
[ $((t1 - t0)) -le 30 ] || fail "took $((t1 - t0)) s to stop after the second SIGINT"
run 0 "$TC" db check "$TMP/s.db"
n=$(sqlite3 "$TMP/s.db" "SELECT count(*) FROM gemm" 2>/dev/null || echo 0)
[ "$n" = 3 ] || fail "$n rows kept, expected the 3 measured before the interrupted shape"
# the same command resumes: the dropped shape is measured, the others skipped
run 0 "$TC" "${args[@]}"
has out "(resumed)"
has out "3 already stored, 1 measured"
finish collect-sigint
