#!/bin/bash
# Text from files reaches the terminal and JSON readers intact but harmless:
# control characters (ESC, BEL, ...) are escaped in text output and error
# messages, JSON output is valid UTF-8 whatever bytes a field holds, a UTF-8
# byte order mark opens a CSV file as it does a YAML one, and a key given
# twice in a model config is refused, naming the file and line.
set -u
: "${TILECAST_BIN:?TILECAST_BIN is not set}" "${TILECAST_SOURCE_ROOT:?TILECAST_SOURCE_ROOT is not set}"
. "$(dirname "$0")/lib.sh"
MODELS=$TILECAST_SOURCE_ROOT/predictor/models
A=a100-sxm4-80gb
cd "$TMP" || exit 1

# raw FILE WHAT: FILE holds no control byte but newline and tab
raw() {
    if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$TMP/$1"; then
        fail "$2 wrote control bytes: $(LC_ALL=C grep $'[\x01-\x08\x0b-\x1f\x7f]' "$TMP/$1" | od -c | head -3)"
    fi
}
json_ok() { # json_ok FILE WHAT: valid UTF-8 JSON
    python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' \
        "$TMP/$1" 2>/dev/null || fail "$2 is not valid UTF-8 JSON"
}

# a source field with a terminal title sequence, BEL, a screen clear, a C1
# CSI and bytes that are not UTF-8
H='gpu,dtype,op,batch,m,n,k,layout,time_us,tflops,timing,source'
printf '%s\n%s,fp16,mm,1,4096,4096,4096,NN,600,,event-median,evil\033]0;pwned\007\033[2J\302\233\377\376 end\n' \
    "$H" $A >evil.csv
run 0 "$TC" db import --format csv evil.csv --into evil.db
run 0 "$TC" db info evil.db
raw out "db info"
has out 'evil\x1b]0;pwned\x07\x1b[2J'
has out '\xff\xfe end'
run 0 "$TC" db info evil.db --json
json_ok out "db info --json"
python3 - "$TMP/out" <<'PY' || fail "db info --json lost or mangled the source"
import json, sys
src = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))["runs"][0]["source"]
assert src.startswith("evil\x1b]0;pwned\x07\x1b[2J\x9b"), repr(src)
assert src.endswith(" end") and "\ufffd" in src, repr(src)
PY
run 0 "$TC" db export evil.db --format json
json_ok out "db export --format json"
run 0 "$TC" db export evil.db --format json --output evil.json
json_ok evil.json "db export --format json --output"
# the CSV export keeps the bytes as they were imported: it round-trips
run 0 "$TC" db export evil.db --output back.csv
grep -qF "$(printf 'evil\033]0;pwned\007')" back.csv || fail "db export csv changed the source"

# error messages quote file contents: escaped too
printf '%s\n%s,fp\033[2J16,mm,1,64,64,64,NN,10,,event-median,x\n' "$H" $A >bad.csv
run 2 "$TC" db import --format csv bad.csv --into bad.db
raw err "db import's error"
has err 'fp\x1b[2J16'

# --- a byte order mark --------------------------------------------------------
printf '\357\273\277%s\n%s,fp16,mm,1,4096,4096,4096,NN,600,,event-median,bom\n' "$H" $A >bom.csv
run 0 "$TC" db import --format csv bom.csv --into bom.db
has out "imported 1 rows"
printf '\357\273\277m,n,k\n64,64,64\n' >bom-shapes.csv
run 0 "$TC" predict gemm --gpu $A --analytical --input bom-shapes.csv
has out "64,64,64,"
head -c 3 "$TMP/out" | od -An -tx1 | grep -q 'ef bb bf' && fail "predict copied the byte order mark into a field"
# only at the start of the file: elsewhere it is a byte of a field
printf 'm,n,k\n\357\273\27764,64,64\n' >bom-late.csv
run 2 "$TC" predict gemm --gpu $A --analytical --input bom-late.csv

# --- a key given twice in a model config ------------------------------------------
cp "$MODELS/llama-2-7b.yaml" dup.yaml
line=$(($(wc -l <dup.yaml) + 1))
echo 'hidden: 1024' >>dup.yaml
run 2 "$TC" predict model --gpu $A --analytical --config dup.yaml
has err "dup.yaml:$line"
has err "hidden"
printf 'hidden: 4096\nheads: 32\nlayers: 2\nseq: 128\nmicro_batch: 1\nheads: 16\n' >dup2.yaml
run 2 "$TC" predict model --gpu $A --analytical --config dup2.yaml
has err "dup2.yaml:6"
run 0 "$TC" predict model --gpu $A --analytical --config "$MODELS/llama-2-7b.yaml" --tp 2

finish untrusted-text
