#!/usr/bin/env bash
# The cuda backend's first run on a GPU, in one command and about five
# minutes of device time: builds tilecast with CUDA, runs the gpu test
# suite, collects the quick sweep and a small subset of the paper sweep into
# one database, and prints the predictor's error against those
# measurements. The database, its CSV export and a log of everything are
# left in the output folder, to be brought back.
#   tools/gpu-first-run.sh              the run (needs an NVIDIA GPU)
#   tools/gpu-first-run.sh --dry-run    no GPU needed: builds, checks that the
#                                       cuda module loads and its kernels
#                                       compile (sm_90), prints the plan and
#                                       the predicted collection time
# Options:
#   --build-dir DIR     build here (default build-gpu in the source tree); an
#                       existing build is only brought up to date
#   --no-build          use the build folder as it is (the integration test)
#   --gpu ID            GPU spec id (tilecast specs list); default: from the
#                       device name, h100-sxm5-80gb for --dry-run
#   --paper-shards N    the paper subset is shard 0 of N (default 8, about
#                       150 shapes balanced by predicted time)
# The output folder is $OUT if set, else ./gpu-first-run. Exit status: 0 when
# every step passed, 1 when one failed (the others still ran; the log says
# which), 2 on a usage error.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-gpu"
dry=0
no_build=0
gpu=""
shards=8
while [ $# -gt 0 ]; do
    case $1 in
    --dry-run) dry=1 ;;
    --no-build) no_build=1 ;;
    --build-dir) build=${2:?--build-dir needs a value}; shift ;;
    --gpu) gpu=${2:?--gpu needs a value}; shift ;;
    --paper-shards) shards=${2:?--paper-shards needs a value}; shift ;;
    -h | --help) sed -n '2,/^set /p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-first-run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
