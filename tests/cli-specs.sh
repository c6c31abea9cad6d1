#!/bin/bash
# tilecast specs list/show/check: output and exit codes, and --specs-dir.
set -u
: "${TILECAST_BIN:?TILECAST_BIN is not set}" "${TILECAST_SOURCE_ROOT:?TILECAST_SOURCE_ROOT is not set}"
. "$(dirname "$0")/lib.sh"
DATA=$TILECAST_SOURCE_ROOT/tests/data/specs
SHIPPED=$TILECAST_SOURCE_ROOT/gpu_specs

# --- list -------------------------------------------------------------------
run 0 "$TC" specs list
has out "id"
has out "fp16_tflops"
for id in p100-pcie-16gb p4 v100-sxm2-32gb v100-pcie-32gb t4 a100-sxm4-40gb a100-sxm4-80gb \
    a100-pcie-40gb a100-pcie-80gb l4 l40s h100-sxm5-80gb h100-pcie-80gb h200-sxm-141gb b200 \
    gb200 gb300 mi100 mi210 mi250x mi250 mi300x; do
    grep -q "^$id " "$TMP/out" || fail "specs list lacks $id"
done
[ "$(wc -l <"$TMP/out")" -eq 23 ] || fail "specs list: expected a header and 22 rows"
grep -E "^h100-sxm5-80gb .* 132 +1830 +1980 +989.4 +989.4 +1978.9 +3350 +80 *$" "$TMP/out" >/dev/null ||
    fail "specs list: wrong h100-sxm5-80gb row: $(grep '^h100-sxm5' "$TMP/out")"
grep -E "^v100-sxm2-32gb .* 125 +- +- +900" "$TMP/out" >/dev/null ||
    fail "specs list: v100 should show '-' for bf16 and fp8"

run 0 "$TC" specs list --csv
has out "id,name,arch,units,tensor_mhz,vector_mhz,fp16_tflops,bf16_tflops,fp8_tflops,mem_bw_gbps,mem_gb"
has out "a100-sxm4-80gb,NVIDIA A100 SXM4 80GB,ampere,108,1410,1410,312,312,,2039,80"

run 0 "$TC" specs list --json
if command -v python3 >/dev/null; then
    python3 - "$TMP/out" <<'PY' || fail "specs list --json content"
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 22, len(rows)
by = {r["id"]: r for r in rows}
assert by["mi250x"]["units"] == 110
assert by["a100-sxm4-80gb"]["fp8_tflops"] is None
assert by["h100-sxm5-80gb"]["tensor_mhz"] == 1830
PY
else
    has out '"id": "mi250x"'
fi

run 1 "$TC" specs list --bogus
has err "unknown option '--bogus'"
run 1 "$TC" specs list extra
run 0 "$TC" specs list --help
has out "Usage: tilecast specs list"

# --- show -------------------------------------------------------------------
run 0 "$TC" specs show h100-sxm5-80gb
has out "clock_tensor_mhz"
has out "1830"
has out "peak_tflops.fp16"
has out "989.4  (132 x 4096 FLOP/clk x 1830 MHz = 989.43)"
has out "limits.smem_per_sm_bytes"
has out "233472"
has out "NV-H100-DS"
has out "flags[0]"
has out "gpu_specs/h100-sxm5-80gb.yaml"
# every field the model reads is shown, the optional ones included
run 0 "$TC" specs show a100-pcie-40gb
grep -Eq "^clock_vector_sustained_mhz +1310" "$TMP/out" || fail "specs show: no sustained clock"
run 0 "$TC" specs show a100-pcie-40gb --json
grep -q '"clock_vector_sustained_mhz": 1310' "$TMP/out" || fail "specs show --json: no sustained clock"

run 0 "$TC" specs show mi250x --json
if command -v python3 >/dev/null; then
    python3 - "$TMP/out" <<'PY' || fail "specs show --json content"
import json, sys
g = json.load(open(sys.argv[1]))
assert g["id"] == "mi250x" and g["vendor"] == "amd" and g["arch"] == "cdna2"
assert g["units"] == 110 and g["limits"]["warp_size"] == 64
assert g["clock_vector_sustained_mhz"] is None
assert g["peak_tflops"]["fp16"] == 191.5 and g["peak_tflops"]["tf32"] is None
assert "ROCM-GPU-SPECS" in g["sources"] and len(g["flags"]) >= 1
assert g["file"].endswith("gpu_specs/mi250x.yaml")
PY
fi

run 2 "$TC" specs show nope
has err "unknown GPU 'nope'"
has err "known ids:"
has err "h100-sxm5-80gb"
has err "mi300x"
run 1 "$TC" specs show
run 1 "$TC" specs show a b
run 0 "$TC" specs show h100-sxm5-80gb --csv
has out "field,value"
grep -qx "units,132" "$TMP/out" || fail "specs show --csv: units is not the plain value 132"
grep -qx "peak_tflops.fp16,989.4" "$TMP/out" || fail "specs show --csv: peak_tflops.fp16 is not plain"

