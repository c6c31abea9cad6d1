#!/bin/bash
# Crash safety of `tilecast collect`: the cpu backend is killed with SIGKILL
# at random points, 15 times. After every kill the database must pass
# `tilecast db check`, keep every row stored before (same ids, same values)
# and hold no shape twice; a final run must finish the sweep in the same run.
set -u
: "${TILECAST_BIN:?}" "${TILECAST_SOURCE_ROOT:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 not installed: skip"; exit 77; }
"$TILECAST_BIN" collect --help | grep -q -- '--backend' || exit 1
if "$TILECAST_BIN" collect --backend cpu --sweep /dev/null --db /nonexistent/x.db 2>&1 |
        grep -q "built without the cpu backend"; then
    echo "built without the cpu backend: skip"; exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sweep="$TILECAST_SOURCE_ROOT/tests/data/sweeps/kill-long.yaml"

fail() { echo "FAIL: $*"; exit 1; }

# The command line first: usage errors exit 1, bad input 2 with file:line:column.
for opt in --backend --sweep --db --gpu --device --shard --resume --dry-run --rel-ci \
           --max-time-per-shape-ms --min-reps --max-reps --warmup --warmup-ms --commit-rows \
           --progress-interval --quiet; do
    "$TILECAST_BIN" collect --help | grep -q -- "$opt" || fail "--help does not document $opt"
done
"$TILECAST_BIN" collect --backend cpu --db "$tmp/x.db" > /dev/null 2>&1; [ $? -eq 1 ] || fail "no --sweep: not exit 1"
"$TILECAST_BIN" collect --backend gpu9 --sweep "$sweep" --db "$tmp/x.db" > /dev/null 2>&1
[ $? -eq 1 ] || fail "unknown backend: not exit 1"
"$TILECAST_BIN" collect --backend cpu --sweep "$sweep" --dry-run --shard 4/4 > /dev/null 2>&1
[ $? -eq 2 ] || fail "--shard 4/4: not exit 2 (an impossible value is input)"
"$TILECAST_BIN" collect --backend cpu --sweep "$sweep" --dry-run --rel-ci 0 > /dev/null 2>&1
[ $? -eq 2 ] || fail "--rel-ci 0: not exit 2 (an impossible value is input)"
bad="$TILECAST_SOURCE_ROOT/tests/data/sweeps/bad-key.yaml"
err=$("$TILECAST_BIN" collect --backend cpu --sweep "$bad" --db "$tmp/x.db" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "bad sweep: exit $rc, not 2"
case $err in *"bad-key.yaml:5:5: gemm set: unknown key 'mm'"*) ;; *) fail "bad sweep message: $err" ;; esac
[ ! -e "$tmp/x.db" ] || fail "a failed command created the database"
# inside a SLURM array job the shard comes from the environment
out=$(SLURM_ARRAY_TASK_ID=6 SLURM_ARRAY_TASK_MIN=4 SLURM_ARRAY_TASK_COUNT=4 \
      "$TILECAST_BIN" collect --backend cpu --sweep "$sweep" --dry-run)
case $out in *"in shard 2/4"*) ;; *) fail "SLURM shard not taken: $out" ;; esac
out=$(SLURM_ARRAY_TASK_ID=8 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_STEP=4 SLURM_ARRAY_TASK_COUNT=4 \
      "$TILECAST_BIN" collect --backend cpu --sweep "$sweep" --dry-run)
case $out in *"in shard 2/4"*) ;; *) fail "SLURM shard of a stepped array not taken: $out" ;; esac
# The summary tells the backend's unsupported dtypes (the sweep's fp16 set,
# 2 shapes x 2 layouts) from failures, which there are none of.
small="$TILECAST_SOURCE_ROOT/tests/data/sweeps/kill.yaml"
out=$(OPENBLAS_NUM_THREADS=1 "$TILECAST_BIN" collect --backend cpu --sweep "$small" --db "$tmp/small.db" \
      --quiet --max-time-per-shape-ms 20) || fail "collect of the small sweep failed: $out"
case $out in *"36 measured (32 ok, 4 unsupported, 0 failed)"*) ;; *) fail "collect summary: $out" ;; esac

db="$tmp/kill.db"
# every shape spends its 150 ms budget (the CI target is out of reach of
# 50 repetitions), longer than the polling below takes to react, so that
# 15 kills land before the sweep of ~50 shapes is done; rows are committed
# one by one
args=(collect --backend cpu --sweep "$sweep" --db "$db" --quiet --rel-ci 0.000001
      --max-time-per-shape-ms 150 --min-reps 50 --warmup 1 --commit-rows 1)
export OPENBLAS_NUM_THREADS=1

total=$("$TILECAST_BIN" collect --backend cpu --sweep "$sweep" --dry-run |
        sed -n 's/^shapes: \([0-9]*\) in the sweep.*/\1/p')
if [ -z "$total" ] || [ "$total" -le 30 ]; then fail "dry run did not count the shapes ($total)"; fi
echo "sweep: $total shapes"

