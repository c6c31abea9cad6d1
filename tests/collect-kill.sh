#!/bin/bash
# Crash safety of `tilecast collect`: the cpu backend is killed with SIGKILL
# at random points, 15 times. After every kill the database must pass
# `tilecast db check`, keep every row stored before (same ids, same values)
# and hold no shape twice; a final run must finish the sweep in the same run.
set -u
: "${TILECAST_BIN:?}" "${TILECAST_SOURCE_ROOT:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 not installed: skip"; exit 77; }
"$TILECAST_BIN" collect --help | grep -q -- '--backend' || exit 1
if ! "$TILECAST_BIN" collect --backend cpu --sweep /dev/null --dry-run >/dev/null 2>&1 &&
   "$TILECAST_BIN" collect --backend cpu --sweep /dev/null --dry-run 2>&1 | grep -q "without the cpu"; then
    echo "built without the cpu backend: skip"; exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sweep="$TILECAST_SOURCE_ROOT/tests/data/sweeps/kill.yaml"
db="$tmp/kill.db"
# every shape spends its 40 ms budget (the CI target is out of reach of
# 50 repetitions), so a full run takes ~2 s; commits of single rows put kills
# between, during and after commits
args=(collect --backend cpu --sweep "$sweep" --db "$db" --quiet --rel-ci 0.000001
      --max-time-per-shape-ms 40 --min-reps 50 --warmup 1 --commit-rows 1)
export OPENBLAS_NUM_THREADS=1

fail() { echo "FAIL: $*"; exit 1; }

total=$("$TILECAST_BIN" collect --backend cpu --sweep "$sweep" --dry-run |
        sed -n 's/^shapes: \([0-9]*\) in the sweep.*/\1/p')
[ -n "$total" ] && [ "$total" -gt 30 ] || fail "dry run did not count the shapes ($total)"
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
    # 20..470 ms: early kills hit start-up and run creation, later ones commits
    sleep "0.$(printf '%03d' $((20 + RANDOM % 450)))"
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
unsupported=$(sqlite3 "$db" "SELECT count(*) FROM gemm WHERE status = 'unsupported' AND dtype = 'fp16'")
[ "$unsupported" -eq 4 ] || fail "expected the 4 fp16 shapes stored as unsupported, got $unsupported"
# a second re-run measures nothing
"$TILECAST_BIN" "${args[@]}" > "$tmp/out" 2>&1 || fail "re-run failed"
grep -q "$total already stored, 0 measured" "$tmp/out" || { cat "$tmp/out"; fail "re-run measured again"; }
echo "ok: $kills kills, $rows rows, one run"