# --- --specs-dir and TILECAST_SPECS_PATH ------------------------------------
run 2 "$TC" specs show a10
run 0 "$TC" --specs-dir "$DATA/user" specs show a10
has out "NVIDIA A10"
has out "tests/data/specs/user/a10.yaml"
run 0 "$TC" --specs-dir="$DATA/user" specs list
grep -q "^a10 " "$TMP/out" || fail "--specs-dir: a10 not listed"
[ "$(wc -l <"$TMP/out")" -eq 24 ] || fail "--specs-dir: expected 23 GPUs"
TILECAST_SPECS_PATH=$DATA/user run 0 "$TC" specs show a10
# The same id twice (user dir and TILECAST_SPECS_PATH) is refused.
TILECAST_SPECS_PATH=$DATA/user run 2 "$TC" --specs-dir "$DATA/dup" specs list
has err "duplicate id 'a10'"
run 2 "$TC" --specs-dir "$DATA/no-such-dir" specs list
has err "no-such-dir"
# A bad file in a user directory is reported with its position.
cp "$DATA/bad/wrong-type.yaml" "$TMP/"
run 2 "$TC" --specs-dir "$TMP" specs list
has err "wrong-type.yaml:7:8: units: expected an integer, got 'many'"
rm "$TMP/wrong-type.yaml"

# --- check ------------------------------------------------------------------
run 0 "$TC" specs check "$SHIPPED"/*.yaml
[ "$(grep -c ': OK (' "$TMP/out")" -eq 22 ] || fail "specs check: expected 22 OK lines"
has out "h100-sxm5-80gb.yaml: OK (h100-sxm5-80gb)"

run 0 "$TC" specs check "$SHIPPED/h100-sxm5-80gb.yaml" "$SHIPPED/a100-sxm4-80gb.yaml" --csv
[ "$(cat "$TMP/out")" = "file,id,status,error
$SHIPPED/h100-sxm5-80gb.yaml,h100-sxm5-80gb,OK,
$SHIPPED/a100-sxm4-80gb.yaml,a100-sxm4-80gb,OK," ] || fail "specs check --csv: $(cat "$TMP/out")"
run 2 "$TC" specs check "$SHIPPED/h100-sxm5-80gb.yaml" "$DATA/bad/negative.yaml" --csv
has out "h100-sxm5-80gb.yaml,h100-sxm5-80gb,OK,"
grep -q "negative.yaml,.*,error,.*mem_bw_gbps: must be positive" "$TMP/out" ||
    fail "specs check --csv: no error row: $(cat "$TMP/out")"
has err "negative.yaml:25:14: mem_bw_gbps: must be positive, got -600"
run 2 "$TC" specs check "$DATA/bad/negative.yaml"
has err "negative.yaml:25:14: mem_bw_gbps: must be positive, got -600"
run 2 "$TC" specs check "$DATA/bad/unknown-field.yaml"
has err "unknown-field.yaml:10:1: boost_mhz: unknown field"
run 2 "$TC" specs check "$DATA/bad/missing.yaml"
has err "missing.yaml:2:1: l2_bytes: missing required field"
run 2 "$TC" specs check "$DATA/bad/syntax-error.yaml"
has err "syntax-error.yaml:27:9: YAML syntax error"
run 2 "$TC" specs check "$DATA/bad/inconsistent.yaml"
has err "peak_tflops.fp16 = 137.5"
run 2 "$TC" specs check "$DATA/user/a10.yaml" "$DATA/dup/a10.yaml"
has out "a10.yaml: OK (a10)"
has err "duplicate id 'a10'"
run 2 "$TC" specs check "$TMP/absent.yaml"
has err "absent.yaml: cannot open"

# One good and one bad: exit 2, the good one still reported OK.
run 2 "$TC" specs check --json "$SHIPPED/l40s.yaml" "$DATA/bad/wrong-type.yaml"
if command -v python3 >/dev/null; then
    python3 - "$TMP/out" <<'PY' || fail "specs check --json content"
import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["status"] for r in rows] == ["OK", "error"], rows
assert rows[0]["id"] == "l40s"
assert "wrong-type.yaml:7:8: units" in rows[1]["error"]
PY
fi

run 1 "$TC" specs check
run 1 "$TC" specs bogus
run 0 "$TC" specs --help
has out "tilecast specs check FILE..."
has out "--specs-dir"
run 1 "$TC" specs

# Found through PATH from another folder, with no data-directory override:
# an uninstalled build still reads the source tree's specs.
run 0 env -u TILECAST_DATA_DIR PATH="$(dirname "$TC"):$PATH" sh -c 'cd / && tilecast specs show a100-sxm4-80gb'
has out "a100-sxm4-80gb"

finish cli-specs
