#!/bin/bash
# tilecast predict gemm (single, --json, --csv, --explain, batch mode with a
# measured CSV), tilecast eval and tilecast bench: output, numbers and exit
# codes.
set -u
: "${TILECAST_BIN:?TILECAST_BIN is not set}" "${TILECAST_SOURCE_ROOT:?TILECAST_SOURCE_ROOT is not set}"
: "${TILECAST_MEASURED_DATA:?TILECAST_MEASURED_DATA is not set}"
. "$(dirname "$0")/lib.sh"
DATA=$TILECAST_SOURCE_ROOT/tests/data/gemm
MEASURED=$TILECAST_MEASURED_DATA

# value of column NAME in the first data row of CSV file F
csv_value() {
    awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
                          NR == 2 { print $c; exit }' "$1"
}

# --- one shape ----------------------------------------------------------------
run 0 "$TC" predict gemm --analytical --gpu a100-sxm4-80gb --dtype fp16 8192 8192 8192
has out "time_us"
has out "tflops"
has out "prediction (analytical)"
has out "GEMM 8192 x 8192 x 8192 (batch 1), fp16 NN on a100-sxm4-80gb"

run 0 "$TC" predict gemm --analytical --gpu a100-sxm4-80gb --dtype fp16 --csv 8192 8192 8192
has out "gpu,dtype,layout,m,n,k,batch,time_us,tflops,frac_peak,source"
t=$(csv_value "$TMP/out" time_us)
f=$(csv_value "$TMP/out" tflops)
# 2.2e12 FLOP at 180-290 TFLOP/s is 3,800-6,100 us; TFLOP/s must agree with time.
awk -v t="$t" -v f="$f" 'BEGIN { exit !(t > 3800 && t < 6100 && (2*8192^3/t/1e6 - f)^2 < 0.01) }' ||
    fail "8192^3 on A100: time $t us, $f TFLOP/s"

run 0 "$TC" predict gemm --analytical --gpu h100-sxm5-80gb --dtype bf16 --layout NT --json --explain 8192 10944 4096
python3 - "$TMP/out" <<'EOF' || fail "--json --explain output"
import json, sys
r = json.load(open(sys.argv[1]))
assert isinstance(r, dict), "one object, as every predict --json prints"
assert r["prediction"] is True and list(r)[:2] == ["prediction", "gpu"]
assert r["stream_k"] is False
for key in ("time_us", "tflops", "frac_peak", "source", "kernel", "tile_m", "tile_n", "tile_k",
            "stages", "warps", "split_k", "cluster", "tiles", "waves", "wave_eff", "tile_eff",
            "blocks_per_sm", "occupancy", "bound", "align", "compute_us", "memory_us",
            "overhead_us"):
    assert key in r, key
assert r["source"] == "analytical"
assert r["layout"] == "NT" and r["dtype"] == "bf16" and r["m"] == 8192
assert 0 < r["frac_peak"] <= 1 and r["bound"] in ("compute", "memory", "latency")
assert abs(r["tflops"] - 2 * 8192 * 10944 * 4096 / r["time_us"] / 1e6) < 0.01
assert r["tiles"] > 0 and 0 < r["wave_eff"] <= 1 and r["align"] == "128B"
EOF

run 0 "$TC" predict gemm --gpu a100-sxm4-80gb --explain 8192 4096 51201
has out "alignment      unaligned"
# calibrated with no measured neighbour: said so, not "distance 0" (an exact match)
has out "source         prediction (calibrated)"
has out "neighbours     none near enough"
grep -q "0 measured" "$TMP/out" && fail "a calibration without neighbours reads as distance 0"
has out "kernel"
has out "waves"
has out "occupancy"
has out "bound"
odd=$("$TC" predict gemm --analytical --gpu a100-sxm4-80gb --csv 8192 4096 51201 | tail -1 | cut -d, -f9)
even=$("$TC" predict gemm --analytical --gpu a100-sxm4-80gb --csv 8192 4096 51200 | tail -1 | cut -d, -f9)
awk -v a="$odd" -v b="$even" 'BEGIN { exit !(a < 0.4 * b) }' || fail "odd k cliff: $odd vs $even TFLOP/s"
run 0 "$TC" predict gemm --gpu a100-sxm4-80gb --csv --lda 4160 --ldb 4096 --ldc 4096 100 4096 4097
has out "4097"

