#!/bin/bash
# tilecast db info/check/import/export/merge/migrate/compact/bench: output,
# exit codes, and refused files left untouched.
set -u
: "${TILECAST_BIN:?TILECAST_BIN is not set}" "${TILECAST_SOURCE_ROOT:?TILECAST_SOURCE_ROOT is not set}"
. "$(dirname "$0")/lib.sh"
DATA=$TILECAST_SOURCE_ROOT/tests/data/db

# --- help and usage ----------------------------------------------------------
subs="info check import export merge calibrate migrate compact bench"
run 0 "$TC" db --help
for sub in $subs; do
    has out "tilecast db $sub"
done
has out "tilecast db SUBCOMMAND --help"
# each subcommand prints its own help (usage line first, options, an
# example), not the overview; the man page carries them all
"$TC" help --man-text db >"$TMP/man" 2>&1 || fail "help --man-text db exited non-zero"
for sub in $subs; do
    run 0 "$TC" db "$sub" --help
    head -1 "$TMP/out" | grep -q "^Usage: tilecast db $sub " ||
        fail "db $sub --help does not start with its own usage line: $(head -1 "$TMP/out")"
    has out "Example"
    grep -q "^Subcommands:" "$TMP/out" && fail "db $sub --help prints the db overview"
    grep -qE "^(Usage|  or): tilecast db $sub " "$TMP/man" || fail "help2man's text of db lacks db $sub"
done
run 0 "$TC" db import --help
for opt in --format --into --gpu --dtype --timing --source --licence --skip-untimed; do
    has out "$opt"
done
run 0 "$TC" db export --help
for opt in --format --gpu --output "csv (default)"; do
    has out "$opt"
done
run 0 "$TC" db info --help
has out "--json"
has out "--csv"
run 0 "$TC" db bench --help
has out "--rows N       rows to insert (default 200000)"
has out "--batch N      rows per transaction (default 10000)"
run 0 "$TC" db compact "$TMP/whatever.db" --help
has out "Usage: tilecast db compact"
run 1 "$TC" db import --bogus
has err "tilecast db import --help"
run 1 "$TC" db
run 1 "$TC" db frobnicate
run 1 "$TC" db import --format csv "$DATA/vidur-small.csv"
has err "--into"
run 1 "$TC" db import --format xml "$DATA/vidur-small.csv" --into "$TMP/x.db"
run 1 "$TC" db import --format cookbook "$DATA/cookbook-a100-mm.log" --into "$TMP/x.db"
has err "give --gpu"
run 2 "$TC" db export "$TMP/x.db"
[ -e "$TMP/x.db" ] && fail "a usage error created a database"

# --- import, info, check -----------------------------------------------------
run 0 "$TC" db import --format csv "$DATA/vidur-small.csv" "$DATA/neusight-small.csv" --into "$TMP/a.db"
has out "imported 12 rows"
has out "1 rows repeated a shape"
run 0 "$TC" db import --format cookbook --gpu a100-sxm4-40gb "$DATA/cookbook-a100-mm.log" \
    "$DATA/cookbook-a100-bmm.log" --into "$TMP/a.db"
has out "imported 13 rows"
run 0 "$TC" db import --format mamf --gpu h100-sxm5-80gb "$DATA/mamf-v2-summary.log" --into "$TMP/a.db"
has out "imported 1 rows"
# a summary line's shape is checked like a per-shape line's: a dimension
# over 2^40 is refused by name and the database keeps what it held
sed 's/2048x2048x13312/2048x2048x1331244444444/' "$DATA/mamf-v2-summary.log" >"$TMP/mamf-huge.log"
run 2 "$TC" db import --format mamf --gpu h100-sxm5-80gb "$TMP/mamf-huge.log" --into "$TMP/a.db"
has err "mamf-huge.log:8: dimension 1331244444444 out of range"
run 0 "$TC" db check "$TMP/a.db"
# mamf-finder's events bracket the kernel alone (a cache flush before each
# call, one synchronize after all): its row is kernel time, and the shape it
# measured answers with the measurement, not a faster fit through it
run 0 "$TC" db import --format mamf --gpu h100-sxm5-80gb "$DATA/mamf-v2-summary.log" --into "$TMP/mamf.db"
run 0 "$TC" predict gemm --gpu h100-sxm5-80gb --dtype bf16 --layout NT --db "$TMP/mamf.db" 2048 2048 13312
has out "794.50"
has out "source         measurement"
[ -s "$TMP/err" ] && fail "a kernel-time measurement came with a note: $(cat "$TMP/err")"
# a measurement of another timing class is returned too, and says how it was timed
run 0 "$TC" db import --format mamf --gpu h100-sxm5-80gb --timing wall-avg-incl-launch \
    "$DATA/mamf-v2-summary.log" --into "$TMP/mamf-wall.db"
