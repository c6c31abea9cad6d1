#!/bin/bash
# A cpu-backend collection stores its host as a CPU (vendor and arch cpu,
# schema v3 on), not as an nvidia volta GPU, and never under a GPU's spec (--gpu); `db calibrate` on it says that a
# CPU collection cannot be calibrated against GPU specs, and calibrates the
# GPUs of a file that also holds one; a v2 file of such a collection reads
# as it is read-only, unchanged, and migrates when opened for writing.
set -u
: "${TILECAST_BIN:?TILECAST_BIN is not set}" "${TILECAST_SOURCE_ROOT:?TILECAST_SOURCE_ROOT is not set}"
command -v sqlite3 >/dev/null || { echo "sqlite3 not installed: skip"; exit 77; }
. "$(dirname "$0")/lib.sh"
DATA=$TILECAST_SOURCE_ROOT/tests/data
cd "$TMP" || exit 1
if "$TC" collect --backend cpu --sweep /dev/null --db /nonexistent/x.db 2>&1 |
        grep -q "built without the cpu backend"; then
    echo "built without the cpu backend: skip"; exit 77
fi
export OPENBLAS_NUM_THREADS=1

q() { # q DB SQL
    sqlite3 -readonly "$1" "$2" 2>&1
}

run 0 "$TC" collect --backend cpu --sweep "$DATA/sweeps/kill.yaml" --db cpu.db --quiet \
    --max-time-per-shape-ms 10
host=$(q cpu.db "SELECT gpu_id FROM run")
[ -n "$host" ] || fail "no run stored"
[ "$(q cpu.db "SELECT vendor || ' ' || arch FROM gpu WHERE id = '$host'")" = "cpu cpu" ] ||
    fail "the host is stored as $(q cpu.db "SELECT vendor, arch FROM gpu"), not as a CPU"
[ "$(q cpu.db "SELECT json_extract(spec_json, '$.vendor') FROM gpu")" = cpu ] ||
    fail "spec_json disagrees: $(q cpu.db "SELECT spec_json FROM gpu")"
[ "$(q cpu.db "PRAGMA user_version")" = 4 ] || fail "not schema v4"
run 0 "$TC" db check cpu.db

# a CPU's timings are never filed as a GPU's: --gpu with the cpu backend is
# refused before anything is written, and the file is left as it was
before=$(q cpu.db "SELECT count(*) FROM gemm")
run 2 "$TC" collect --backend cpu --gpu a100-sxm4-80gb --sweep "$DATA/sweeps/kill.yaml" \
    --db cpu.db --quiet --max-time-per-shape-ms 10
has err "measures the host CPU"
has err "leave out --gpu"
[ "$(q cpu.db "SELECT count(*) FROM gemm")" = "$before" ] || fail "rows were added under --gpu"
[ "$(q cpu.db "SELECT count(*) FROM gpu WHERE id = 'a100-sxm4-80gb'")" = 0 ] ||
    fail "the A100 was stored for a CPU collection"
run 2 "$TC" collect --backend cpu --gpu a100-sxm4-80gb --sweep "$DATA/sweeps/kill.yaml" \
    --db new.db --quiet
[ -e new.db ] && fail "a refused collection created its database"

# calibrating it says why it cannot be done, with or without --gpu
for args in "" "--gpu $host" "--dry-run"; do
    # shellcheck disable=SC2086
    run 2 "$TC" db calibrate cpu.db $args
    has err "cannot be calibrated against GPU specs"
    has err "cpu backend"
    grep -q "neither in the specs" "$TMP/err" && fail "calibrate $args: $(cat "$TMP/err")"
done
[ "$(q cpu.db "SELECT count(*) FROM calibration")" = 0 ] || fail "a CPU calibration was stored"

# a file with GPU rows besides: the GPUs are calibrated, the CPU left out
run 0 "$TC" db import --format csv "$DATA/db/vidur-small.csv" --into mixed.db
run 0 "$TC" db merge mixed.db cpu.db
run 0 "$TC" db calibrate mixed.db
grep -q "$host" "$TMP/out" && fail "the CPU host was calibrated: $(cat "$TMP/out")"
[ "$(q mixed.db "SELECT count(*) FROM calibration WHERE gpu_id = '$host'")" = 0 ] ||
    fail "a CPU calibration was stored in the mixed file"
[ "$(q mixed.db "SELECT count(*) FROM calibration")" -gt 0 ] || fail "no GPU calibrated"

# a v2 file of the same collection, as v2 tilecast wrote it: the host stored
# as nvidia volta, the gpu table without the cpu vendor (v3 changed only it),
# the attention table and its view as v2 and v3 made them (v4 added the KV
# cache's columns)
v3_attention=$(sed -n '/^CREATE TABLE attention (/,/^);/p; /^CREATE VIEW attention_best/,/;$/p' \
    "$DATA/db/schema-v3.sql")
v3_columns="id, run_id, impl, dtype, batch, heads, kv_heads, seq_q, seq_kv, head_dim, head_dim_vo,
    sliding_window, causal, backward, deterministic, time_us, min_us, spread_pct, reps, scores_us,
    softmax_us, values_us, status, message"
cp cpu.db v2.db
run 0 "$TC" db compact v2.db
sqlite3 v2.db "UPDATE gpu SET vendor = 'nvidia', arch = 'volta',
                 spec_json = json_set(spec_json, '$.vendor', 'nvidia', '$.arch', 'volta');
               DROP VIEW attention_best; ALTER TABLE attention RENAME TO attention_v4;
               $v3_attention
               INSERT INTO attention ($v3_columns) SELECT $v3_columns FROM attention_v4;
               DROP TABLE attention_v4;
               PRAGMA writable_schema = ON;
               UPDATE sqlite_schema SET sql = replace(sql, ' OR vendor = ''cpu''', '')
                 WHERE name = 'gpu';
               PRAGMA writable_schema = OFF;
               PRAGMA user_version = 2;
               UPDATE meta SET value = '2' WHERE key = 'schema_version';" ||
    fail "making the v2 file"
cp v2.db v2.orig
run 0 "$TC" db info v2.db
has out "schema v2"
run 0 "$TC" db export v2.db --format csv -o v2.csv
cmp -s v2.db v2.orig || fail "a read-only command changed the v2 file"
[ ! -e v2.db-wal ] || fail "a read-only command left v2.db-wal"
run 0 "$TC" db migrate v2.db
[ "$(q v2.db "PRAGMA user_version")" = 4 ] || fail "db migrate did not migrate v2"
[ "$(q v2.db "SELECT vendor || ' ' || arch FROM gpu")" = "cpu cpu" ] ||
    fail "the migration left the host as $(q v2.db "SELECT vendor, arch FROM gpu")"
run 0 "$TC" db check v2.db
[ "$(q v2.db "SELECT count(*) FROM gemm")" = "$(q cpu.db "SELECT count(*) FROM gemm")" ] ||
    fail "the migration lost rows"
[ "$(q v2.db "SELECT count(*) FROM attention WHERE page_size = 0 AND kv_dtype = dtype")" = \
    "$(q cpu.db "SELECT count(*) FROM attention")" ] || fail "the migration lost attention rows"
run 2 "$TC" db calibrate v2.db
has err "cannot be calibrated against GPU specs"

finish cpu-host