run 0 "$TC" predict gemm --gpu a100-sxm4-80gb --batch 16 --layout TT --csv 1024 1024 1024
has out ",TT,1024,1024,1024,16,"
run 0 "$TC" predict gemm --gpu a100-sxm4-80gb --analytical 64 64 64
# The H100 step from K = 5952 to 5960 (NT): the residue is one zero-filled
# step of 94 (1.1 % of the loop), and the 16-byte alignment class of rows
# 5960 long costs a TMA kernel nothing, so 5960 takes at most 2 % longer than
# 5952 and never less time: analytical, calibrated (fp16, the prebuilt Vidur
# H100 fit) and transferred (bf16), and with the rows padded to 128 bytes.
# (It was 797.7 -> 730.9 TFLOP/s calibrated, 716 -> 737 transferred.)
run 0 "$TC" predict gemm --gpu h100-sxm5-80gb --layout NT --explain 8192 4096 5952
has out "k_loop         93 steps of 64, no residue"
has out "alignment      128B"
run 0 "$TC" predict gemm --gpu h100-sxm5-80gb --layout NT --explain 8192 4096 5960
has out "k_loop         94 steps of 64, the last 8 deep and zero-filled (1.1% of the loop)"
has out "alignment      16B; lda 5960 (11920 bytes, not a multiple of 128); ldb 5960"
k_step() { # FLAGS...: fails unless K = 5960 takes 1.00-1.02x the time of 5952
    local a b
    a=$("$TC" predict gemm --gpu h100-sxm5-80gb --layout NT "$@" --csv 8192 4096 5952 2>/dev/null |
        tail -1 | cut -d, -f8)
    b=$("$TC" predict gemm --gpu h100-sxm5-80gb --layout NT "$@" --csv 8192 4096 5960 2>/dev/null |
        tail -1 | cut -d, -f8)
    awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 0 && b >= a && b <= a * 1.02) }' ||
        fail "K = 5960 takes $b us against $a at 5952 ($*): not the residue's 1 %"
}
k_step --analytical --dtype fp16
k_step --analytical --dtype bf16
k_step --dtype fp16
k_step --dtype bf16
k_step --analytical --lda 6016 --ldb 6016
run 0 "$TC" predict gemm --gpu mi250x --explain 8192 4096 5960
has out "tail loop at the MFMA depth"
run 0 "$TC" predict gemm --help
has out "--keep-going"
has out "--lda"

# --- bad input and usage -------------------------------------------------------
run 2 "$TC" predict gemm --gpu a100-sxm4-80gb 0 64 64
has err "M: 0 is out of range"
run 2 "$TC" predict gemm --gpu a100-sxm4-80gb -- 64 -5 64
has err "N: -5 is out of range"
run 0 "$TC" predict gemm --gpu a100-sxm4-80gb --json -- 64 64 64
has out '"m": 64'
run 1 "$TC" predict gemm --gpu a100-sxm4-80gb -- 64 64 64 --json
has err "too many arguments: '--json'"
run 2 "$TC" predict gemm --gpu v100-sxm2-32gb --dtype bf16 64 64 64
has err "bf16 is not supported by v100-sxm2-32gb"
run 2 "$TC" predict gemm --gpu a100-sxm4-80gb --dtype fp8 64 64 64
has err "fp8"
run 2 "$TC" predict gemm --gpu no-such-gpu 64 64 64
has err "unknown GPU 'no-such-gpu'"
run 2 "$TC" predict gemm --gpu a100-sxm4-80gb 2097152 2097152 2097152 --batch 2097152
has err "overflows"
run 2 "$TC" predict gemm --gpu a100-sxm4-80gb --lda 10 64 64 64
has err "lda = 10"
run 1 "$TC" predict gemm --gpu a100-sxm4-80gb 64 64
run 1 "$TC" predict gemm 64 64 64
has err "no GPU"
run 2 "$TC" predict gemm --gpu a100-sxm4-80gb --dtype fp12 64 64 64
run 1 "$TC" predict gemm --gpu a100-sxm4-80gb --frobnicate 64 64 64
run 1 "$TC" predict gemm --gpu a100-sxm4-80gb --keep-going 64 64 64
run 1 "$TC" predict nothing
run 1 "$TC" predict gemm --gpu a100-sxm4-80gb --output "$TMP/x.csv" 64 64 64
run 1 "$TC" predict gemm --gpu a100-sxm4-80gb --json --input "$DATA/shapes.csv"
run 2 "$TC" predict gemm --gpu a100-sxm4-80gb --db "$TMP/none.db" 64 64 64

