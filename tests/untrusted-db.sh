#!/usr/bin/env bash
# A database file someone shipped cannot crash tilecast, hang it, or run
# anything: random bytes, truncated and damaged files, SQLite files that are
# not tilecast's, and valid tilecast files crafted with absurd values, wrong
# types, huge strings, a foreign schema, triggers and views. Reading commands
# must refuse them (exit 2) or cope (exit 0, nothing poisoned), never modify
# them, and never fail as if it were a runtime error (3) or die on a signal.
# The CI runs this under ASan and UBSan too.
set -uo pipefail
: "${TILECAST_BIN:?TILECAST_BIN must name the built tilecast}"
src=${TILECAST_SOURCE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
tc=$TILECAST_BIN
if ! command -v sqlite3 >/dev/null 2>&1; then
    echo "SKIP: the sqlite3 command is needed to craft files"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
failures=0
checks=0
GPU=a100-sxm4-80gb
SHAPE=(4096 10240 8192) # a measured row of the fixture, NT

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# run NAME ARGS...: runs tilecast with a time limit; sets rc, leaves
# stdout/stderr in out/err.
run() {
    timeout 60 "$tc" "$@" >out 2>err </dev/null
    rc=$?
    checks=$((checks + 1))
    if [ "$rc" -eq 124 ]; then
        fail "tilecast $* hung (killed after 60 s)"
    elif [ "$rc" -gt 3 ]; then
        fail "tilecast $* crashed (exit $rc): $(tail -c 600 err)"
    fi
}

# refused FILE: every reading command exits 2 with a message naming FILE.
refused() {
    local f=$1 sum
    sum=$(sha256sum "$f")
    for cmd in "db info" "db check" "db export"; do
        # shellcheck disable=SC2086
        run $cmd "$f" $([ "$cmd" = "db export" ] && echo --format csv)
        [ "$rc" -eq 2 ] || fail "tilecast $cmd $f: exit $rc, expected 2: $(head -c 300 err)"
        grep -qF "$f" err || fail "tilecast $cmd $f: the error does not name the file"
    done
    run predict gemm --gpu $GPU --layout NT --db "$f" "${SHAPE[@]}"
    [ "$rc" -eq 2 ] || fail "predict gemm --db $f: exit $rc, expected 2: $(head -c 300 err)"
    rm -f merged.db
    run db merge merged.db "$f"
    [ "$rc" -eq 2 ] || fail "db merge merged.db $f: exit $rc, expected 2: $(head -c 300 err)"
    [ "$(sha256sum "$f")" = "$sum" ] || fail "$f was modified"
    ls "$f"-wal "$f"-shm "$f"-journal >/dev/null 2>&1 && fail "$f got a -wal/-shm/-journal"
}

# poisoned FILE WHAT: a valid tilecast file with bad content. `db check`
# finds it (exit 2, naming the file); `db info` and `db export` exit 0 or 2;
# a prediction with it either refuses the file (2) or ignores the bad row
# (0, and then the answer is finite and not the poisoned measurement).
poisoned() {
    local f=$1 what=$2 sum t
    sum=$(sha256sum "$f")
    run db check "$f"
    [ "$rc" -eq 2 ] || fail "db check $f ($what): exit $rc, expected 2: $(head -c 300 err)"
    for cmd in "db info" "db export"; do
        # shellcheck disable=SC2086
        run $cmd "$f" $([ "$cmd" = "db export" ] && echo --format csv)
        [ "$rc" -eq 0 ] || [ "$rc" -eq 2 ] ||
            fail "tilecast $cmd $f ($what): exit $rc, expected 0 or 2: $(head -c 300 err)"
    done
    run predict gemm --gpu $GPU --layout NT --json --db "$f" "${SHAPE[@]}"
    if [ "$rc" -eq 0 ]; then
        t=$(sed -n 's/.*"time_us": *\([^,]*\),*/\1/p' out | head -1)
        case $t in
        '' | *nan* | *inf* | -* | 0 | 0.0 | *e-*) fail "predict gemm --db $f ($what): time_us '$t'" ;;
        esac
        grep -Eq '"tflops": *(inf|nan|-)' out && fail "predict gemm --db $f ($what): $(grep tflops out)"
    elif [ "$rc" -ne 2 ]; then
        fail "predict gemm --db $f ($what): exit $rc, expected 2 (or 0): $(head -c 300 err)"
    fi
    [ "$(sha256sum "$f")" = "$sum" ] || fail "$f ($what) was modified by reading it"
}

