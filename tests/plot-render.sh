#!/usr/bin/env bash
# Each plot kind drawn to PNG with the system's gnuplot, then the picture
# itself read back (tests/png-colours.py): not empty, the predicted line,
# its interval band and the measured points of `plot throughput` each in a
# colour of their own, the bars of `plot layer` and `plot advise` drawn.
# Also the words the pictures carry: the GPU and dtype named in words,
# microseconds as µs, the advise axis saying where it starts, and a
# --measured comparison drawn against the analytical model. Exit 77
# without gnuplot.
set -u
command -v gnuplot >/dev/null || { echo "gnuplot not installed: skipped"; exit 77; }
. "$(dirname "$0")/lib.sh"
colours="$(dirname "$0")/png-colours.py"
gpu=a100-sxm4-80gb

# count FILE.png COLOUR: how many pixels have exactly that colour
count() {
    awk -v c="$2" '$1 == c { print $2; found = 1 } END { if (!found) print 0 }' "$1.colours"
}
# draw NAME ARGS...: plot to $TMP/NAME.png, read its colours
draw() {
    local name=$1
    shift
    run 0 "$TC" plot "$@" --output "$TMP/$name.png"
    if ! python3 "$colours" "$TMP/$name.png" >"$TMP/$name.png.colours"; then
        fail "$name: the PNG could not be read"
        return
    fi
    [ "$(head -1 "$TMP/$name.png.colours")" = "1100x650" ] || fail "$name: size $(head -1 "$TMP/$name.png.colours")"
    # not empty: under 95 % of the pixels are the white background
    local white
    white=$(count "$TMP/$name.png" '#ffffff')
    [ "$white" -lt $((1100 * 650 * 95 / 100)) ] || fail "$name: $white of $((1100 * 650)) pixels are background"
}

cat >"$TMP/meas.csv" <<'CSV'
gpu,dtype,op,batch,m,n,k,layout,time_us,tflops
a100-sxm4-80gb,fp16,mm,1,4096,1024,4096,NT,,200.5
a100-sxm4-80gb,fp16,mm,1,4096,2048,4096,NT,,210.25
a100-sxm4-80gb,fp16,mm,1,4096,3072,4096,NT,,230
CSV
draw thr throughput --gpu $gpu --sweep n --m 4096 --n 4096 --k 4096 --step 256 --measured "$TMP/meas.csv"
# the first GPU's line, its band and its points (tools/cmd-plot.c's first pair)
[ "$(count "$TMP/thr.png" '#0072b2')" -gt 200 ] || fail "throughput: no predicted line"
[ "$(count "$TMP/thr.png" '#e69f00')" -gt 20 ] || fail "throughput: no measured points in their own colour"
[ "$(count "$TMP/thr.png" '#d1e5f1')" -gt 1000 ] || fail "throughput: no interval band"
grep -q "NVIDIA A100 SXM4 80GB, half precision (fp16)" "$TMP/thr.gp" || fail "throughput: title names the GPU and dtype in words"
grep -q "predicted (analytical model)" "$TMP/thr.gp" || fail "throughput: --measured compares the analytical model"
# four columns per predicted point: x, TFLOP/s and the interval's ends around it
awk '/^# predicted/{b=1;next} /^# measured/{b=0} b && NF==4 && !($3 <= $2 && $2 <= $4) {bad=1} END{exit bad}' "$TMP/thr.dat" ||
    fail "throughput: the interval does not hold the prediction"

draw layer layer --gpu $gpu --hidden 4096 --heads 32 --seq 2048 --micro-batch 4 --analytical
[ "$(count "$TMP/layer.png" '#6e98c9')" -gt 10000 ] || fail "layer: no bars"
grep -q "predicted time per layer (µs)" "$TMP/layer.gp" || fail "layer: the axis is in µs"
grep -q "notitle" "$TMP/layer.gp" && ! grep -q "title 'time" "$TMP/layer.gp" || fail "layer: the legend repeats the axis"

cat >"$TMP/m.yaml" <<'YAML'
name: plot-test
hidden: 2560
heads: 32
layers: 32
seq: 2048
vocab: 50257
micro_batch: 4
YAML
draw adv advise --gpu $gpu --config "$TMP/m.yaml" --top 6 --analytical
[ "$(count "$TMP/adv.png" '#61ae7c')" -gt 10000 ] || fail "advise: no bars"
grep -q "the axis starts at [0-9.]*, not zero" "$TMP/adv.gp" || fail "advise: the axis does not say where it starts"

finish plot-render