# --- batch mode -----------------------------------------------------------------
# A measured file as it is: every row comes back, every column passes through.
head -201 "$MEASURED/vidur_gemm.csv" >"$TMP/in.csv"
run 0 "$TC" predict gemm --analytical --input "$TMP/in.csv" --output "$TMP/pred.csv"
[ "$(wc -l <"$TMP/pred.csv")" -eq 201 ] || fail "batch: expected 201 lines, got $(wc -l <"$TMP/pred.csv")"
head -1 "$TMP/pred.csv" | grep -qF "$(head -1 "$TMP/in.csv"),pred_time_us,pred_tflops,pred_source,pred_lo_us,pred_hi_us" ||
    fail "batch: header is not the input header plus predictions"
# every row carries its interval around the prediction, and its source
python3 - "$TMP/pred.csv" <<'EOF' || fail "batch: pred_lo_us <= pred_time_us <= pred_hi_us does not hold"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and all(0 < float(r["pred_lo_us"]) <= float(r["pred_time_us"]) <= float(r["pred_hi_us"])
                    and r["pred_source"] == "prediction (analytical)" for r in rows)
EOF
python3 - "$TMP/in.csv" "$TMP/pred.csv" <<'EOF' || fail "batch: columns not passed through"
import csv, sys
a = list(csv.reader(open(sys.argv[1])))
b = list(csv.reader(open(sys.argv[2])))
assert len(a) == len(b)
for x, y in zip(a[1:], b[1:]):
    assert y[:len(x)] == x, (x, y)
    assert float(y[len(x)]) > 0 and y[len(x) + 2] == "prediction (analytical)"
EOF

# All the measured GEMM files work as input (rows and columns preserved).
for f in vidur_gemm neusight_gemm cookbook_gemm rocblas_tensile_efficiency; do
    run 0 "$TC" predict gemm --input "$MEASURED/$f.csv" --output "$TMP/$f.out"
    [ "$(wc -l <"$TMP/$f.out")" -eq "$(wc -l <"$MEASURED/$f.csv")" ] || fail "$f: row count differs"
done

# stdin/stdout, flags as defaults, --explain columns.
printf 'm,n,k\n4096,4096,4096\n128,8192,8192\n' |
    "$TC" predict gemm --gpu h100-sxm5-80gb --dtype bf16 --explain --input - >"$TMP/out" 2>"$TMP/err" ||
    fail "stdin batch failed: $(cat "$TMP/err")"
has out "m,n,k,pred_time_us,pred_tflops,pred_source,pred_lo_us,pred_hi_us,kernel,tile_m,tile_n,tile_k,stages,warps,split_k"
[ "$(wc -l <"$TMP/out")" -eq 3 ] || fail "stdin batch: expected 3 lines"
# an input column named like an explanation column keeps its name and values
printf 'm,n,k,kernel\n4096,4096,4096,ampere_sgemm_128x64_tn\n' |
    "$TC" predict gemm --gpu a100-sxm4-80gb --dtype fp16 --explain --input - >"$TMP/out" 2>"$TMP/err" ||
    fail "batch with a kernel column failed: $(cat "$TMP/err")"
has out "m,n,k,kernel,pred_time_us,pred_tflops,pred_source,pred_lo_us,pred_hi_us,pred_kernel,tile_m,"
has out "4096,4096,4096,ampere_sgemm_128x64_tn,"

# A bad row stops the run (line and column named), leaving no partial output ...
run 2 "$TC" predict gemm --input "$DATA/shapes.csv" --output "$TMP/shapes.out"
has err "shapes.csv:5:5: k"
has err "shapes.out: not written"
[ -e "$TMP/shapes.out" ] && fail "stop: a stopped run must leave no partial output"
# ... or, with --keep-going, is written with an error and the rest continue.
run 2 "$TC" predict gemm --input "$DATA/shapes.csv" --output "$TMP/shapes.out" --keep-going
has err "shapes.csv:5:5: k"
has err "1 of 5 rows failed"
[ "$(wc -l <"$TMP/shapes.out")" -eq 6 ] || fail "keep-going: every row must be written"
grep -q ',pred_error$' "$TMP/shapes.out" || fail "keep-going: no pred_error column"
grep -q '^mi250x,.*,,,,.*shapes.csv:5:5' "$TMP/shapes.out" || fail "keep-going: bad row not marked"
grep -q '^a100-sxm4-80gb,fp16,8192,4096,51201,NN,odd vocab,[0-9.]*,' "$TMP/shapes.out" ||
    fail "keep-going: the row after the bad one is missing"