# A real tilecast file to start from: four measured Vidur rows.
"$tc" db import --format csv --into good.db "$src/tests/data/python-gemm.csv" >/dev/null ||
    { echo "FAIL: cannot build the base database"; exit 1; }
run db check good.db
[ "$rc" -eq 0 ] || fail "db check of the base database: exit $rc: $(cat err)"
run predict gemm --gpu $GPU --layout NT --json --db good.db "${SHAPE[@]}"
grep -q '"time_us": 2842' out || fail "the base database does not give the measured 2842 us"
size=$(stat -c %s good.db)

# --- not a (tilecast) database: refused ----------------------------------
: >empty.db
refused empty.db
head -c 65536 /dev/urandom >random.db
refused random.db
{ printf 'SQLite format 3\0'; head -c 8192 /dev/urandom; } >random-header.db
refused random-header.db
head -c $((size / 2)) good.db >truncated.db
refused truncated.db
head -c 4096 good.db >first-page.db
refused first-page.db
head -c 50 good.db >short-header.db
refused short-header.db
cp good.db page-size.db
printf '\x00\x07' | dd of=page-size.db bs=1 seek=16 conv=notrunc status=none
refused page-size.db
cp good.db damaged.db # overwrite a b-tree page in the middle
head -c 4096 /dev/urandom | dd of=damaged.db bs=4096 seek=$((size / 4096 / 2)) conv=notrunc \
    status=none
refused damaged.db
sqlite3 other.db "CREATE TABLE t(x); INSERT INTO t VALUES (1);"
refused other.db
cp good.db newer.db
sqlite3 newer.db "PRAGMA user_version = 99;"
refused newer.db
cp good.db foreign-meta.db
sqlite3 foreign-meta.db "UPDATE meta SET value = '7' WHERE key = 'schema_version';"
refused foreign-meta.db
cp good.db no-gemm.db
sqlite3 no-gemm.db "DROP VIEW gemm_best; DROP VIEW gemm_tflops; DROP TABLE gemm;"
refused no-gemm.db
cp good.db view-gemm.db
sqlite3 view-gemm.db "DROP VIEW gemm_best; DROP VIEW gemm_tflops; ALTER TABLE gemm RENAME TO g0;
    CREATE VIEW gemm AS SELECT * FROM g0;"
refused view-gemm.db
cp good.db wrong-columns.db
sqlite3 wrong-columns.db "DROP VIEW gemm_best; DROP VIEW gemm_tflops; DROP TABLE gemm;
    CREATE TABLE gemm (id INTEGER PRIMARY KEY, junk);"
refused wrong-columns.db
ln -s good.db link.db
mkdir dir.db
run db info dir.db
[ "$rc" -eq 2 ] || fail "db info on a directory: exit $rc, expected 2"

# --- valid files, poisoned content ---------------------------------------
poison() { # name, what, SQL (CHECK constraints off, as a hostile writer would)
    cp good.db "$1.db"
    sqlite3 "$1.db" "PRAGMA ignore_check_constraints = ON; $3" ||
        { fail "could not craft $1.db"; return; }
    poisoned "$1.db" "$2"
}
poison neg-dim "a negative dimension" "UPDATE gemm SET m = -5 WHERE id = 1;"
poison zero-batch "batch 0" "UPDATE gemm SET batch = 0 WHERE id = 1;"
poison huge-dim "INT64_MAX dimensions" \
    "UPDATE gemm SET m = 9223372036854775807, n = 9223372036854775807 WHERE id = 1;"
