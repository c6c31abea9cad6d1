#!/bin/bash
# Readers of a database that others write. First, readers while a writer in
# rollback mode holds its lock with its changes half written into the file
# (a compacted file, as shipped, written by any SQLite program): they wait
# and read what is committed. Then readers while an import creates a file in
# WAL mode, its stamps and schema still in the log: they read the committed,
# empty database, not "not a tilecast one". Then everything at once on one
# file: a collector (cpu backend) writing it, merges, imports and
# calibrations into it that come and go, and readers (db info, db export,
# predict gemm --db) all along. No reader may fail or call the file corrupt
# or locked, and none may see rows go missing; afterwards the file passes
# integrity_check and db check, and every row is there exactly once. A
# reader that reads the file's bytes without SQLite's locks (immutable)
# reads pages a writer is rewriting, and calls a sound file malformed.
set -u
: "${TILECAST_BIN:?TILECAST_BIN is not set}" "${TILECAST_SOURCE_ROOT:?TILECAST_SOURCE_ROOT is not set}"
: "${TILECAST_MEASURED_DATA:?TILECAST_MEASURED_DATA is not set}"
command -v sqlite3 >/dev/null || { echo "sqlite3 not installed: skip"; exit 77; }
. "$(dirname "$0")/lib.sh"
sweep=$TILECAST_SOURCE_ROOT/tests/data/sweeps/kill-long.yaml
small=$TILECAST_MEASURED_DATA/cookbook_gemm.csv
# thousands of rows a write: a writer's checkpoint rewrites many pages
big=$TILECAST_MEASURED_DATA/vidur_gemm.csv
cd "$TMP" || exit 1
if "$TC" collect --backend cpu --sweep /dev/null --db /nonexistent/x.db 2>&1 |
        grep -q "built without the cpu backend"; then
    echo "built without the cpu backend: skip"; exit 77
fi
export OPENBLAS_NUM_THREADS=1
GPU=a100-sxm4-40gb # the cookbook rows measured it: calibrate has rows to fit
BIG_GPU=h100-sxm5-80gb
MERGES=3
IMPORTS=6
# what no reader may ever say about a sound file
BAD='malformed|corrupt|locked|busy|not a tilecast|truncated|cannot open|disk I/O|error'

count() { # count DB SQL
    sqlite3 -readonly "$1" "$2" 2>/dev/null
}
rounds=0
reader() { # reader NAME CMD...: runs CMD; a failure or a bad word fails
    local name=$1 rc
    shift
    "$@" >"reader-$name.out" 2>"reader-$name.err"
    rc=$?
    if [ "$rc" -ne 0 ] || grep -Eiq "$BAD" "reader-$name.err"; then
        fail "round $rounds: $name exited $rc: $(head -c 400 "reader-$name.err")"
    fi
}
exported() { # exported NAME: the rows the last reader NAME exported
    echo $(($(wc -l <"reader-$1.out") - 1))
}

# --- readers while a writer in rollback mode holds its lock ------------------------
"$TC" db import --format csv "$big" --gpu $BIG_GPU --into rb.db >/dev/null &&
    "$TC" db import --format csv "$small" --into rb.db >/dev/null &&
    "$TC" db calibrate rb.db --gpu $GPU >/dev/null &&
    "$TC" db compact rb.db >/dev/null || fail "making rb.db"
committed=$(count rb.db "SELECT count(*) FROM gemm")
# a small page cache: the deleted pages reach the file before the end
sqlite3 rb.db >writer.out 2>&1 <<EOF &
PRAGMA cache_size = 5;
BEGIN;
DELETE FROM gemm WHERE run_id IN (SELECT id FROM run WHERE gpu_id = '$BIG_GPU');
.shell sleep 3
ROLLBACK;
EOF
writer=$!
for _ in $(seq 1 300); do
    [ -e rb.db-journal ] && break
    sleep 0.01
done
[ -e rb.db-journal ] || fail "the rollback-mode writer has not started"
rounds=locked
sleep 0.2
reader export "$TC" db export rb.db --format csv &
r1=$!
reader info "$TC" db info rb.db &
r2=$!
reader predict "$TC" predict gemm --gpu $GPU --layout NT --db rb.db 4096 4096 4096 &
r3=$!
wait $r1 $r2 $r3
wait $writer || fail "the rollback-mode writer failed: $(cat writer.out)"
n=$(exported export)
[ "$n" -eq "$committed" ] || fail "db export during a write gave $n rows, not the $committed committed"

# --- readers while an import creates the file -------------------------------------
# the import waits for its input (a pipe) with the new file made and its
# schema committed to the log, page 1 of the file itself still unstamped:
# readers see the committed, empty database
rounds=creating
mkfifo rows.csv
"$TC" db import --format csv rows.csv --into new.db >import.out 2>&1 &
importer=$!
exec 3>rows.csv
head -1 "$big" >&3
for _ in $(seq 1 300); do
    [ -s new.db-wal ] && break
    sleep 0.01