grep -q '"square, aligned"' "$TMP/shapes.out" || fail "quoted field not re-quoted"

printf 'm,n\n1,2\n' >"$TMP/nok.csv"
run 2 "$TC" predict gemm --gpu a100-sxm4-80gb --input "$TMP/nok.csv"
has err "needs columns m, n and k"
printf 'm,n,k\n64,64\n' >"$TMP/short.csv"
run 2 "$TC" predict gemm --gpu a100-sxm4-80gb --input "$TMP/short.csv"
has err "short.csv:2: expected 3 fields"
printf 'm,n,k\n64,64,64\n' >"$TMP/nogpu.csv"
run 2 "$TC" predict gemm --input "$TMP/nogpu.csv"
has err "no GPU"
run 2 "$TC" predict gemm --gpu a100-sxm4-80gb --input "$TMP/missing.csv"
has err "missing.csv: cannot open"

# --- eval -----------------------------------------------------------------------
run 0 "$TC" eval --analytical --input "$MEASURED/cookbook_gemm.csv" --csv --output "$TMP/rows.csv"
has out "gpu,dtype,group,rows,skipped,mape_pct,median_ape_pct,p90_ape_pct,bias_pct,spearman_tflops"
has out "mi250x,fp16,sweep=bsweep,28,0,"
has out "a100-sxm4-40gb,fp16,all,37,0,"
[ "$(wc -l <"$TMP/rows.csv")" -eq 108 ] || fail "eval --output: expected 108 lines"
has rows.csv "pred_kernel_us,host_us,pred_time_us"
mape=$(grep '^mi250x,fp16,sweep=bsweep,' "$TMP/out" | cut -d, -f6)
awk -v m="$mape" 'BEGIN { exit !(m > 0 && m < 10) }' || fail "eval: MI250X bsweep MAPE $mape"
# within-sweep rank correlation: recomputed here from the per-row output
python3 - "$TMP/out" "$TMP/rows.csv" "$TILECAST_SOURCE_ROOT/tools/sweep-ceiling.py" <<'EOF' ||
import csv, importlib.util, sys
spec = importlib.util.spec_from_file_location("sweep_ceiling", sys.argv[3])
ceiling = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ceiling)
rho = ceiling.spearman
sweeps = {}
for r in csv.DictReader(open(sys.argv[2])):
    if r["status"] == "ok":
        sweeps.setdefault((r["gpu"], r["sweep"]), []).append(
            (float(r["tflops"]), float(r["pred_tflops"])))
summary = {r["gpu"]: r for r in csv.DictReader(open(sys.argv[1])) if r["group"] == "all"}
for gpu, s in summary.items():
    got = sorted(rho([a for a, _ in v], [b for _, b in v])
                 for (g, _), v in sweeps.items() if g == gpu and len(v) >= 5)
    assert int(s["sweeps"]) == len(got) == 2, (gpu, s, got)
    assert abs(float(s["sweep_rho_min"]) - got[0]) < 1e-3, (gpu, s, got)
    assert abs(float(s["sweep_rho_median"]) - (got[0] + got[1]) / 2) < 1e-3, (gpu, s, got)
EOF
    fail "eval: within-sweep Spearman"
run 0 "$TC" eval --analytical --input "$MEASURED/cookbook_gemm.csv" --csv --group-by sweep+op --sweep none
has out "v100-sxm2-32gb,fp16,\"sweep=m_sweep,op=mm\",9,0,"
grep -q '^mi250x,fp16,all,37,0,[0-9.]*,[0-9.]*,[0-9.]*,[-+0-9.]*,[0-9.]*,,,,' "$TMP/out" ||
    fail "eval --sweep none: the sweep columns must be empty"
