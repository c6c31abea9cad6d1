#!/usr/bin/env bash
# The command's conventions, for every subcommand: documented exit codes
# (0 ok, 1 usage, 2 input, 3 runtime), an error message on stderr naming what
# was wrong, --json and --csv on commands that print tables with units in
# numeric column names, and a man page and bash completion that carry every
# option of every --help text.
set -uo pipefail
: "${TILECAST_BIN:?TILECAST_BIN must name the built tilecast}"
src=${TILECAST_SOURCE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
tc=$TILECAST_BIN
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
checks=0

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# expect CODE NEEDLE ARGS...: exit status CODE, and for failures a
# "tilecast ...: error:" line on stderr containing NEEDLE ('' = any text).
expect() {
    local want=$1 needle=$2 rc
    shift 2
    checks=$((checks + 1))
    "$tc" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "tilecast $* exited $rc, expected $want; stderr: $(head -c 300 "$tmp/err")"
        return
    fi
    if [ "$want" -ne 0 ]; then
        if [ "$want" -ne 1 ] || [ -n "$needle" ]; then
            grep -q "error" "$tmp/err" || fail "tilecast $*: no error message on stderr"
        fi
        if [ -n "$needle" ] && ! grep -qF -- "$needle" "$tmp/err"; then
            fail "tilecast $*: stderr does not mention '$needle': $(head -c 300 "$tmp/err")"
        fi
    fi
}

H=h100-sxm5-80gb
MODEL=$src/predictor/models/llama-2-7b.yaml
printf 'this is not a database\n' >"$tmp/junk.db"
printf 'id: [unclosed\n' >"$tmp/bad.yaml"
printf 'hidden: 4096\nheads: 32\nlayers: 2\nseq: 128\nmicro_batch: 1\nhiden: 3\n' >"$tmp/typo.yaml"
printf 'gpu,dtype,m,n,k\n%s,fp16,64,x,64\n' "$H" >"$tmp/bad-shape.csv"
printf 'gpu,dtype,op,batch,m,n,k,layout,time_us,tflops,timing,source\n%s,fp16,mm,1,64,64,64,NN,oops,,profiler-median,test\n' \
    "$H" >"$tmp/bad-time.csv"
printf 'name: s\ngemm:\n  - dtypes: [fp16]\n    m: [abc]\n' >"$tmp/bad-sweep.yaml"

# --- exit 0: help, version, man page, completion ---------------------------
expect 0 '' --version
grep -qx "tilecast [0-9]*\.[0-9]*\.[0-9]*" "$tmp/out" || fail "--version prints '$(cat "$tmp/out")'"
expect 0 '' --help
grep -q "Exit status" "$tmp/out" || fail "--help does not document the exit status"
for code in 0 1 2 3; do
    grep -q "^  $code  " "$tmp/out" || fail "--help does not document exit code $code"
done
commands="specs db predict eval collect advise plot bench"
for c in $commands; do
    expect 0 '' "$c" --help
    [ -s "$tmp/out" ] || fail "tilecast $c --help printed nothing"
    expect 0 '' help "$c"
done
for c in "predict gemm" "predict attention" "predict layer" "predict model" "specs list" \
         "specs show" "specs check" "db info" "db check" "db import" "db export" "db merge" \
         "db calibrate" "db migrate" "db compact" "db bench"; do
    # shellcheck disable=SC2086
    expect 0 '' $c --help
    [ -s "$tmp/out" ] || fail "tilecast $c --help printed nothing"
done

# The man pages the build made with help2man (tools/meson.build) beside the
# command: tilecast.1 and one per command, rendered at 80 columns with no
# warning and no line past the edge. Without help2man none are made.
mandir=$(dirname "$tc")
if command -v help2man >/dev/null 2>&1; then
    [ -s "$mandir/tilecast.1" ] || fail "help2man is installed but the build made no tilecast.1"
fi
: >"$tmp/tilecast.1"
for page in "$mandir"/tilecast.1 "$mandir"/tilecast-*.1; do
    [ -s "$page" ] || continue
    cat "$page" >>"$tmp/tilecast.1"
    grep -q '^\.TH TILECAST' "$page" || fail "$page has no .TH line"
    if command -v man >/dev/null 2>&1; then
        MANWIDTH=80 man -l "$page" >"$tmp/man.txt" 2>"$tmp/man.err" ||
            fail "man cannot render $page: $(head -c 300 "$tmp/man.err")"
        [ -s "$tmp/man.err" ] && fail "man warns on $page: $(head -c 300 "$tmp/man.err")"
        awk 'length > 80 { bad = 1 } END { exit bad }' "$tmp/man.txt" ||
            fail "$page has lines over 80 columns"
    fi
done
if [ -s "$mandir/tilecast.1" ]; then
    for section in SYNOPSIS ENVIRONMENT FILES '"SEE ALSO"'; do
        grep -q "^\.SH $section" "$mandir/tilecast.1" || fail "tilecast.1 has no $section section"
    done
    # every TILECAST_ variable the code reads is in ENVIRONMENT
    for var in $(grep -rhoE 'getenv\("TILECAST_[A-Z_]+' "$TILECAST_SOURCE_ROOT"/{common,predictor,db,collector,tools} 2>/dev/null |
                 sed 's/.*"//' | sort -u); do
        grep -q "^\.B $var" "$mandir/tilecast.1" || fail "tilecast.1: ENVIRONMENT lacks $var"
    done
    for c in $commands; do
        [ -s "$mandir/tilecast-$c.1" ] || fail "no tilecast-$c.1"
        # tools/tilecast.h2m lists the pages by hand: a new command must join it
        grep -q "^\.BR tilecast\\\\-$c (1)" "$mandir/tilecast.1" || fail "tilecast.1: SEE ALSO lacks tilecast-$c(1)"
    done
fi
expect 0 '' completion bash
cp "$tmp/out" "$tmp/completion.bash"
bash -n "$tmp/completion.bash" || fail "the bash completion is not valid bash"
grep -q 'complete -F _tilecast tilecast' "$tmp/completion.bash" || fail "completion registers nothing"

# Every option of every help text is in the man page (roff escapes '-') and
# in the completion: they are generated from the same texts and cannot drift.
for c in $commands "predict gemm" "predict attention" "predict layer" "predict model" \
         "db info" "db import" "db export" "db calibrate" "db bench"; do
    # shellcheck disable=SC2086
    for opt in $("$tc" $c --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
        checks=$((checks + 1))
        if [ -s "$tmp/tilecast.1" ]; then
            grep -qF -- "${opt//-/\\-}" "$tmp/tilecast.1" ||
                fail "option $opt of 'tilecast $c --help' is missing from the man pages"
        fi
        grep -qE -- "[\" ]$opt( |\")" "$tmp/completion.bash" ||
            fail "option $opt of 'tilecast $c --help' is missing from the bash completion"
    done
done
# The completion completes what it should.
(
    # shellcheck disable=SC1090
    source "$tmp/completion.bash"
    COMP_WORDS=(tilecast pre); COMP_CWORD=1; _tilecast
    [ "${COMPREPLY[*]}" = predict ] || { echo "completing 'pre' gave '${COMPREPLY[*]}'"; exit 1; }
    COMP_WORDS=(tilecast predict --an); COMP_CWORD=2; _tilecast
    [ "${COMPREPLY[*]}" = --analytical ] || { echo "completing 'predict --an' gave '${COMPREPLY[*]}'"; exit 1; }
    COMP_WORDS=(tilecast predict ""); COMP_CWORD=2; _tilecast
    [ "${COMPREPLY[*]}" = "attention gemm layer model" ] ||
        { echo "completing 'predict ' gave '${COMPREPLY[*]}'"; exit 1; }
    COMP_WORDS=(tilecast --specs-dir=x db i); COMP_CWORD=3; _tilecast
    [ "${COMPREPLY[*]}" = "import info" ] || { echo "completing 'db i' gave '${COMPREPLY[*]}'"; exit 1; }
    COMP_WORDS=(tilecast bench ""); COMP_CWORD=2; _tilecast
    [ "${COMPREPLY[*]}" = "all calibrated collector predict" ] ||
        { echo "completing 'bench ' gave '${COMPREPLY[*]}'"; exit 1; }
    COMP_WORDS=(tilecast predict gemm --exp); COMP_CWORD=3; _tilecast
    [ "${COMPREPLY[*]}" = --explain ] || { echo "completing 'predict gemm --exp' gave '${COMPREPLY[*]}'"; exit 1; }
) || fail "bash completion"

# --- exit 1: usage errors --------------------------------------------------
expect 1 "--bogus" --bogus
expect 1 "bogus" bogus
expect 1 '' # no command: usage on stderr
expect 1 "bogus" help bogus
expect 1 "completion" completion zsh
expect 1 "--specs-dir" --specs-dir
for c in "specs list" "specs show $H" "specs check $src/gpu_specs/$H.yaml" "db info $tmp/junk.db" \
         "predict gemm --gpu $H 8 8 8" \
         "predict attention --gpu $H --batch 1 --heads 8 --seq 128 --head-dim 64" \
         "predict layer --gpu $H --hidden 4096 --heads 32 --seq 128 --micro-batch 1" \
         "predict model --gpu $H --config $MODEL" "eval --input $tmp/bad-time.csv" \
         "collect --backend cpu --sweep $tmp/bad-sweep.yaml --dry-run" \
         "advise --gpu $H --config $MODEL" "plot throughput --gpu $H" "bench predict"; do
    # shellcheck disable=SC2086
    expect 1 "--bogus" $c --bogus
done
expect 1 "--bogus" db check "$tmp/junk.db" --bogus
# An option mistyped is answered with the closest one that command takes,
# from its own --help (a slip, a swap, a missing letter, a prefix).
typo() { # typo SUGGESTION ARGS...
    local want=$1
    shift
    expect 1 "did you mean '$want'?" "$@"
}
typo --dtype predict gemm --gpu $H --dtpye bf16 8 8 8
typo --dtype predict gemm --gpu $H --dtpye=bf16 8 8 8
typo --explain predict gemm --gpu $H --expl 8 8 8
typo --causal predict attention --gpu $H --batch 1 --heads 8 --seq 128 --head-dim 64 --casual
typo --micro-batch predict layer --gpu $H --hidden 4096 --heads 32 --seq 128 --micro-bach 1
typo --config predict model --gpu $H --confg "$MODEL"
typo --params-tolerance advise --gpu $H --config "$MODEL" --params-tolerence 5%
typo --format db import --frmat csv --into "$tmp/x.db" "$tmp/bad-time.csv"
typo --json db info "$tmp/junk.db" --jsno
typo --gpu db export "$tmp/junk.db" --gpuu $H
typo --dry-run db calibrate "$tmp/junk.db" --dryrun
typo --json specs list --jsno
typo --input eval --inptu "$tmp/bad-time.csv"
typo --sweep collect --backend cpu --sweeep "$tmp/bad-sweep.yaml" --dry-run
typo --output plot throughput --gpu $H --ouput "$tmp/p.svg"
typo --specs-dir --spec-dir "$tmp" specs list
expect 1 "--bogus" predict gemm --gpu $H --bogus 8 8 8
grep -q "did you mean" "$tmp/err" && fail "--bogus is nobody's typo: $(cat "$tmp/err")"
expect 1 "bogus" specs bogus
expect 1 "bogus" db bogus
expect 1 "bogus" predict bogus
expect 1 "bogus" plot bogus
expect 1 "bogus" bench bogus
expect 1 '' predict gemm --gpu $H 8 8          # K missing
expect 1 "--batch" predict gemm --gpu $H 8 8 8 --batch   # value missing
expect 1 "--batch" predict attention --gpu $H --heads 8 --seq 128 --head-dim 64 --batch
expect 1 "--hidden" predict layer --gpu $H --heads 32 --seq 128 --hidden
expect 1 "--top" advise --gpu $H --config "$MODEL" --top
expect 1 "bogus" db import --format bogus --into "$tmp/x.db" "$tmp/bad-time.csv"
expect 1 "bogus" collect --backend bogus --sweep "$tmp/bad-sweep.yaml" --db "$tmp/c.db"
expect 1 '' eval                                # --input is required
expect 1 '' advise --gpu $H                     # --config is required

# --- exit 2: bad input (file, shape, GPU, database, value) ------------------
expect 2 "nope" specs show nope
expect 2 "$tmp/missing.yaml" specs check "$tmp/missing.yaml"
expect 2 "bad.yaml:" specs check "$tmp/bad.yaml"
expect 2 "missing.db" db info "$tmp/missing.db"
expect 2 "junk.db" db info "$tmp/junk.db"
expect 2 "junk.db" db check "$tmp/junk.db"
expect 2 "junk.db" db export "$tmp/junk.db" --format csv
expect 2 "bad-time.csv:2" db import --format csv --into "$tmp/x.db" "$tmp/bad-time.csv"
expect 2 "nope" predict gemm --gpu nope 8 8 8
# GPU ids in any case and by a unique prefix, in every command that takes
# one; an ambiguous prefix names its candidates, a typo the closest id
expect 2 "GPU 'h100' is ambiguous: did you mean h100-pcie-80gb or h100-sxm5-80gb?" \
    predict gemm --gpu h100 8 8 8
expect 2 "did you mean h100-sxm5-80gb?" predict gemm --gpu h100-sxm-80gb 8 8 8
for c in "predict gemm 8 8 8" "predict attention --batch 1 --heads 8 --seq 128 --head-dim 64" \
         "predict layer --hidden 4096 --heads 32 --seq 128 --micro-batch 1" \
         "predict model --config $MODEL --ignore-memory" "advise --config $MODEL --top 1" "specs show"; do
    # shellcheck disable=SC2086
    set -- $c
    if [ "$1" = specs ]; then
        expect 0 '' specs show H100-SXM5-80GB
        expect 0 '' specs show a100-pcie-4
        expect 2 "h100-pcie-80gb or h100-sxm5-80gb" specs show h100
    else
        expect 0 '' "$@" --gpu H100-SXM5-80GB
        grep -q "h100-sxm5-80gb" "$tmp/out" || fail "tilecast $c --gpu H100-SXM5-80GB: no h100-sxm5-80gb in the output"
        expect 0 '' "$@" --gpu a100-pcie-4
        grep -q "a100-pcie-40gb" "$tmp/out" || fail "tilecast $c --gpu a100-pcie-4: no a100-pcie-40gb in the output"
        expect 2 "h100-pcie-80gb or h100-sxm5-80gb" "$@" --gpu h100
    fi
done
# what is stored is the id, not the name typed
"$tc" db import --format mamf --gpu H100-SXM5 --into "$tmp/mamf.db" \
    "$src/tests/data/db/mamf-v2-summary.log" >/dev/null 2>&1 || fail "db import --gpu H100-SXM5"
expect 0 '' db export "$tmp/mamf.db" --gpu H100-SXM5-80GB
grep -q "^h100-sxm5-80gb,bf16," "$tmp/out" || fail "db import --gpu H100-SXM5 did not store h100-sxm5-80gb"
expect 2 "0" predict gemm --gpu $H 0 8 8
expect 2 "-5" predict gemm --gpu $H 8 -5 8
expect 2 "99999999999999999999" predict gemm --gpu $H 8 8 99999999999999999999
expect 2 "bf16" predict gemm --gpu v100-sxm2-32gb --dtype bf16 8 8 8
expect 2 "bad-shape.csv:2" predict gemm --gpu $H --input "$tmp/bad-shape.csv"
expect 2 "missing.csv" predict gemm --gpu $H --input "$tmp/missing.csv"
expect 2 "junk.db" predict gemm --gpu $H --db "$tmp/junk.db" 8 8 8
# an impossible flag value is input, like an impossible M N K (the message
# names the flag and the value)
expect 2 "--dtype: unknown dtype 'fp7'" predict gemm --gpu $H --dtype fp7 8 8 8
expect 2 "--batch: 'x' is not an integer" predict gemm --gpu $H --batch x 8 8 8
expect 2 "--lda: 0 is out of range" predict gemm --gpu $H --lda 0 8 8 8
expect 2 "--batch: 0 is out of range" predict attention --gpu $H --batch 0 --heads 8 --seq 128 \
    --head-dim 64
expect 2 "--head-dim: -3 is out of range" predict attention --gpu $H --batch 1 --heads 8 \
    --seq 128 --head-dim -3
expect 2 "--impl: 'fused'" predict attention --gpu $H --impl fused --batch 1 --heads 8 --seq 128 \
    --head-dim 64
expect 2 "--hidden: 0 is out of range" predict layer --gpu $H --hidden 0 --heads 32 --seq 128
expect 2 "--tp: 0 is out of range" predict model --gpu $H --config "$MODEL" --tp 0
expect 2 "--min-time-us: 'x'" predict layer --gpu $H --hidden 4096 --heads 32 --seq 128 --min-time-us x
expect 2 "--top: 0 is out of range" advise --gpu $H --config "$MODEL" --top 0
expect 2 "--seq: 'x' is not an integer" advise --gpu $H --config "$MODEL" --seq x
expect 2 "--m: 0 is out of range" plot throughput --gpu $H --sweep m --m 0 --output "$tmp/p.svg"
expect 2 "--sweep: 'q'" plot throughput --gpu $H --sweep q --output "$tmp/p.svg"
expect 2 "--heads: 0 is out of range" plot layer --gpu $H --hidden 2048 --heads 0 --seq 128 \
    --output "$tmp/p.svg"
expect 2 "nope" predict attention --gpu nope --batch 1 --heads 8 --seq 128 --head-dim 64
expect 2 "3" predict layer --gpu $H --hidden 100 --heads 3 --seq 128 --micro-batch 1
expect 2 "bad.yaml:" predict model --gpu $H --config "$tmp/bad.yaml"
expect 2 "hiden" predict model --gpu $H --config "$tmp/typo.yaml"
expect 2 "missing.yaml" predict model --gpu $H --config "$tmp/missing.yaml"
expect 2 "missing.csv" eval --input "$tmp/missing.csv"
expect 2 "bad-time.csv" eval --input "$tmp/bad-time.csv"
expect 2 "--dtype: unknown dtype 'fp7'" eval --input "$tmp/bad-time.csv" --dtype fp7
expect 2 "--min-time-us: 'x'" eval --input "$tmp/bad-time.csv" --min-time-us x
expect 1 "--dtype needs a value" eval --input "$tmp/bad-time.csv" --dtype
expect 2 "bad-sweep.yaml:" collect --backend cpu --sweep "$tmp/bad-sweep.yaml" --dry-run
expect 2 "missing.yaml" collect --backend cpu --sweep "$tmp/missing.yaml" --dry-run
expect 2 "nope" advise --gpu nope --config "$MODEL"
expect 2 "bad.yaml:" advise --gpu $H --config "$tmp/bad.yaml"
expect 2 "nope" plot throughput --gpu nope --sweep m --m 1024 --n 1024 --k 1024 \
    --output "$tmp/p.svg"
expect 2 "missing" --specs-dir "$tmp/missing" specs list

# A missing or unreadable input file is an input error in every command that
# reads one, and the message names it. A directory stands in for an
# unreadable file (root reads any file); a mode 000 file is tried as well
# where it really cannot be read.
mkdir "$tmp/dir.db" "$tmp/dir.csv" "$tmp/dir.yaml"
for e in db csv yaml; do
    printf 'x\n' >"$tmp/noread.$e"
    chmod 000 "$tmp/noread.$e"
done
bad_inputs="missing dir"
cat "$tmp/noread.db" >/dev/null 2>&1 || bad_inputs="$bad_inputs noread"
printf 'm,n,k\n64,64,64\n' >"$tmp/ok.csv"
PREBUILT=$src/db/prebuilt/$H.db
for x in $bad_inputs; do
    for sub in info check export compact migrate calibrate; do
        expect 2 "$x.db" db $sub "$tmp/$x.db"
    done
    expect 2 "$x.db" db merge "$tmp/merged.db" "$tmp/$x.db"
    expect 2 "$x.db" db merge "$tmp/merged.db" "$PREBUILT" "$tmp/$x.db"
    expect 2 "$x.csv" db import --format csv --into "$tmp/x.db" "$tmp/$x.csv"
    expect 2 "$x.csv" db import --format cookbook --gpu $H --into "$tmp/x.db" "$tmp/$x.csv"
    expect 2 "$x.csv" predict gemm --gpu $H --input "$tmp/$x.csv"
    expect 2 "$x.db" predict gemm --gpu $H --db "$tmp/$x.db" 8 8 8
    expect 2 "$x.db" predict attention --gpu $H --batch 1 --heads 8 --seq 128 --head-dim 64 \
        --db "$tmp/$x.db"
    expect 2 "$x.db" predict layer --gpu $H --hidden 4096 --heads 32 --seq 128 --micro-batch 1 \
        --db "$tmp/$x.db"
    expect 2 "$x.csv" predict layer --measured "$tmp/$x.csv"
    expect 2 "$x.db" predict layer --measured "$tmp/ok.csv" --db "$tmp/$x.db"
    expect 2 "$x.yaml" predict model --gpu $H --config "$tmp/$x.yaml"
    expect 2 "$x.db" predict model --gpu $H --config "$MODEL" --db "$tmp/$x.db"
    expect 2 "$x.csv" eval --input "$tmp/$x.csv"
    expect 2 "$x.db" eval --input "$tmp/ok.csv" --db "$tmp/$x.db"
    expect 2 "$x.yaml" collect --backend cpu --sweep "$tmp/$x.yaml" --dry-run
    expect 2 "$x.yaml" collect --backend cpu --sweep "$tmp/$x.yaml" --db "$tmp/c.db"
    expect 2 "$x.yaml" specs check "$tmp/$x.yaml"
    expect 2 "$x.yaml" advise --gpu $H --config "$tmp/$x.yaml"
    expect 2 "$x.db" advise --gpu $H --config "$MODEL" --db "$tmp/$x.db"
    expect 2 "$x.csv" plot throughput --gpu $H --sweep m --m 1024 --n 1024 --k 1024 \
        --measured "$tmp/$x.csv" --output "$tmp/p.svg"
    expect 2 "$x.db" plot throughput --gpu $H --sweep m --m 1024 --n 1024 --k 1024 \
        --db "$tmp/$x.db" --output "$tmp/p.svg"
    expect 2 "$x.yaml" plot layer --gpu $H --config "$tmp/$x.yaml" --output "$tmp/p.svg"
    expect 2 "$x.db" plot layer --gpu $H --config "$MODEL" --db "$tmp/$x.db" --output "$tmp/p.svg"
    expect 2 "$x.yaml" plot advise --gpu $H --config "$tmp/$x.yaml" --output "$tmp/p.svg"
    expect 2 "$x.db" bench calibrated --db "$tmp/$x.db" --predictions 10 --opens 1
done
[ -e "$tmp/merged.db" ] && fail "a merge of a missing input created its output"
[ -e "$tmp/x.db" ] && fail "an import of a missing file created its database"

# --- exit 3: an output that cannot be written stays a runtime error ---------
expect 3 "x.csv" db export "$PREBUILT" --output "$tmp/no-such-dir/x.csv"
expect 3 "m.db" db merge "$tmp/no-such-dir/m.db" "$PREBUILT"
expect 3 "p.csv" predict gemm --gpu $H --input "$tmp/ok.csv" --output "$tmp/no-such-dir/p.csv"

# --- output formats: --json parses, --csv has a header with units ----------
if command -v python3 >/dev/null 2>&1; then
    formats() { # args of a command that prints a table
        local f
        for f in --json --csv; do
            checks=$((checks + 1))
            if ! "$tc" "$@" "$f" >"$tmp/fmt" 2>"$tmp/err"; then
                fail "tilecast $* $f exited non-zero: $(head -c 300 "$tmp/err")"
                continue
            fi
            python3 - "$f" "$tmp/fmt" "tilecast $* $f" <<'PY' || failures=$((failures + 1))
import csv, json, re, sys
fmt, path, what = sys.argv[1:]
text = open(path).read()
if fmt == "--json":
    try:
        json.loads(text)
    except ValueError as e:
        sys.exit("FAIL: %s: not JSON: %s" % (what, e))
    sys.exit(0)
rows = list(csv.reader(text.splitlines()))
if len(rows) < 2:
    sys.exit("FAIL: %s: no header and rows" % what)
header = rows[0]
if len(set(header)) != len(header):
    sys.exit("FAIL: %s: duplicate columns %s" % (what, header))
for r in rows[1:]:
    if len(r) != len(header):
        sys.exit("FAIL: %s: a row has %d fields, the header %d" % (what, len(r), len(header)))
# A column holding a physical quantity names its unit.
unit = re.compile(r"(_us|_ms|_s|_mhz|_gbps|_gb|_bytes|_tflops|_pct|_w|tflops|_per_s(_per_gpu)?)$")
quantity = re.compile(r"(time|latency|clock|bw|bandwidth|mem|smem|l2|power|tdp|throughput)")
bad = [h for h in header if quantity.search(h) and not unit.search(h)]
if bad:
    sys.exit("FAIL: %s: columns without a unit: %s" % (what, ", ".join(bad)))
PY
        done
    }
    formats specs list
    formats specs show $H
    formats specs check "$src/gpu_specs/$H.yaml"
    printf 'gpu,dtype,op,batch,m,n,k,layout,time_us,tflops,timing,source\n%s,fp16,mm,1,64,64,64,NN,10,,profiler-median,test\n' \
        "$H" >"$tmp/one.csv"
    "$tc" db import --format csv --into "$tmp/one.db" "$tmp/one.csv" >/dev/null 2>&1 ||
        fail "db import of one row"
    formats db info "$tmp/one.db"
    formats predict gemm --gpu $H 4096 4096 4096
    formats predict gemm --gpu $H --explain --layout NT 4096 4096 4096
    formats predict attention --gpu $H --batch 2 --heads 16 --seq 1024 --head-dim 64
    formats predict layer --gpu $H --hidden 4096 --heads 32 --seq 1024 --micro-batch 1
    formats predict model --gpu $H --config "$MODEL" --ignore-memory
    formats advise --gpu $H --config "$MODEL" --top 3
    # every predict --json: one object, "prediction" (a boolean) first and
    # "gpu" next, flags as booleans, never "yes"/"no" strings
    printf 'gpu,dtype,op,batch,m,n,k,layout,time_us,tflops,timing,source,model,tp,vidur_op\n' >"$tmp/layer.csv"
    for op in "4096,12288,4096,1700,attn_pre_proj" "4096,4096,4096,600,attn_post_proj" \
              "4096,22016,4096,3000,mlp_up_proj" "4096,4096,11008,1550,mlp_down_proj"; do
        IFS=, read -r m n k t o <<<"$op"
        printf '%s,fp16,linear,1,%s,%s,%s,NT,%s,,profiler-median,x,m,1,%s\n' "$H" "$m" "$n" "$k" "$t" "$o"
    done >>"$tmp/layer.csv"
    for c in "predict gemm --gpu $H 4096 4096 4096" "predict gemm --gpu $H --explain 4096 4096 4096" \
             "predict attention --gpu $H --batch 2 --heads 16 --seq 1024 --head-dim 64 --causal" \
             "predict layer --gpu $H --hidden 4096 --heads 32 --seq 1024 --micro-batch 1" \
             "predict layer --measured $tmp/layer.csv" "predict model --gpu $H --config $MODEL --tp 2" \
             "predict model --gpu $H --config $MODEL --decode 128"; do
        checks=$((checks + 1))
        # shellcheck disable=SC2086
        "$tc" $c --json >"$tmp/fmt" 2>"$tmp/err" || { fail "tilecast $c --json: $(head -c 300 "$tmp/err")"; continue; }
        python3 - "$tmp/fmt" "$c" <<'PY' || failures=$((failures + 1))
import json, sys
d = json.load(open(sys.argv[1]))
what = "tilecast %s --json" % sys.argv[2]
if not isinstance(d, dict):
    sys.exit("FAIL: %s: a %s, not one object" % (what, type(d).__name__))
keys = list(d)
if keys[0] != "prediction" or not isinstance(d["prediction"], bool):
    sys.exit("FAIL: %s: the first key is %r, not the boolean 'prediction'" % (what, keys[0]))
if "--measured" not in sys.argv[2] and keys[1] != "gpu":
    sys.exit("FAIL: %s: 'gpu' is not the second key: %s" % (what, keys[:3]))
def walk(x, path):
    if isinstance(x, dict):
        for k, v in x.items():
            walk(v, path + "." + k)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            walk(v, "%s[%d]" % (path, i))
    elif isinstance(x, str) and x.lower() in ("yes", "no", "true", "false"):
        sys.exit("FAIL: %s: %s is the string %r, not a boolean" % (what, path, x))
walk(d, "")
for flag in ("causal", "stream_k"):
    if flag in d and not isinstance(d[flag], bool):
        sys.exit("FAIL: %s: %s is not a boolean" % (what, flag))
PY
    done
    if [ -n "${TILECAST_MEASURED_DATA:-}" ] && [ -f "$TILECAST_MEASURED_DATA/cookbook_gemm.csv" ]; then
        formats eval --input "$TILECAST_MEASURED_DATA/cookbook_gemm.csv"
    fi
else
    echo "python3 not found: --json/--csv checks skipped"
fi

echo "$checks checks, $failures failed"
[ "$failures" -eq 0 ]