done
[ -s new.db-wal ] || fail "the import has not created its file"
reader info "$TC" db info new.db
grep -q "GPUs (0)" reader-info.out || fail "db info during the creation: $(head -3 reader-info.out)"
reader export "$TC" db export new.db --format csv
[ "$(exported export)" -eq 0 ] || fail "db export during the creation: $(exported export) rows"
reader predict "$TC" predict gemm --gpu $GPU --layout NT --db new.db 4096 4096 4096
grep "^$BIG_GPU," "$big" >&3
exec 3>&-
wait $importer || fail "the import creating new.db failed: $(cat import.out)"
[ "$(count new.db "SELECT count(*) FROM gemm")" -gt 0 ] || fail "the import stored no rows"

# --- everything at once ----------------------------------------------------------
# inputs with rows of their own, told apart by their source
for i in $(seq 1 $MERGES); do
    "$TC" db import --format csv "$small" --source "in$i" --into "in$i.db" >/dev/null ||
        fail "import in$i"
done
per_input=$(count in1.db "SELECT count(*) FROM gemm")
"$TC" db import --format csv "$big" --gpu $BIG_GPU --into imp.db >/dev/null || fail "import imp.db"
per_import=$(count imp.db "SELECT count(*) FROM gemm")
[ "${per_input:-0}" -gt 0 ] && [ "${per_import:-0}" -gt 0 ] || fail "the inputs hold no rows"
total=$("$TC" collect --backend cpu --sweep "$sweep" --dry-run |
        sed -n 's/^shapes: \([0-9]*\) in the sweep.*/\1/p')
[ "${total:-0}" -gt 10 ] || fail "dry run did not count the shapes ($total)"

"$TC" collect --backend cpu --sweep "$sweep" --db out.db --quiet --rel-ci 0.000001 \
    --max-time-per-shape-ms 40 --min-reps 20 --warmup 1 --commit-rows 1 >collect.out 2>&1 &
collector=$!
for _ in $(seq 1 500); do
    [ -s out.db ] && [ "$(count out.db "SELECT count(*) FROM gemm")" -ge 1 ] 2>/dev/null && break
    sleep 0.02
done

# writers that come and go, each opening the file, writing, checkpointing
# and closing, on after the collector is done, so that readers start both
# while a writer has the file and while none has
(
    for i in $(seq 1 $IMPORTS); do
        if [ "$i" -le $MERGES ]; then
            "$TC" db merge out.db "in$i.db" >"merge$i.out" 2>&1 ||
                echo "merge $i: $(cat "merge$i.out")"
            "$TC" db calibrate out.db --gpu $GPU >"calibrate$i.out" 2>&1 ||
                echo "calibrate $i: $(cat "calibrate$i.out")"
        fi
        "$TC" db import --format csv "$big" --gpu $BIG_GPU --source "imp$i" --into out.db \
            >"import$i.out" 2>&1 || echo "import $i: $(cat "import$i.out")"
        # a moment without a writer, for readers to start in
        sleep 0.05
    done
) >writers.err 2>&1 &
writers=$!

# readers one after another until every writer is done (30 rounds at
# least): any error at all fails, not a rate of them
rounds=0
last=0
while kill -0 $writers 2>/dev/null || kill -0 $collector 2>/dev/null || [ "$rounds" -lt 30 ]; do
    rounds=$((rounds + 1))
    reader info "$TC" db info out.db
    reader export "$TC" db export out.db --format csv
    n=$(exported export)
    [ "$n" -ge "$last" ] || fail "round $rounds: db export gave $n rows after $last"
    last=$n
    reader predict "$TC" predict gemm --gpu $GPU --layout NT --db out.db 4096 4096 4096
    [ "$failures" -gt 20 ] && break
done
wait $collector
rc=$?
[ "$rc" -eq 0 ] || fail "the collector failed (exit $rc): $(tail -3 collect.out)"
wait $writers
[ -s writers.err ] && fail "a writer failed: $(head -c 600 writers.err)"
echo "$rounds reader rounds"

# the file, and every row in it exactly once
r=$(sqlite3 -readonly out.db "PRAGMA integrity_check" 2>&1)
[ "$r" = ok ] || fail "integrity_check: $r"
run 0 "$TC" db check out.db
collected=$(count out.db "SELECT count(*) FROM gemm g JOIN run r ON r.id = g.run_id
                          WHERE r.kind = 'collected'")
attention=$(count out.db "SELECT count(*) FROM attention")
[ "$((collected + attention))" -eq "$total" ] ||
    fail "the file holds $collected GEMM and $attention attention rows of the collector's $total"
for i in $(seq 1 $MERGES); do
    n=$(count out.db "SELECT count(*) FROM gemm g JOIN run r ON r.id = g.run_id
                      WHERE r.source = 'in$i'")
    [ "$n" -eq "$per_input" ] || fail "merge $i: $n of its $per_input rows"
done
for i in $(seq 1 $IMPORTS); do
    n=$(count out.db "SELECT count(*) FROM gemm g JOIN run r ON r.id = g.run_id
                      WHERE r.source = 'imp$i'")
    [ "$n" -eq "$per_import" ] || fail "import $i: $n of its $per_import rows"
done
all=$(count out.db "SELECT count(*) FROM gemm")
[ "$all" -eq "$((collected + MERGES * per_input + IMPORTS * per_import))" ] ||
    fail "the file holds $all GEMM rows, not the $collected + $MERGES x $per_input +" \
        "$IMPORTS x $per_import written"
[ "$(count out.db "SELECT count(*) FROM calibration WHERE gpu_id = '$GPU'")" -ge 1 ] ||
    fail "no calibration of $GPU stored"

finish live-readers