run 0 "$TC" predict gemm --gpu h100-sxm5-80gb --dtype bf16 --layout NT --db "$TMP/mamf-wall.db" 2048 2048 13312
has out "794.50"
has out "source         measurement"
has err "measured with wall timing only"
# a misspelt method label is stored as given, with a note of what it counts as
run 0 "$TC" db import --format mamf --gpu h100-sxm5-80gb --timing wal-avg \
    "$DATA/mamf-v2-summary.log" --into "$TMP/mamf-typo.db"
has err "timing 'wal-avg' has no known method's form"
has err "count as kernel time"
run 0 "$TC" db import --format mamf --gpu h100-sxm5-80gb --timing cupti-median \
    "$DATA/mamf-v2-summary.log" --into "$TMP/mamf-cupti.db"
[ -s "$TMP/err" ] && fail "a known kernel-time label came with a note: $(cat "$TMP/err")"
run 0 "$TC" db info "$TMP/a.db"
has out "schema v4"
has out "a100-pcie-40gb"
has out "profiler-median"
has out "imported"
# the help names the schema a new file gets (it said v1 of a v3 file)
schema=$(sed -n 's/.*schema \(v[0-9]*\).*/\1/p' "$TMP/out" | head -1)
run 0 "$TC" db --help
has out "SQLite file (schema $schema)"
run 0 "$TC" db info "$TMP/a.db" --json
python3 - "$TMP/out" <<'EOF' || fail "db info --json is not the expected JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 4
assert {g["id"] for g in d["gpus"]} == {"a100-sxm4-80gb", "h100-sxm5-80gb", "a100-pcie-40gb", "a100-sxm4-40gb"}
assert all(r["kind"] == "imported" for r in d["runs"])
rows = sum(c["rows"] for c in d["counts"] if c["table"] == "gemm")
assert rows == 26, rows
assert any(r["licence"] == "MIT" and "vidur" in r["source"] for r in d["runs"])
EOF
run 0 "$TC" db info "$TMP/a.db" --csv
python3 - "$TMP/out" <<'EOF' || fail "db info --csv is not the row counts as CSV"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert rows[0] == ["gpu", "table", "kind", "dtype", "status", "rows"], rows[0]
assert sum(int(r[5]) for r in rows[1:] if r[1] == "gemm") == 26, rows
assert {r[0] for r in rows[1:]} == {"a100-sxm4-80gb", "h100-sxm5-80gb", "a100-pcie-40gb", "a100-sxm4-40gb"}
EOF
run 0 "$TC" db check "$TMP/a.db"
has out "ok"
run 1 "$TC" db check "$TMP/a.db" --bogus
has err "unknown option '--bogus'"
run 1 "$TC" db check "$TMP/a.db" "$TMP/a.db"
has err "unexpected argument"
run 1 "$TC" db info "$TMP/a.db" --bogus
has err "unknown option '--bogus'"

# a failed import names file:line:column and changes nothing
cp "$TMP/a.db" "$TMP/before.db"
run 2 "$TC" db import --format csv "$DATA/vidur-small.csv" "$DATA/bad-dtype.csv" --into "$TMP/a.db"
has err "bad-dtype.csv:4:2: unknown dtype 'fp17'"
has err "unchanged"
cmp -s "$TMP/a.db" "$TMP/before.db" || fail "a failed import changed the database"
run 2 "$TC" db import --format csv "$DATA/rocblas-small.csv" --into "$TMP/a.db"
has err "efficiency_pct"
run 0 "$TC" db import --format csv --skip-untimed "$DATA/rocblas-small.csv" --into "$TMP/a.db"
has out "3 rows without a time skipped"
run 2 "$TC" db import --format csv "$DATA/vidur-small.csv" --gpu no-such-gpu --into "$TMP/a.db"
run 2 "$TC" db import --format csv "$DATA/bad-missing-column.csv" --into "$TMP/new.db"
has err "bad-missing-column.csv:1: missing column 'k'"
has err "was not created"
[ -e "$TMP/new.db" ] && fail "a failed import left a new database behind"

