#!/bin/bash
# db merge into a database that is in use: a collector writing OUT while
# merges into it run, and two merges into the same OUT at once. No row may
# be lost (not the collector's, committed before, during or after the
# merges, nor any merge's), and OUT must pass PRAGMA integrity_check: a
# merge takes the database's own write lock and never renames a file over
# OUT, which would leave the collector writing to a file no name reaches.
set -u
: "${TILECAST_BIN:?TILECAST_BIN is not set}" "${TILECAST_SOURCE_ROOT:?TILECAST_SOURCE_ROOT is not set}"
command -v sqlite3 >/dev/null || { echo "sqlite3 not installed: skip"; exit 77; }
. "$(dirname "$0")/lib.sh"
DATA=$TILECAST_SOURCE_ROOT/tests/data
sweep=$DATA/sweeps/kill-long.yaml
cd "$TMP" || exit 1
if "$TC" collect --backend cpu --sweep /dev/null --db /nonexistent/x.db 2>&1 |
        grep -q "built without the cpu backend"; then
    echo "built without the cpu backend: skip"; exit 77
fi
export OPENBLAS_NUM_THREADS=1

count() { # count DB SQL
    sqlite3 -readonly "$1" "$2" 2>/dev/null
}
integrity() { # integrity DB WHAT
    local r
    r=$(sqlite3 -readonly "$1" "PRAGMA integrity_check" 2>&1)
    [ "$r" = ok ] || fail "$2: integrity_check: $r"
    "$TC" db check "$1" >/dev/null 2>&1 || fail "$2: db check fails"
}

# inputs with rows of their own, told apart by their source
for i in 1 2 3 4 5 6; do
    "$TC" db import --format csv "$DATA/db/vidur-small.csv" --source "in$i" --into "in$i.db" \
        >/dev/null || fail "import in$i"
done
per_input=$(count in1.db "SELECT count(*) FROM gemm")
[ "${per_input:-0}" -gt 0 ] || fail "the inputs hold no rows"

# --- a collector writes OUT while merges into it run ---------------------------
total=$("$TC" collect --backend cpu --sweep "$sweep" --dry-run |
        sed -n 's/^shapes: \([0-9]*\) in the sweep.*/\1/p')
[ "${total:-0}" -gt 10 ] || fail "dry run did not count the shapes ($total)"
"$TC" collect --backend cpu --sweep "$sweep" --db out.db --quiet --rel-ci 0.000001 \
    --max-time-per-shape-ms 60 --min-reps 20 --warmup 1 --commit-rows 1 >collect.out 2>&1 &
collector=$!
# wait for the first rows, so that the merges land while it writes
for _ in $(seq 1 500); do
    [ -s out.db ] && [ "$(count out.db "SELECT count(*) FROM gemm")" -ge 2 ] 2>/dev/null && break
    sleep 0.02
done
merged=0
for i in 1 2 3 4; do
    # each waits its turn for the database's write lock
    if "$TC" db merge out.db "in$i.db" >"merge$i.out" 2>&1; then
        merged=$((merged + 1))
    else
        fail "merge $i into the database being collected failed: $(cat "merge$i.out")"
    fi
    sleep 0.1
done
kill -0 $collector 2>/dev/null || echo "note: the collector ended before the last merge"
wait $collector
rc=$?
[ "$rc" -eq 0 ] || fail "the collector failed while merges ran (exit $rc): $(tail -3 collect.out)"
kill -0 $collector 2>/dev/null && fail "the collector still runs"
integrity out.db "collector with merges"
collected=$(count out.db "SELECT count(*) FROM gemm g JOIN run r ON r.id = g.run_id
                          WHERE r.kind = 'collected'")
attention=$(count out.db "SELECT count(*) FROM attention")
[ "$((collected + attention))" -eq "$total" ] ||
    fail "OUT holds $collected GEMM and $attention attention rows of the collector's $total"
for i in $(seq 1 $merged); do
    n=$(count out.db "SELECT count(*) FROM gemm g JOIN run r ON r.id = g.run_id
                      WHERE r.source = 'in$i'")
    [ "$n" -eq "$per_input" ] || fail "merge $i: $n of its $per_input rows in OUT"
done
# the collector's run resumes in the merged file: nothing to measure
"$TC" collect --backend cpu --sweep "$sweep" --db out.db --quiet --rel-ci 0.000001 \
    --max-time-per-shape-ms 60 --min-reps 20 --warmup 1 --commit-rows 1 >collect.out 2>&1 ||
    fail "re-running the collector failed: $(tail -3 collect.out)"
grep -q "$total already stored, 0 measured" collect.out || fail "the re-run measured again: $(cat collect.out)"

# --- two merges into the same OUT at once ------------------------------------------
for round in 1 2 3; do
    rm -f two.db*
    # the last round starts without OUT: one merge creates it, the other
    # finds it made meanwhile and merges into it
    srcs="in1 in2 in3 in4 in6"
    if [ "$round" -lt 3 ]; then
        "$TC" db merge two.db in5.db >/dev/null || fail "round $round: first merge"
        srcs="in5 $srcs"
    fi
    "$TC" db merge two.db in1.db in2.db in3.db >a.out 2>&1 &
    a=$!
    "$TC" db merge two.db in4.db in6.db >b.out 2>&1 &
    b=$!
    wait $a
    ra=$?
    wait $b
    rb=$?
    [ $ra -eq 0 ] || fail "round $round: the first of two merges failed: $(cat a.out)"
    [ $rb -eq 0 ] || fail "round $round: the second of two merges failed: $(cat b.out)"
    integrity two.db "round $round"
    for src in $srcs; do
        n=$(count two.db "SELECT count(*) FROM gemm g JOIN run r ON r.id = g.run_id
                          WHERE r.source = '$src'")
        [ "$n" -eq "$per_input" ] || fail "round $round: $src has $n of its $per_input rows"
    done
    left=$(ls -d two.db.merge-* 2>/dev/null | head -3)
    [ -z "$left" ] || fail "round $round: temporary files left: $left"
done

finish merge-live
