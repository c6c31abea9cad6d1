#!/bin/bash
# Values no device produces are refused where they are read, so that none
# comes back as an infinite time or throughput or a NaN share: imports, a
# database's rows (db check, predictions), a stored calibration, and GPU
# specs; numbers in files are decimal (no hex, inf or nan); a prediction is
# a finite positive time or an error, never printed otherwise.
set -u
: "${TILECAST_BIN:?TILECAST_BIN is not set}" "${TILECAST_SOURCE_ROOT:?TILECAST_SOURCE_ROOT is not set}"
. "$(dirname "$0")/lib.sh"
DATA=$TILECAST_SOURCE_ROOT/tests/data/db
SHIPPED=$TILECAST_SOURCE_ROOT/gpu_specs
MODELS=$TILECAST_SOURCE_ROOT/predictor/models
A=a100-sxm4-80gb
cd "$TMP" || exit 1

# no_absurd FILE WHAT: the output of a command that succeeded has no inf or nan
no_absurd() {
    if grep -Eiq '(^|[^a-z])-?(inf|nan)([^a-z]|$)' "$TMP/$1"; then
        fail "$2 printed a non-finite number: $(grep -Ei '(^|[^a-z])-?(inf|nan)([^a-z]|$)' "$TMP/$1" | head -2)"
    fi
}

# --- imports ----------------------------------------------------------------
H='gpu,dtype,op,batch,m,n,k,layout,time_us,tflops,timing,source'
for t in 1e-300 0x258 0X1p9 inf -inf nan infinity 1e999 ' 0x258'; do
    printf '%s\n%s,fp16,mm,1,4096,4096,4096,NN,%s,,event-median,test\n' "$H" $A "$t" >t.csv
    run 2 "$TC" db import --format csv t.csv --into csv.db
    has err "t.csv:2"
    [ -e csv.db ] && fail "import of time_us '$t' created csv.db"
    rm -f csv.db
done
for f in 1e300 0x1p8 inf nan; do
    printf '%s\n%s,fp16,mm,1,4096,4096,4096,NN,,%s,event-median,test\n' "$H" $A "$f" >f.csv
    run 2 "$TC" db import --format csv f.csv --into csv.db
    has err "f.csv:2"
done
# a time that is plausible alone but gives an impossible throughput
printf '%s\n%s,fp16,mm,1,65536,65536,65536,NN,0.01,,event-median,test\n' "$H" $A >rate.csv
run 2 "$TC" db import --format csv rate.csv --into csv.db
has err "rate.csv:2"
has err "TFLOP/s"
# ordinary rows still import
printf '%s\n%s,fp16,mm,1,4096,4096,4096,NN,600,,event-median,test\n' "$H" $A >ok.csv
run 0 "$TC" db import --format csv ok.csv --into ok.db
for x in 1e300 0x1p8 inf 1e-300; do
    printf 'Throughput (in TFLOP/s) for 4096x4096x4096: %s\n' "$x" >cb.log
    run 2 "$TC" db import --format cookbook --gpu $A cb.log --into cb.db
    has err "cb.log:1"
done
printf '** Dtype: torch.bfloat16\n    1 |  0x1p8 TFLOPS @ 6912x2048x16384 | best: 0x1p8 TFLOPS\n' >mamf.log
run 2 "$TC" db import --format mamf --gpu $A mamf.log --into mamf.db
has err "mamf.log:2"

# --- a database's rows --------------------------------------------------------
"$TC" db import --format csv "$DATA/vidur-small.csv" --into good.db >/dev/null || fail "base import"
SHAPE=(4096 10240 8192) # a measured row of the fixture, NT
for t in 1e-300 1e-9 1e300; do
    cp good.db tiny.db
    sqlite3 tiny.db "UPDATE gemm SET time_us = $t WHERE m = 4096 AND n = 10240 AND k = 8192" ||
        fail "could not craft tiny.db"
    run 2 "$TC" db check tiny.db
    has err "tiny.db"
    "$TC" predict gemm --gpu $A --layout NT --db tiny.db "${SHAPE[@]}" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ "$rc" -eq 0 ]; then
        no_absurd out "predict gemm --db with time_us $t"
        grep -q "^  time_us  *$t$" "$TMP/out" && fail "predict gemm answered the absurd time $t"
    elif [ "$rc" -ne 2 ]; then
        fail "predict gemm --db with time_us $t: exit $rc, expected 0 or 2"
    fi
    # a merge verifies its result with the same checks
    rm -f merged.db
    run 2 "$TC" db merge merged.db tiny.db
done

# --- a stored calibration ------------------------------------------------------
"$TC" db calibrate good.db >/dev/null 2>&1 || fail "db calibrate of the base database"
sed 's/^dtype: .*/dtype: fp16/' "$MODELS/llama-2-7b.yaml" >m.yaml
for key in c_compute c_memory c_overhead align1 host_event_us q_hi0 nb_scale_nk; do
    for v in 1e308 1e-308; do
        cp good.db cal.db
        python3 - cal.db "$key" "$v" <<'PY' || fail "could not craft cal.db"
import re, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for i, p in c.execute("SELECT id, params_json FROM calibration").fetchall():
    p = re.sub(r'"%s": [-0-9.e+]+' % sys.argv[2], '"%s": %s' % (sys.argv[2], sys.argv[3]), p)
    c.execute("UPDATE calibration SET params_json = ? WHERE id = ?", (p, i))
c.commit()
PY
        run 0 "$TC" predict gemm --gpu $A --db cal.db 8192 8192 8192
        no_absurd out "predict gemm with $key $v"
        has out "time_us"
        run 0 "$TC" predict model --gpu $A --db cal.db --config m.yaml --tp 2
        no_absurd out "predict model with $key $v"
        run 0 "$TC" advise --gpu $A --db cal.db --config m.yaml --top 3
        no_absurd out "advise with $key $v"
    done
done
cp good.db cal.db
sqlite3 cal.db "UPDATE calibration SET params_json = replace(params_json, '\"format\": 2', '\"format\": 0x2')"
run 0 "$TC" predict gemm --gpu $A --db cal.db 8192 8192 8192
no_absurd out "predict gemm with a hex format"

# --- GPU specs -----------------------------------------------------------------
mkdir -p specs
spec() { # spec NAME KEY VALUE: the H100 file with KEY's value replaced
    sed "s/^\( *$2:\) [^#]*/\1 $3   /" "$SHIPPED/h100-sxm5-80gb.yaml" |
        sed "s/^id: .*/id: $1/" >"specs/$1.yaml"
}
spec bw-tiny mem_bw_gbps 1e-300
spec bw-huge mem_bw_gbps 1e300
spec bw-hex mem_bw_gbps 0xD16
spec bw-inf mem_bw_gbps .inf
spec mem-tiny mem_gb 1e-300
spec clock-huge clock_tensor_mhz 1e300
spec tdp-tiny tdp_w 1e-300
spec l2-huge l2_bytes 1000000000000000
for f in specs/*.yaml; do
    run 2 "$TC" specs check "$f"
    has err "$f"
    grep -q ": OK" "$TMP/out" && fail "specs check $f: OK"
done
# the shipped specs stay within the bounds
run 0 "$TC" specs check "$SHIPPED"/*.yaml

finish absurd-values
