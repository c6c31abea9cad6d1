#!/bin/bash
# Temporary files a killed command leaves behind (SIGKILL cannot be caught):
# X.creating-PID (collect creating its database), X.merge-PID (db merge)
# and X.tmp-PID (an output being written), with their -wal, -shm and
# -journal, are removed by the next run of the command that makes them once
# their process is gone. Those of a live process, or of another host (a
# shared file system), are left alone.
set -u
: "${TILECAST_BIN:?TILECAST_BIN is not set}" "${TILECAST_SOURCE_ROOT:?TILECAST_SOURCE_ROOT is not set}"
. "$(dirname "$0")/lib.sh"
DATA=$TILECAST_SOURCE_ROOT/tests/data
cd "$TMP" || exit 1
host=$(hostname)

# a PID no process has: one that ran and was waited for
sleep 0 &
dead=$!
wait $dead
# a live process, kept until the end
sleep 600 &
live=$!
trap 'kill $live 2>/dev/null; rm -rf "$TMP"' EXIT

# leave TARGET TAG: the files a process killed while making TARGET leaves
leave() {
    local base=$1.$2
    for name in "$base-$dead" "$base-$dead@$host"; do
        for part in "" -wal -shm -journal; do
            printf 'left by a killed run\n' >"$name$part"
        done
    done
    printf 'in use\n' >"$base-$live@$host"
    printf 'in use\n' >"$base-$live@$host-wal"
    printf 'elsewhere\n' >"$base-$dead@another-host.example"
    printf 'not ours\n' >"$base-notapid"
    printf 'not ours\n' >"$1.$2x-$dead"
}
# cleaned TARGET TAG WHAT: the dead process's files are gone, the others stay
cleaned() {
    local base=$1.$2 left
    left=$(ls -d "$base-$dead"* 2>/dev/null | grep -v '@another-host' | head -3)
    [ -z "$left" ] || fail "$3: stale files left: $left"
    for keep in "$base-$live@$host" "$base-$live@$host-wal" "$base-$dead@another-host.example" \
        "$base-notapid" "$1.$2x-$dead"; do
        [ -e "$keep" ] || fail "$3: removed $keep, which is not stale"
    done
}

# --- collect: X.creating-PID --------------------------------------------------
printf 'name: tiny\ndtypes: [fp32]\nsets:\n  - m: [16]\n    n: [16]\n    k: [16]\n' >tiny.yaml
if "$TC" collect --backend cpu --sweep tiny.yaml --dry-run >/dev/null 2>&1; then
    leave c.db creating
    run 0 "$TC" collect --backend cpu --sweep tiny.yaml --db c.db --quiet
    cleaned c.db creating "collect --db c.db"
    # also when the database exists already
    leave c.db creating
    run 0 "$TC" collect --backend cpu --sweep tiny.yaml --db c.db --quiet
    cleaned c.db creating "collect --db c.db (existing)"
else
    echo "built without the cpu backend: collect not checked"
fi

# --- db merge: X.merge-PID -----------------------------------------------------
"$TC" db import --format csv "$DATA/db/vidur-small.csv" --into in.db >/dev/null ||
    fail "import of the test data failed"
leave m.db merge
run 0 "$TC" db merge m.db in.db
cleaned m.db merge "db merge m.db"
# a failed merge cleans up too
leave m.db merge
printf 'not a database\n' >junk.db
run 2 "$TC" db merge m.db junk.db
cleaned m.db merge "a failed db merge"

# --- outputs: X.tmp-PID ----------------------------------------------------------
printf 'm,n,k\n128,128,128\n' >in.csv
leave out.csv tmp
run 0 "$TC" predict gemm --gpu h100-sxm5-80gb --analytical --input in.csv --output out.csv
cleaned out.csv tmp "predict gemm --output out.csv"
leave e.csv tmp
run 0 "$TC" db export in.db --output e.csv
cleaned e.csv tmp "db export --output e.csv"

# the names of what a run makes are the ones cleaned: a merge killed while
# it writes leaves X.merge-PID@HOST, which the next merge removes
big=$(mktemp -d)
for i in $(seq 1 40); do cp in.db "$big/in$i.db"; done
"$TC" db merge k.db "$big"/in*.db >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 200); do
    [ -e "k.db.merge-$pid@$host" ] && break
    sleep 0.01
done
if [ -e "k.db.merge-$pid@$host" ]; then
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    [ -e "k.db.merge-$pid@$host" ] || fail "the killed merge left no k.db.merge-$pid@$host"
    run 0 "$TC" db merge k.db in.db
    left=$(ls -d k.db.merge-* 2>/dev/null | head -3)
    [ -z "$left" ] || fail "the next merge left the killed one's files: $left"
else
    wait $pid
    echo "the merge finished before it could be killed: not checked"
fi
rm -rf "$big"

finish stale-temps