snapshot() {
    # every stored row, in a stable text form
    sqlite3 "$db" "SELECT 'g', id, run_id, dtype, layout, m, n, k, batch, time_us, status FROM gemm
                   UNION ALL
                   SELECT 'a', id, run_id, dtype, batch, heads, kv_heads, seq_q, causal, time_us, status
                   FROM attention" | LC_ALL=C sort > "$1"
}

dups() {
    sqlite3 "$db" "SELECT (SELECT count(*) FROM (SELECT 1 FROM gemm GROUP BY run_id, dtype, layout,
                   m, n, k, batch HAVING count(*) > 1)) + (SELECT count(*) FROM (SELECT 1 FROM attention
                   GROUP BY run_id, impl, dtype, batch, heads, kv_heads, seq_q, seq_kv, head_dim, causal
                   HAVING count(*) > 1))"
}

: > "$tmp/before"
kills=0
RANDOM=4242   # reproducible kill points
for i in $(seq 1 15); do
    "$TILECAST_BIN" "${args[@]}" > "$tmp/out" 2>&1 &
    pid=$!
    if [ "$i" -le 3 ]; then
        # the first kills hit start-up: creating the file and the run
        sleep "0.$(printf '%03d' $((RANDOM % 150)))"
    else
        # later ones after 1..2 more rows, plus 0..40 ms: between, during
        # and right after commits, wherever the machine's load puts them
        target=$(( $(wc -l < "$tmp/before") + 1 + RANDOM % 2 ))
        while kill -0 "$pid" 2>/dev/null; do
            # (sqlite3 would create a missing file: only ask once it exists)
            n=0
            [ -s "$db" ] && n=$(sqlite3 -readonly "$db" "SELECT (SELECT count(*) FROM gemm) +
                                (SELECT count(*) FROM attention)" 2>/dev/null)
            [ "${n:-0}" -ge "$target" ] && break
            sleep 0.02
        done
        sleep "0.0$((RANDOM % 5))"
    fi
    if kill -9 "$pid" 2>/dev/null; then
        kills=$((kills + 1))
    fi
    wait "$pid" 2>/dev/null
    [ -f "$db" ] || continue
    "$TILECAST_BIN" db check "$db" > "$tmp/check" 2>&1 || { cat "$tmp/check"; fail "db check after kill $i"; }
    snapshot "$tmp/after"
    # nothing stored before this kill may be lost or changed
    missing=$(LC_ALL=C comm -23 "$tmp/before" "$tmp/after" | wc -l)
    [ "$missing" -eq 0 ] || { LC_ALL=C comm -23 "$tmp/before" "$tmp/after" | head; fail "$missing rows lost after kill $i"; }
    d=$(dups)
    [ "$d" -eq 0 ] || fail "$d duplicated shapes after kill $i"
    echo "kill $i: $(wc -l < "$tmp/after") rows stored"
    cp "$tmp/after" "$tmp/before"
done
[ "$kills" -ge 10 ] || fail "only $kills kills landed (the collector finished too soon)"

# the same command finishes the sweep, continuing the same run
"$TILECAST_BIN" "${args[@]}" > "$tmp/out" 2>&1 || { cat "$tmp/out"; fail "resumed run failed"; }
grep -q "(resumed)" "$tmp/out" || { cat "$tmp/out"; fail "the final run did not resume"; }
"$TILECAST_BIN" db check "$db" > /dev/null || fail "db check after the final run"
snapshot "$tmp/after"
missing=$(LC_ALL=C comm -23 "$tmp/before" "$tmp/after" | wc -l)
[ "$missing" -eq 0 ] || fail "$missing rows lost by the resumed run"
rows=$(wc -l < "$tmp/after")
[ "$rows" -eq "$total" ] || fail "$rows rows stored, the sweep has $total shapes"
[ "$(dups)" -eq 0 ] || fail "duplicated shapes after the final run"
runs=$(sqlite3 "$db" "SELECT count(*) FROM run")
[ "$runs" -eq 1 ] || fail "$runs runs instead of one resumed run"
ended=$(sqlite3 "$db" "SELECT count(*) FROM run WHERE ended_at IS NOT NULL AND ended_at != ''")
[ "$ended" -eq 1 ] || fail "the run was not ended"
# the timing method names the warm-up; the cpu backend never groups launches
timing=$(sqlite3 "$db" "SELECT timing FROM run")
case $timing in
wallclock-median-*flush-warmup100ms) ;;
*) fail "run timing '$timing'" ;;
esac
unsupported=$(sqlite3 "$db" "SELECT count(*) FROM gemm WHERE status = 'unsupported' AND dtype = 'fp16'")
[ "$unsupported" -eq 4 ] || fail "expected the 4 fp16 shapes stored as unsupported, got $unsupported"
# a second re-run measures nothing
"$TILECAST_BIN" "${args[@]}" > "$tmp/out" 2>&1 || fail "re-run failed"
grep -q "$total already stored, 0 measured" "$tmp/out" || { cat "$tmp/out"; fail "re-run measured again"; }
echo "ok: $kills kills, $rows rows, one run"
