#!/bin/bash
# Files a command writes: an output that is one of the command's inputs
# (by name, through a symbolic link or a hard link) is refused with exit 2
# and left as it was, and an output is written through a temporary file
# beside it, renamed into place only when the command succeeds, so that a
# failed run leaves the file it would have replaced as it was and no
# partial file behind.
set -u
: "${TILECAST_BIN:?TILECAST_BIN is not set}" "${TILECAST_SOURCE_ROOT:?TILECAST_SOURCE_ROOT is not set}"
. "$(dirname "$0")/lib.sh"
DATA=$TILECAST_SOURCE_ROOT/tests/data/db
H=h100-sxm5-80gb
cd "$TMP" || exit 1

# the database is whole: it opens and passes its checks
db_ok() {
    "$TC" db check "$1" >/dev/null 2>&1 || fail "$2: $1 is no longer a sound database"
}
same() { # same FILE COPY WHAT
    cmp -s "$1" "$2" || fail "$3: $1 was changed"
}
no_leftovers() { # no temporary files left in the folder
    local left
    left=$(find . -maxdepth 1 -name '*.tmp-*' | head -3)
    [ -z "$left" ] || fail "$1: temporary files left behind: $left"
}

"$TC" db import --format csv "$DATA/vidur-small.csv" --into d.db >/dev/null ||
    fail "import of the test data failed"
cp d.db d.orig
printf 'm,n,k\n128,128,128\n4096,4096,4096\n' >in.csv
cp in.csv in.orig
ln -s d.db link.db
ln d.db hard.db
ln -s in.csv link.csv
ln in.csv hard.csv

# --- an output that is an input is refused, exit 2, naming both -------------
for out in d.db link.db hard.db; do
    for flag in -o --output; do
        run 2 "$TC" db export d.db "$flag" "$out"
        has err "$out"
        has err "d.db"
        same d.db d.orig "db export d.db $flag $out"
        db_ok d.db "db export d.db $flag $out"
    done
done
run 2 "$TC" db export d.db --format json --output link.db
same d.db d.orig "db export --format json --output link.db"

for out in d.db link.db hard.db; do
    run 2 "$TC" predict gemm --gpu $H --db d.db --input in.csv --output "$out"
    has err "$out"
    has err "d.db"
    same d.db d.orig "predict gemm --db d.db --output $out"
    db_ok d.db "predict gemm --output $out"
done
for out in in.csv link.csv hard.csv; do
    run 2 "$TC" predict gemm --gpu $H --analytical --input in.csv --output "$out"
    has err "$out"
    has err "in.csv"
    same in.csv in.orig "predict gemm --input in.csv --output $out"
done
# standard input that is the output file
run 2 "$TC" predict gemm --gpu $H --analytical --input - --output in.csv <in.csv
same in.csv in.orig "predict gemm --input - <in.csv --output in.csv"

cp "$DATA/vidur-small.csv" m.csv
cp m.csv m.orig
run 2 "$TC" eval --analytical --input m.csv --output m.csv
has err "m.csv"
same m.csv m.orig "eval --input m.csv --output m.csv"
run 2 "$TC" eval --db d.db --input m.csv --output hard.db
has err "hard.db"
has err "d.db"
same d.db d.orig "eval --db d.db --output hard.db"
db_ok d.db "eval --output hard.db"

# a database's write-ahead log is part of it
cp d.db w.db
: >w.db-wal
run 2 "$TC" db export w.db -o w.db-wal
has err "write-ahead log"
run 0 "$TC" db export w.db -o w.db-walrus
rm -f w.db*

# the commands that write into a database refuse one that is an input
cp m.csv into.csv
run 2 "$TC" db import --format csv into.csv --into into.csv
has err "into.csv"
same into.csv m.orig "db import --format csv into.csv --into into.csv"
printf 'name: s\ngemm:\n  - dtypes: [fp16]\n    m: [64]\n    n: [64]\n    k: [64]\n' >s.yaml
cp s.yaml s.orig
run 2 "$TC" collect --backend cpu --sweep s.yaml --db s.yaml
has err "s.yaml"
same s.yaml s.orig "collect --sweep s.yaml --db s.yaml"
run 2 "$TC" db merge d.db link.db
has err "link.db"
same d.db d.orig "db merge d.db link.db"
db_ok d.db "db merge d.db link.db"

# plot: the picture, its data and its script are all outputs
cp m.csv fig.dat
run 2 "$TC" plot throughput --gpu $H --sweep m --m 256 --n 256 --k 256 --to 512 --step 256 \
    --analytical --measured fig.dat --output fig.svg
has err "fig.dat"
same fig.dat m.orig "plot --measured fig.dat --output fig.svg"
rm -f fig.dat fig.gp fig.svg

# --- a failed run leaves the old output as it was, and no partial file ------
printf 'm,n,k\n128,128,128\n64,x,64\n' >bad.csv
printf 'earlier results\n' >out.csv
cp out.csv out.orig
run 2 "$TC" predict gemm --gpu $H --analytical --input bad.csv --output out.csv
has err "out.csv: left as it was"
same out.csv out.orig "a failed predict --output"
run 2 "$TC" predict gemm --gpu $H --analytical --input bad.csv --output new.csv
[ -e new.csv ] && fail "a failed predict --output left a partial new.csv"
printf 'gpu,dtype,m,n,k,time_us\n%s,fp16,64,64,64,10\n%s,fp16,64,x,64,10\n' $H $H >bad-m.csv
run 2 "$TC" eval --analytical --input bad-m.csv --output out.csv
same out.csv out.orig "a failed eval --output"
run 2 "$TC" eval --analytical --input bad-m.csv --output new.csv
[ -e new.csv ] && fail "a failed eval --output left a partial new.csv"
run 2 "$TC" db export d.db --gpu no-such-gpu --output out.csv
same out.csv out.orig "a failed db export --output"
no_leftovers "failed runs"

# --- a successful run replaces the file, keeping its mode and links ----------
chmod 640 out.csv
ln -s out.csv out-link.csv
run 0 "$TC" predict gemm --gpu $H --analytical --input in.csv --output out-link.csv
[ -L out-link.csv ] || fail "predict --output through a symbolic link replaced the link"
grep -q pred_time_us out.csv || fail "predict --output through a link did not write out.csv"
[ "$(stat -c %a out.csv)" = 640 ] || fail "predict --output changed the mode to $(stat -c %a out.csv)"
run 0 "$TC" eval --analytical --input m.csv --output out.csv
grep -q pred_time_us out.csv || fail "eval --output did not write out.csv"
run 0 "$TC" db export d.db --output out.csv
[ "$(wc -l <out.csv)" -eq 8 ] || fail "db export --output: $(wc -l <out.csv) lines, expected 8"
run 0 "$TC" db export d.db --format json -o out.json
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' out.json 2>/dev/null ||
    fail "db export --format json -o wrote no JSON"
# devices and standard output are written in place
run 0 "$TC" predict gemm --gpu $H --analytical --input in.csv --output /dev/null
run 0 "$TC" db export d.db -o -
has out "time_us"
"$TC" db export d.db -o /dev/stdout >stdout.csv 2>"$TMP/err" || fail "db export -o /dev/stdout failed"
grep -q time_us stdout.csv || fail "db export -o /dev/stdout >FILE did not write FILE"
no_leftovers "successful runs"
# an output that cannot be created is a runtime error, as before
run 3 "$TC" predict gemm --gpu $H --analytical --input in.csv --output no-such-dir/out.csv
run 3 "$TC" db export d.db --output no-such-dir/out.csv

finish output-files
