#!/usr/bin/env bash
# A database too large to fit on every call and without a stored calibration
# (more than 50,000 rows of one GPU and dtype): predict, eval and advise
# refuse it at once, exit 2, with the command that fits once and stores the
# fit, and leave the file as it was (a predictor never writes a database);
# after `db calibrate` the stored fit is used. A stale calibration (rows
# added since) and rows spread over two files (no calibration can cover
# both) are refused the same way. Before, every call fitted all the rows in
# memory (48 s a call for 265,000 rows). The rows are synthetic: a roofline
# time per shape, never presented as a measurement of anything.
set -u
. "$(dirname "$0")/lib.sh"

gpu=a100-sxm4-80gb
# rows FIRST COUNT: COUNT rows from the FIRST-th on, in a grid of 16 (n, k)
# layers and m = 1, 2, ... within each
rows() {
    awk -v first="$1" -v count="$2" -v gpu=$gpu 'BEGIN {
        split("1024 2048 4096 8192", nk, " ")
        for (i = first; i < first + count; i++) {
            layer = i % 16
            n = nk[int(layer / 4) + 1]
            k = nk[layer % 4 + 1]
            m = int(i / 16) + 1
            t = 6 + 2.0 * m * n * k / 250e6 + (m + n + k) * 2 / 1.5e6
            printf "%s,fp16,1,%d,%d,%d,NT,%.6g,profiler-median,synthetic test rows\n", gpu, m, n, k, t
        }
    }'
}
header=gpu,dtype,batch,m,n,k,layout,time_us,timing,source
csv() { # csv FILE FIRST COUNT
    { echo $header; rows "$2" "$3"; } >"$1"
}

# under the limit: fitted in memory, as before
csv "$TMP/small.csv" 0 2000
run 0 "$TC" db import --format csv "$TMP/small.csv" --into "$TMP/small.db"
run 0 "$TC" predict gemm --gpu $gpu --db "$TMP/small.db" --json 500 4096 4096
has out '"source": "calibrated"'

csv "$TMP/big.csv" 0 50001
run 0 "$TC" db import --format csv "$TMP/big.csv" --into "$TMP/big.db"
before=$(sha256sum <"$TMP/big.db")
printf 'gpu,dtype,m,n,k,layout,time_us\n%s,fp16,500,4096,4096,NT,100\n' $gpu >"$TMP/eval.csv"
for cmd in "predict gemm --gpu $gpu 500 4096 4096" "eval --input $TMP/eval.csv" \
    "advise --gpu $gpu --config paper-gpt" \
    "predict model --gpu $gpu --config paper-gpt --ignore-memory"; do
    # shellcheck disable=SC2086 # the words of cmd are its arguments
    run 2 "$TC" $cmd --db "$TMP/big.db"
    has err "big.db: 50001 measured rows of $gpu fp16 and no stored calibration"
    has err "run 'tilecast db calibrate $TMP/big.db' once"
    # eval prints its heading before the rows it fails
    grep -q "time_us\|500" "$TMP/out" && fail "$cmd printed a result: $(head -c 300 "$TMP/out")"
done
# with a file of another GPU beside it: still big.db alone to calibrate
sed "s/^$gpu,/h100-sxm5-80gb,/" "$TMP/small.csv" >"$TMP/other.csv"
run 0 "$TC" db import --format csv "$TMP/other.csv" --into "$TMP/other.db"
run 2 "$TC" predict gemm --gpu $gpu --db "$TMP/other.db" --db "$TMP/big.db" 500 4096 4096
has err "big.db: 50001 measured rows of $gpu fp16 and no stored calibration"
has err "run 'tilecast db calibrate $TMP/big.db' once"
[ "$(sha256sum <"$TMP/big.db")" = "$before" ] || fail "a refused prediction changed big.db"
[ -e "$TMP/big.db-wal" ] && fail "a refused prediction left big.db-wal"

# calibrated: the stored fit, with no note about refitting
run 0 "$TC" db calibrate "$TMP/big.db"
run 0 "$TC" predict gemm --gpu $gpu --db "$TMP/big.db" --json 500 4096 4096
has out '"source": "calibrated"'
grep -q "recomputed\|fits at most" "$TMP/err" && fail "stored fit not used: $(cat "$TMP/err")"

# a row added since: the stored fit no longer covers the rows
csv "$TMP/one.csv" 50001 1
run 0 "$TC" db import --format csv "$TMP/one.csv" --into "$TMP/big.db"
run 2 "$TC" predict gemm --gpu $gpu --db "$TMP/big.db" 500 4096 4096
has err "stored calibration of $gpu fp16 used 50001 rows, the database now holds 50002"
has err "run 'tilecast db calibrate $TMP/big.db' once"

# two files under the limit each, over it together
csv "$TMP/half1.csv" 0 30000
csv "$TMP/half2.csv" 30000 30000
run 0 "$TC" db import --format csv "$TMP/half1.csv" --into "$TMP/half1.db"
run 0 "$TC" db import --format csv "$TMP/half2.csv" --into "$TMP/half2.db"
run 2 "$TC" predict gemm --gpu $gpu --db "$TMP/half1.db" --db "$TMP/half2.db" 500 4096 4096
has err "60000 measured rows of $gpu fp16 and no stored calibration"
has err "merge the files"

finish large-uncalibrated