poison inf-time "an infinite time" "UPDATE gemm SET time_us = 1e999 WHERE id = 1;"
poison neg-time "a negative time" "UPDATE gemm SET time_us = -3 WHERE id = 1;"
poison tiny-time "a time no timer gives" "UPDATE gemm SET time_us = 1e-300 WHERE id = 1;"
poison fast-row "a throughput no device has" "UPDATE gemm SET time_us = 1e-3 WHERE id = 1;"
poison tiny-bandwidth "a GPU snapshot with 1e-300 GB/s" "UPDATE gpu SET mem_bw_gbps = 1e-300;"
poison null-time "an ok row without a time" "UPDATE gemm SET time_us = NULL WHERE id = 1;"
poison text-time "a text time" "UPDATE gemm SET time_us = 'fast' WHERE id = 1;"
poison blob-dim "a blob dimension" "UPDATE gemm SET m = x'00ff00' WHERE id = 1;"
poison real-dim "a fractional dimension" "UPDATE gemm SET n = 4096.5 WHERE id = 1;"
poison bad-dtype "an unknown dtype" "UPDATE gemm SET dtype = 'fp99' WHERE id = 1;"
poison bad-status "an unknown status" "UPDATE gemm SET status = 'great' WHERE id = 1;"
poison huge-strings "multi-megabyte strings" \
    "UPDATE gemm SET algo = printf('%.*c', 5000000, 'x'), message = printf('%.*c', 5000000, 'y')
     WHERE id = 1; UPDATE run SET source = printf('%.*c', 5000000, 'z');"
poison bad-gpu "an absurd GPU snapshot" \
    "UPDATE gpu SET units = -1, mem_bw_gbps = -5, name = printf('%.*c', 100000, 'n');"
poison dangling-run "a row of a missing run" "UPDATE gemm SET run_id = 999 WHERE id = 1;"
poison trigger "a trigger" \
    "CREATE TRIGGER evil AFTER INSERT ON gemm BEGIN DELETE FROM gemm; DELETE FROM run; END;"
poison endless-view "a view that never ends" \
    "DROP VIEW gemm_best; CREATE VIEW gemm_best AS WITH RECURSIVE c(x) AS
     (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c;"

# The attention table: a valid measured row, then poisoned copies of it.
cp good.db attention.db
sqlite3 attention.db "INSERT INTO attention (run_id, impl, dtype, batch, heads, kv_heads, seq_q,
    seq_kv, head_dim, head_dim_vo, causal, backward, kv_dtype, time_us, min_us, spread_pct, reps,
    status) VALUES (1, 'flash', 'fp16', 1, 8, 8, 1024, 1024, 64, 64, 0, 0, 'fp16', 50.0, 49.0, 1.0,
    10, 'ok');" ||
    fail "could not add an attention row"