# --- export round trip --------------------------------------------------------
run 0 "$TC" db export "$TMP/a.db" --format csv --output "$TMP/a.csv"
has out "exported 26 rows"
head -1 "$TMP/a.csv" | grep -q '^gpu,dtype,op,batch,m,n,k,layout,time_us,tflops,timing,source,' ||
    fail "export header differs from the shared format"
run 0 "$TC" db import --format csv "$TMP/a.csv" --into "$TMP/b.db"
has out "imported 26 rows"
run 0 "$TC" db export "$TMP/b.db" --format csv --output "$TMP/b.csv"
cmp -s "$TMP/a.csv" "$TMP/b.csv" || fail "export -> import -> export differs"
run 0 "$TC" db export "$TMP/a.db" --format json --gpu a100-pcie-40gb
python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["gemm"]) == 5 and d["gpus"][0]["id"] == "a100-pcie-40gb"' \
    <"$TMP/out" || fail "json export"
run 2 "$TC" db export "$TMP/a.db" --format csv --gpu nope

# --- merge ---------------------------------------------------------------------
run 0 "$TC" db merge "$TMP/m.db" "$TMP/a.db" "$TMP/b.db"
has out "integrity check ok"
has out "12 duplicates dropped" # csv-imported runs join; runs from other formats differ in provenance
run 0 "$TC" db check "$TMP/m.db"
# an output that is an input is bad input, as in every command
run 2 "$TC" db merge "$TMP/m.db" "$TMP/m.db"
has err "is the input"
run 1 "$TC" db merge "$TMP/m.db"

# --- refused files ---------------------------------------------------------------
head -c 5000 /dev/urandom >"$TMP/noise.db"
: >"$TMP/empty.db"
head -c 1000 "$TMP/a.db" >"$TMP/cut.db"
for f in noise empty cut; do
    sum=$(cksum <"$TMP/$f.db")
    run 2 "$TC" db info "$TMP/$f.db"
    has err "$f.db"
    run 2 "$TC" db check "$TMP/$f.db"
    run 2 "$TC" db import --format csv "$DATA/vidur-small.csv" --into "$TMP/$f.db"
    run 2 "$TC" db merge "$TMP/out-$f.db" "$TMP/$f.db"
    [ "$(cksum <"$TMP/$f.db")" = "$sum" ] || fail "$f.db was modified"
    [ -e "$TMP/$f.db-wal" ] && fail "$f.db-wal created"
    [ -e "$TMP/out-$f.db" ] && fail "merge of a refused file created its output"
done
run 2 "$TC" db info "$TMP/does-not-exist.db"