case $shards in '' | *[!0-9]* | 0) echo "gpu-first-run.sh: --paper-shards N: a positive integer" >&2; exit 2 ;; esac
case $build in /*) ;; *) build="$PWD/$build" ;; esac

out=${OUT:-$PWD/gpu-first-run}
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
log="$out/first-run.log"
db="$out/first-run.db"

failed=()
# step NAME CMD...: runs CMD with its output in the log, timed; a failure is
# noted and the run goes on, so that one broken part still brings back the
# rest.
step() {
    local name=$1 t0 rc
    shift
    echo
    echo "=== $name"
    echo "\$ $*"
    t0=$(date +%s)
    "$@"
    rc=$?
    echo "--- $name: exit $rc after $(( $(date +%s) - t0 )) s"
    [ "$rc" -eq 0 ] || failed+=("$name (exit $rc)")
    return "$rc"
}

# The GPU spec of the device: the name nvidia-smi reports, as tilecast's
# spec ids name them. Empty when unknown.
spec_of_device() {
    local name
    name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)
    case $name in
    *H200*) echo h200-sxm-141gb ;;
    *H100*PCIe*) echo h100-pcie-80gb ;;
    *H100*) echo h100-sxm5-80gb ;;
    *A100*SXM*80GB* | *A100*80GB*HBM2e*) echo a100-sxm4-80gb ;;
    *A100*SXM*) echo a100-sxm4-40gb ;;
    *A100*80GB*PCIe*) echo a100-pcie-80gb ;;
    *A100*PCIE* | *A100*PCIe*) echo a100-pcie-40gb ;;
    *L40S*) echo l40s ;;
    *B200*) echo b200 ;;
    *V100*SXM2*) echo v100-sxm2-32gb ;;
    *V100*PCIE* | *V100*PCIe*) echo v100-pcie-32gb ;;
    esac
}

main() {
echo "tilecast first GPU run: $(date -u +%Y-%m-%dT%H:%M:%SZ), $([ $dry -eq 1 ] && echo dry run || echo on the GPU)"
echo "source: $root ($(git -C "$root" describe --always --dirty 2> /dev/null || echo 'not a git checkout'))"
echo "build:  $build"
echo "output: $out"

# Build: a new folder with the cuda backend required, an existing one as it
# is configured (reconfiguring a tree in use would rebuild it all).
if [ "$no_build" -eq 0 ]; then
    if [ ! -f "$build/build.ninja" ]; then
        step "configure" meson setup "$build" "$root" -Dcuda=enabled -Dtests=true ||
            { echo "cannot configure: stopping"; exit 1; }
    fi
    step "build" ninja -C "$build" || { echo "the build failed: stopping"; exit 1; }
fi
tc="$build/tools/tilecast"
if [ ! -f "$build/collector/tilecast-cuda.so" ]; then
    echo "$build has no cuda backend (configured without CUDA?): meson configure $build -Dcuda=enabled"
    exit 1
fi

# The module loads, its kernels compile, its algorithm records decode, all
# without a device.
step "kernels for sm_90" "$tc" collect --backend cuda --compile-kernels sm_90

quick=(collect --backend cuda --sweep quick)
# The paper subset: one shard of the sweep, balanced by predicted time, with
# a tighter budget per shape so that noisy shapes cannot take the run past
# its minutes.
paper=(collect --backend cuda --sweep paper --shard "0/$shards" --max-time-per-shape-ms 500)

if [ "$dry" -eq 1 ]; then
    plan_gpu=${gpu:-h100-sxm5-80gb}
    echo
    echo "=== plan (on the GPU, without --dry-run)"
    echo "1. meson test -C $build --suite gpu   (the quick sweep, the tile, cluster and oom checks)"
    echo "2. tilecast ${quick[*]} --gpu GPU --db $db"
    echo "3. tilecast ${paper[*]} --gpu GPU --db $db"
    echo "4. tilecast db export $db, then tilecast eval --input first-run.csv [--analytical]"
    echo "GPU: the spec id of the device (here $plan_gpu for the estimates)"
    step "quick sweep estimate" "$tc" "${quick[@]}" --dry-run --gpu "$plan_gpu"
    # (not through a pipe: step must run here to note a failure)
    step "paper subset estimate" "$tc" "${paper[@]}" --dry-run --gpu "$plan_gpu" \
        > "$out/paper-plan.txt"
    cat "$out/paper-plan.txt"
    n=$(sed -n 's/^shapes: [0-9]* in the sweep, \([0-9]*\) in shard.*/\1/p' "$out/paper-plan.txt")
    rm -f "$out/paper-plan.txt"
    echo
    echo "=== device time"
    echo "the estimates above, the quick sweep twice (the gpu suite collects it too), at most"
    echo "${n:-?} x 0.5 s = $(( ${n:-0} / 2 )) s if every paper shape were noisy, and the build:"
    echo "about five minutes in all on one GPU and 16 cores"
    if [ ${#failed[@]} -gt 0 ]; then
        echo "dry run FAILED: ${failed[*]}"
        exit 1
    fi
    echo "dry run ok; log: $log"
    exit 0
fi

if ! nvidia-smi > /dev/null 2>&1; then
    echo "no NVIDIA GPU answers nvidia-smi: use --dry-run on a machine without one"
    exit 1
fi
step "device" nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,clocks.max.sm,temperature.gpu \
    --format=csv
[ -n "$gpu" ] || gpu=$(spec_of_device)
gpu_args=()
if [ -n "$gpu" ]; then
    gpu_args=(--gpu "$gpu")
    echo "GPU spec: $gpu"
else
    echo "no GPU spec matches this device: collecting without --gpu, no prediction error"
fi
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2> /dev/null | head -1 | tr -d .)
[ -n "$cc" ] && step "kernels for sm_$cc" "$tc" collect --backend cuda --compile-kernels "sm_$cc"

step "gpu test suite" meson test -C "$build" --suite gpu --print-errorlogs --num-processes 1
cp "$build/meson-logs/testlog.txt" "$out/gpu-testlog.txt" 2> /dev/null
# a skip passes for meson, but here it means the checks did not run
if grep -Eq '^Skipped: +[1-9]' "$out/gpu-testlog.txt" 2> /dev/null; then
    echo "the gpu test skipped (see gpu-testlog.txt)"
    failed+=("gpu test suite (skipped)")
fi
step "quick sweep" "$tc" "${quick[@]}" "${gpu_args[@]}" --db "$db" --progress-interval 15
step "paper subset" "$tc" "${paper[@]}" "${gpu_args[@]}" --db "$db" --progress-interval 15
step "database" "$tc" db info "$db"
step "check" "$tc" db check "$db"
if step "export" "$tc" db export "$db" --output "$out/first-run.csv" && [ -n "$gpu" ]; then
    # the model alone, then the predictor as shipped (calibrated where the
    # project has data for this GPU), against what was just measured
    step "error of the analytical model" "$tc" eval --input "$out/first-run.csv" --analytical
    step "error of the predictor" "$tc" eval --input "$out/first-run.csv" \
        --output "$out/first-run-eval.csv"
fi

echo
echo "left in $out: $(cd "$out" && ls | tr '\n' ' ')"
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]}"
    exit 1
fi
echo "every step passed"
}

# everything into the log as well; the exit status is main's
main 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