run db check attention.db
[ "$rc" -eq 0 ] || fail "db check of a valid attention row: exit $rc: $(cat err)"
attention_poison() { # name, what, SQL
    local t
    cp attention.db "$1.db"
    sqlite3 "$1.db" "PRAGMA ignore_check_constraints = ON; $3" ||
        { fail "could not craft $1.db"; return; }
    run db check "$1.db"
    [ "$rc" -eq 2 ] || fail "db check $1.db ($2): exit $rc, expected 2: $(head -c 300 err)"
    run db info "$1.db"
    [ "$rc" -eq 0 ] || [ "$rc" -eq 2 ] || fail "db info $1.db ($2): exit $rc"
    run predict attention --gpu $GPU --db "$1.db" --batch 1 --heads 8 --seq 1024 \
        --head-dim 64 --json
    if [ "$rc" -eq 0 ]; then
        t=$(sed -n 's/.*"time_us": *\([^,]*\),*/\1/p' out | head -1)
        case $t in
        '' | *nan* | *inf* | -* | 0 | 0.0) fail "predict attention --db $1.db ($2): time_us '$t'" ;;
        esac
    elif [ "$rc" -ne 2 ]; then
        fail "predict attention --db $1.db ($2): exit $rc, expected 2 (or 0): $(head -c 300 err)"
    fi
}
attention_poison attention-neg-heads "negative heads" "UPDATE attention SET heads = -8;"
attention_poison attention-inf-time "an infinite time" "UPDATE attention SET time_us = 1e999;"
attention_poison attention-text-impl "an unknown implementation" "UPDATE attention SET impl = 'magic';"
attention_poison attention-causal "causal neither 0 nor 1" "UPDATE attention SET causal = 7;"
attention_poison attention-huge "huge sizes" \
    "UPDATE attention SET seq_q = 9223372036854775807, seq_kv = 9223372036854775807;"
attention_poison attention-neg-vo "a negative V/O head dim" "UPDATE attention SET head_dim_vo = -64;"
attention_poison attention-text-vo "a V/O head dim that is text" \
    "UPDATE attention SET head_dim_vo = 'sixty-four';"
attention_poison attention-window "a window without the causal mask" \
    "UPDATE attention SET sliding_window = 128;"
attention_poison attention-det "deterministic neither 0 nor 1" \
    "UPDATE attention SET deterministic = 3;"
attention_poison attention-det-fwd "a deterministic forward" \
    "UPDATE attention SET deterministic = 1;"
attention_poison attention-neg-page "a negative page size" "UPDATE attention SET page_size = -16;"
attention_poison attention-text-page "a page size that is text" \
    "UPDATE attention SET page_size = 'sixteen';"
attention_poison attention-kv-dtype "an unknown KV-cache dtype" \
    "UPDATE attention SET kv_dtype = 'fp4';"

# A trigger in a shipped file must not run when tilecast writes to it:
# importing into it either is refused or keeps every row.
cp trigger.db trigger-write.db
run db import --format csv --into trigger-write.db "$src/tests/data/python-gemm.csv"
rows=$(sqlite3 trigger-write.db "SELECT COUNT(*) FROM gemm")
if [ "$rc" -eq 0 ] && [ "$rows" != 4 ]; then
    fail "importing into a file with a trigger ran it: $rows GEMM rows left of 4"
elif [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ]; then
    fail "importing into a file with a trigger: exit $rc"
fi
rm -f merged.db
run db merge merged.db good.db trigger.db
if [ "$rc" -eq 0 ]; then
    [ "$(sqlite3 merged.db "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger'")" = 0 ] ||
        fail "db merge copied a trigger into its output"
    [ "$(sqlite3 merged.db "SELECT COUNT(*) FROM gemm")" = 4 ] ||
        fail "db merge with a trigger-carrying input lost rows"
elif [ "$rc" -ne 2 ]; then
    fail "db merge with a trigger-carrying input: exit $rc"
fi

# collect into a file that is not a tilecast database: refused as input
# (exit 2), the path named once, the file untouched
printf 'not a database, a note\n' >notdb.db
before=$(sha256sum <notdb.db)
"$tc" collect --backend cpu --sweep quick --db notdb.db >out.txt 2>err.txt
rc=$?
checks=$((checks + 1))
[ "$rc" -eq 2 ] || fail "collect into a non-tilecast file: exit $rc"
[ "$(grep -o 'notdb.db' err.txt | wc -l)" -eq 1 ] || fail "collect into a non-tilecast file: $(cat err.txt)"
[ "$(sha256sum <notdb.db)" = "$before" ] || fail "collect modified a non-tilecast file"

echo "$checks commands run, $failures failures"
[ "$failures" -eq 0 ]