# --- prebuilt databases --------------------------------------------------------
for f in "$TILECAST_SOURCE_ROOT"/db/prebuilt/*.db; do
    run 0 "$TC" db check "$f"
    run 0 "$TC" db info "$f" --json
    python3 - "$TMP/out" "$(basename "$f" .db)" <<'EOF' || fail "$f: GPU or provenance"
import json, sys
d = json.load(open(sys.argv[1]))
assert [g["id"] for g in d["gpus"]] == [sys.argv[2]]
assert d["runs"] and all(r["kind"] == "imported" and r["licence"] in ("MIT", "Apache-2.0")
                         and r["source"] and r["timing"] for r in d["runs"])
EOF
    [ "$(stat -c %s "$f")" -lt 5000000 ] || fail "$f is 5 MB or more"
done
# The A100 PCIe 80GB and H200 files hold the vendored fused-attention rows:
# an exact stored call of each backend is answered by its measurement, any
# other shape of the same GPU, impl, dtype and pass is the calibrated model.
attn_src() { # expected source, then predict attention's arguments
    local want=$1
    shift
    run 0 "$TC" predict attention --dtype bf16 "$@"
    has out "source         $want"
}
a100="--gpu a100-pcie-80gb --batch 2 --heads 64 --kv-heads 8 --head-dim 128 --causal"
for impl in cudnn cudnn_oss flash2 flash4; do
    # shellcheck disable=SC2086
    attn_src measured $a100 --impl $impl --seq 4096
    # shellcheck disable=SC2086
    attn_src calibrated $a100 --impl $impl --seq 4000
done
# shellcheck disable=SC2086
attn_src measured $a100 --impl cudnn --seq 4096 --bwd --deterministic
has out "time_us        10352.00"
# shellcheck disable=SC2086
attn_src measured $a100 --impl flash2 --seq 4096 --bwd
# DeepSeek's 192/128 head dims: the row of that call, not of 192/192
attn_src measured --gpu a100-pcie-80gb --impl cudnn --batch 2 --heads 128 --head-dim 192 \
    --head-dim-vo 128 --seq 32768 --causal
has out "time_us        749317.00"
# head dim 512 with a window: the model refuses it, the measurement answers
attn_src measured --gpu a100-pcie-80gb --impl cudnn --batch 2 --heads 64 --kv-heads 1 \
    --head-dim 512 --seq 16384 --causal --window 128
run 2 "$TC" predict attention --gpu a100-pcie-80gb --impl cudnn --dtype bf16 --batch 2 \
    --heads 64 --kv-heads 1 --head-dim 512 --seq 16000 --causal --window 128
has err "head dim 512"
h200="--gpu h200-sxm-141gb --batch 2 --heads 64 --kv-heads 8 --head-dim 128 --causal"
for impl in cudnn flash4; do
    # shellcheck disable=SC2086
    attn_src measured $h200 --impl $impl --seq 4096 --bwd
    # shellcheck disable=SC2086
    attn_src calibrated $h200 --impl $impl --seq 4000 --bwd
done
# shellcheck disable=SC2086
run 0 "$TC" predict attention $h200 --impl cudnn --dtype fp8 --seq 4096
has out "source         measured"
# no rows of this impl on this GPU: the model alone
# shellcheck disable=SC2086
attn_src analytical $h200 --impl flash3 --seq 4096
# --analytical ignores the rows
# shellcheck disable=SC2086
attn_src analytical $a100 --impl cudnn --seq 4096 --analytical

# The V100 PCIe file holds NeuSight's event-timed fp32 sweep: a stored call is
# answered by its measurement, another shape by that machine's fit, and fp16,
# of which it holds nothing, is still transferred from another GPU's rows.
v100="--gpu v100-pcie-32gb --dtype fp32 --layout NT --op linear --timing event-fastest5-mean"
# shellcheck disable=SC2086
run 0 "$TC" predict gemm $v100 58 141 13
has out "source         measurement"
has out "time_us        65.952"
# shellcheck disable=SC2086
run 0 "$TC" predict gemm $v100 1000 4096 4096
has out "source         prediction (calibrated)"
run 0 "$TC" predict gemm --gpu v100-pcie-32gb --dtype fp16 1000 4096 4096
has out "source         prediction (transferred)"
has out "calibrated on  a100-sxm4-80gb"

# rebuilt from the clone alone (db/sources/): reproducible, and byte for byte
# the committed files; --measured reads the same CSVs uncompressed
mkdir "$TMP/pb1" "$TMP/pb2"
build=$(dirname "$(dirname "$TC")")
run 0 "$TILECAST_SOURCE_ROOT/tools/build-prebuilt.sh" "$build" "$TMP/pb1"
run 0 "$TILECAST_SOURCE_ROOT/tools/build-prebuilt.sh" --measured "$TILECAST_MEASURED_DATA" "$build" "$TMP/pb2"
for f in "$TILECAST_SOURCE_ROOT"/db/prebuilt/*.db; do
    id=$(basename "$f" .db)
    cmp -s "$f" "$TMP/pb1/$id.db" || fail "db/prebuilt/$id.db is not what build-prebuilt.sh makes from db/sources/"
    cmp -s "$f" "$TMP/pb2/$id.db" || fail "build-prebuilt.sh --measured makes another $id.db"
done
[ "$(find "$TMP/pb1" -name '*.db' | wc -l)" -eq 9 ] || fail "build-prebuilt.sh made other than 9 files"
# the vendored files are the ones whose checksums were recorded
(cd "$TILECAST_MEASURED_DATA" && sha256sum --quiet -c "$TILECAST_SOURCE_ROOT/db/sources/SHA256SUMS") ||
    fail "the decompressed db/sources/ differ from db/sources/SHA256SUMS"
run 0 "$TILECAST_SOURCE_ROOT/tools/build-prebuilt.sh" --help
has out "--measured DIR"
run 1 "$TILECAST_SOURCE_ROOT/tools/build-prebuilt.sh" --no-such-option
run 1 "$TILECAST_SOURCE_ROOT/tools/build-prebuilt.sh" "$TMP/no-build"
has err "not found: build tilecast first"

# --- migrate, compact, bench -----------------------------------------------------
run 0 "$TC" db compact "$TMP/b.db"
has out "compacted"
run 0 "$TC" db check "$TMP/b.db"
run 0 "$TC" db migrate "$TMP/b.db"
run 0 "$TC" db bench --rows 20000 --batch 5000
has out "rows/s"
run 2 "$TC" db bench --rows 0
run 1 "$TC" db bench --rows

finish cli-db