run 1 "$TC" eval --analytical --input "$MEASURED/cookbook_gemm.csv" --group-by sweep+nosuch
has err "cookbook_gemm.csv:1: --group-by sweep+nosuch: no such column"
run 1 "$TC" eval --analytical --input "$MEASURED/cookbook_gemm.csv" --sweep nosuch
has err "--sweep nosuch: no such column"
run 0 "$TC" eval --analytical --input "$MEASURED/cookbook_gemm.csv"
has out "Timing 'wall-slowest': 28 us of host time added to each analytical"
has out "Sweeps: rows with the same sweep (2 sweeps)"
run 0 "$TC" eval --analytical --input "$MEASURED/rocblas_tensile_efficiency.csv" --json
python3 - "$TMP/out" <<'EOF' || fail "eval: efficiency rows"
import json, sys
r = json.load(open(sys.argv[1]))[0]
assert r["eff_rows"] == 3228 and r["rows"] == 0 and r["spearman_eff"] > 0.9, r
EOF
run 0 "$TC" eval --analytical --min-time-us 1000 --input "$MEASURED/cookbook_gemm.csv" --csv --group-by none
grep -q '^v100-sxm2-32gb,fp16,all,[0-9]*,[1-9][0-9]*,' "$TMP/out" || fail "eval: rows below the threshold must be counted"
# nn.Linear's longer host path: 23 us more under host-timed methods, nothing
# under a profiler; the host_us column says what was added
cat >"$TMP/ops.csv" <<'EOF'
gpu,dtype,op,batch,m,n,k,layout,time_us,timing
a100-pcie-40gb,fp32,linear,1,58,141,13,NT,54.5,event-fastest5-mean
a100-pcie-40gb,fp32,bmm,1,58,141,13,NN,32.3,event-fastest5-mean
a100-pcie-40gb,fp32,linear,1,58,141,13,NT,30.0,profiler-median
EOF
run 0 "$TC" eval --analytical --input "$TMP/ops.csv" --output "$TMP/ops-rows.csv"
has out "op=linear (nn.Linear) timed on the host: 23 us more"
python3 - "$TMP/ops-rows.csv" <<'EOF' || fail "eval: host_us by op and timing method"
import csv, sys
host = [float(r["host_us"]) for r in csv.DictReader(open(sys.argv[1]))]
assert host == [51.0, 28.0, 0.0], host
EOF
run 0 "$TC" predict gemm --gpu a100-pcie-40gb --dtype fp32 --analytical --timing event --op linear --csv 58 141 13
lin=$(tail -1 "$TMP/out" | cut -d, -f8)
run 0 "$TC" predict gemm --gpu a100-pcie-40gb --dtype fp32 --analytical --timing event --csv 58 141 13
mm=$(tail -1 "$TMP/out" | cut -d, -f8)
run 0 "$TC" predict gemm --gpu a100-pcie-40gb --dtype fp32 --analytical --op linear --csv 58 141 13
kernel=$(tail -1 "$TMP/out" | cut -d, -f8)
awk -v l="$lin" -v m="$mm" -v k="$kernel" 'BEGIN { d = l - m - 23; e = m - k - 28; exit !(d * d < 1e-6 && e * e < 1e-6) }' ||
    fail "predict gemm --timing event: linear $lin, mm $mm, kernel $kernel us"
run 2 "$TC" predict gemm --gpu a100-pcie-40gb --op conv 8 8 8
has err "unknown op 'conv'"
# a misspelt method is refused, not taken as kernel time; the data's own tags
# and the class names are accepted
run 2 "$TC" predict gemm --gpu a100-pcie-40gb --dtype fp32 --analytical --timing evnet 58 141 13
has err "unknown method 'evnet'"
[ -s "$TMP/out" ] && fail "predict gemm --timing evnet printed a prediction"
for t in kernel wall-max cupti-median profiler-median event-mean-l2flush wall-avg-incl-launch; do
    run 0 "$TC" predict gemm --gpu a100-pcie-40gb --dtype fp32 --analytical --timing "$t" --csv 58 141 13
done
run 2 "$TC" eval --input "$DATA/shapes.csv"
has err "neither time_us nor efficiency_pct"
run 1 "$TC" eval
has err "--input FILE is required"

# --- bench ------------------------------------------------------------------------
run 0 "$TC" bench predict --rows 2000
has out "predictions/s"
has out "peak RSS"
run 1 "$TC" bench nothing

finish cli-predict
