#!/bin/bash
# Two collectors of one configuration started together on a database that
# holds no run of it (a new file, or one with other rows): there must be one
# run, whoever comes first, and each shape stored once; neither collector may
# fail, and the summaries must add up to the sweep (a shape the other stored
# first counts as already stored, not as measured).
set -u
: "${TILECAST_BIN:?TILECAST_BIN is not set}" "${TILECAST_SOURCE_ROOT:?TILECAST_SOURCE_ROOT is not set}"
command -v sqlite3 >/dev/null || { echo "sqlite3 not installed: skip"; exit 77; }
. "$(dirname "$0")/lib.sh"
DATA=$TILECAST_SOURCE_ROOT/tests/data
sweep=$DATA/sweeps/kill.yaml
cd "$TMP" || exit 1
if "$TC" collect --backend cpu --sweep /dev/null --db /nonexistent/x.db 2>&1 |
        grep -q "built without the cpu backend"; then
    echo "built without the cpu backend: skip"; exit 77
fi
export OPENBLAS_NUM_THREADS=1

count() { # count DB SQL
    sqlite3 -readonly "$1" "$2" 2>/dev/null
}
# summary FILE FIELD: "already stored" or "measured" of a collector's summary
summary() {
    sed -n "s/.*; \([0-9]*\) already stored, \([0-9]*\) measured .*/\1 \2/p" "$1" |
        { read -r skipped measured; [ "$2" = skipped ] && echo "${skipped:-}" || echo "${measured:-}"; }
}

total=$("$TC" collect --backend cpu --sweep "$sweep" --dry-run |
        sed -n 's/^shapes: \([0-9]*\) in the sweep.*/\1/p')
[ "${total:-0}" -gt 10 ] || fail "dry run did not count the shapes ($total)"
args=(collect --backend cpu --sweep "$sweep" --db t.db --quiet --max-time-per-shape-ms 20)

for round in 1 2 3 4; do
    rm -f t.db t.db-wal t.db-shm
    # the last round starts on an existing file whose only run is an import
    if [ "$round" -eq 4 ]; then
        "$TC" db import --format csv "$DATA/db/vidur-small.csv" --source other --into t.db \
            >/dev/null || fail "round $round: import"
    fi
    "$TC" "${args[@]}" >a.out 2>&1 &
    a=$!
    "$TC" "${args[@]}" >b.out 2>&1 &
    b=$!
    wait $a
    ra=$?
    wait $b
    rb=$?
    [ $ra -eq 0 ] || fail "round $round: the first collector failed (exit $ra): $(cat a.out)"
    [ $rb -eq 0 ] || fail "round $round: the second collector failed (exit $rb): $(cat b.out)"
    runs=$(count t.db "SELECT count(*) FROM run WHERE kind = 'collected'")
    [ "$runs" = 1 ] || fail "round $round: $runs collected runs of one configuration, not 1"
    rows=$(count t.db "SELECT (SELECT count(*) FROM gemm g JOIN run r ON r.id = g.run_id
                                WHERE r.kind = 'collected') + (SELECT count(*) FROM attention)")
    [ "$rows" = "$total" ] || fail "round $round: $rows rows stored for the sweep's $total shapes"
    twice=$(count t.db "SELECT count(*) FROM (SELECT 1 FROM gemm g JOIN run r ON r.id = g.run_id
                        WHERE r.kind = 'collected'
                        GROUP BY m, n, k, batch, dtype, layout HAVING count(*) > 1)")
    [ "$twice" = 0 ] || fail "round $round: $twice GEMM shapes stored more than once"
    for f in a.out b.out; do
        s=$(summary $f skipped)
        m=$(summary $f measured)
        [ -n "$s" ] && [ -n "$m" ] || { fail "round $round: no summary in $f: $(cat $f)"; continue; }
        [ $((s + m)) -eq "$total" ] ||
            fail "round $round: $f: $s already stored + $m measured is not the sweep's $total"
    done
    measured=$(( $(summary a.out measured) + $(summary b.out measured) ))
    [ "$measured" -eq "$total" ] ||
        fail "round $round: the two collectors stored $measured measurements of $total shapes"
    "$TC" db check t.db >/dev/null 2>&1 || fail "round $round: db check fails"
done

# the run is complete: a re-run finds it and measures nothing
"$TC" "${args[@]}" >a.out 2>&1 || fail "re-running the collector failed: $(cat a.out)"
grep -q "(resumed).* $total already stored, 0 measured" a.out ||
    fail "the re-run did not resume the one run: $(cat a.out)"

finish collect-together
