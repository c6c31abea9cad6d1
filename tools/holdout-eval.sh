#!/bin/bash
# Held-out accuracy of calibrated predictions on measured data.
#
# Usage: tools/holdout-eval.sh MEASURED_CSV
#                              [--split shape|tokens|octaves|sweeps|group|both|all]
#                              [--min-time-us T] [--keep DIR]
#
# MEASURED_CSV is in the format of the project's measured data (gpu, dtype,
# op, batch, m, n, k, layout, time_us, tflops, timing, source, ...).
#
#   shape  splits the rows in two halves by a hash of (m, n, k, batch,
#          layout): never the same shape in both halves. Half A is imported
#          into a temporary database and half B evaluated against it, then
#          the other way round.
#   tokens splits the rows in two halves by a hash of m alone (the token
#          count of a linear layer): every GEMM of a layer lands in the same
#          half, so no shape of a held-out layer is in the calibration.
#   octaves holds out every other octave of m (m in [2^j, 2^(j+1)) for
#          odd j against even j): the calibration has to extrapolate over
#          a whole octave of token counts.
#   sweeps splits whole sweeps in two halves by a hash of the sweep's key
#          (Vidur: model, tp and vidur_op, one token sweep of one GEMM of a
#          layer; otherwise the `sweep` column): no row of a held-out sweep
#          is in the calibration, though other sweeps may share its n or k.
#   group  where the file has a `model` or `sweep` column: each value in
#          turn is held out whole (leave one model or sweep out), the rest
#          imported.
#   both   (default) shape and group.
#   all    shape, tokens, octaves, sweeps and group.
#
# Where the file describes whole layers (columns model, tp and vidur_op, as
# Vidur's profiles do), the tokens, octaves and group splits also compare the
# predicted sum of each held-out layer's four GEMMs with the measured sum
# (`tilecast predict layer --measured`), calibrated and analytical.
#
# Every evaluation prints `tilecast eval`'s summary (per GPU and dtype:
# rows, MAPE, median and p90 error, bias, Spearman of TFLOP/s) for the
# calibrated predictor, then the analytical model on the same rows for
# comparison. Rows below --min-time-us (default 20) are skipped by eval.
#
# The tilecast binary is $TILECAST_BIN, else `tilecast` on PATH.
# Exit status: 0 ok, 1 usage, 2 bad input, 3 a tilecast step failed.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

csv=""
split=both
min_time=20
keep=""
while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help) usage; exit 0 ;;
    --split) split="${2:?--split needs shape, tokens, octaves, sweeps, group, both or all}"; shift 2 ;;
    --min-time-us) min_time="${2:?--min-time-us needs a value}"; shift 2 ;;
    --keep) keep="${2:?--keep needs a directory}"; shift 2 ;;
    -*) echo "holdout-eval: unknown option '$1' (see --help)" >&2; exit 1 ;;
    *)
        if [ -n "$csv" ]; then
            echo "holdout-eval: one CSV at a time ('$csv' and '$1')" >&2
            exit 1
        fi
        csv="$1"; shift ;;
    esac
done
case "$split" in shape | tokens | octaves | sweeps | group | both | all) ;; *)
    echo "holdout-eval: --split must be shape, tokens, octaves, sweeps, group, both or all, not '$split'" >&2; exit 1 ;;
esac
if [ -z "$csv" ]; then
    usage >&2
    exit 1
fi
if [ ! -r "$csv" ]; then
    echo "holdout-eval: cannot read '$csv'" >&2
    exit 2
fi
tilecast="${TILECAST_BIN:-tilecast}"
if ! command -v "$tilecast" >/dev/null 2>&1; then
    echo "holdout-eval: tilecast binary '$tilecast' not found (set TILECAST_BIN)" >&2
    exit 3
fi

if [ -n "$keep" ]; then
    mkdir -p "$keep"
    work="$keep"
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/holdout-eval.XXXXXX")
    trap 'rm -rf "$work"' EXIT
fi

header=$(head -n 1 "$csv")
col() { # index (1-based) of a header column, 0 if absent
    echo "$header" | tr -d '\r' | awk -F, -v name="$1" \
        '{ for (i = 1; i <= NF; i++) if ($i == name) { print i; exit } print 0 }'
}
for c in m n k batch layout time_us; do
    if [ "$(col "$c")" = 0 ]; then
        echo "holdout-eval: $csv:1: no '$c' column" >&2
        exit 2
    fi
done

# Writes the rows of $csv selected by an awk condition on `part` (the
# row's half) or `group` into $2, with the header. Quoted fields are not
# split by the key columns this needs (numbers and short tags).
select_rows() { # awk-condition out-file [group-column [shape|tokens|octaves|sweeps]]
    awk -F, -v cm="$(col m)" -v cn="$(col n)" -v ck="$(col k)" -v cb="$(col batch)" \
        -v cl="$(col layout)" -v cg="${3:-0}" -v by="${4:-shape}" -v sweep_cols="$sweep_cols" '
        BEGIN {
            for (i = 32; i < 127; i++) ord[sprintf("%c", i)] = i
            ns = split(sweep_cols, sc, " ")
        }
        NR == 1 { print; next }
        {
            # string hash of the shape key: a shape always lands in one half
            key = by == "tokens" ? $cm : $cm "," $cn "," $ck "," $cb "," $cl
            if (by == "sweeps") {
                key = ""
                for (i = 1; i <= ns; i++)
                    key = key "," $sc[i]
            }
            h = 5381
            for (i = 1; i <= length(key); i++)
                h = (h * 33 + ord[substr(key, i, 1)]) % 1000000007
            part = (int(h / 7) % 2 == 0) ? "A" : "B"
            if (by == "octaves") {
                j = 0
                for (v = $cm; v >= 2; v = int(v / 2))
                    j++
                part = (j % 2 == 0) ? "A" : "B"
            }
            group = cg ? $cg : ""
            if ('"$1"') print
        }' "$csv" >"$2"
}

# The columns (indices) that name one sweep, for --split sweeps.
sweep_cols=""
if [ "$(col model)" != 0 ] && [ "$(col tp)" != 0 ] && [ "$(col vidur_op)" != 0 ]; then
    sweep_cols="$(col model) $(col tp) $(col vidur_op)"
elif [ "$(col sweep)" != 0 ]; then
    sweep_cols="$(col sweep)"
fi

# Imports $1 into a fresh database $2; evaluates $3 against it, then the
# analytical model on the same rows.
layers=0
if [ "$(col model)" != 0 ] && [ "$(col tp)" != 0 ] && [ "$(col vidur_op)" != 0 ]; then
    layers=1
fi

run_eval() { # train.csv db test.csv label [layers]
    rm -f "$2"
    if ! "$tilecast" db import --format csv --skip-untimed "$1" --into "$2" >/dev/null; then
        echo "holdout-eval: importing $1 failed" >&2
        exit 3
    fi
    echo "== $4: calibrated on $(($(wc -l <"$1") - 1)) rows, evaluated on" \
        "$(($(wc -l <"$3") - 1)) held-out rows"
    "$tilecast" eval --input "$3" --db "$2" --min-time-us "$min_time" || true
    echo "-- the same rows, analytical model only"
    "$tilecast" eval --input "$3" --analytical --min-time-us "$min_time" || true
    if [ "${5:-0}" = 1 ]; then
        echo "-- whole layers of the held-out rows, calibrated"
        "$tilecast" predict layer --measured "$3" --db "$2" --no-prebuilt \
            --min-time-us "$min_time" || true
        echo "-- the same layers, analytical model only"
        "$tilecast" predict layer --measured "$3" --analytical --min-time-us "$min_time" || true
    fi
    echo
}

if [ "$split" = shape ] || [ "$split" = both ] || [ "$split" = all ]; then
    select_rows 'part == "A"' "$work/half-a.csv"
    select_rows 'part == "B"' "$work/half-b.csv"
    run_eval "$work/half-a.csv" "$work/half-a.db" "$work/half-b.csv" "shape split, A -> B"
    run_eval "$work/half-b.csv" "$work/half-b.db" "$work/half-a.csv" "shape split, B -> A"
fi

if [ "$split" = tokens ] || [ "$split" = all ]; then
    select_rows 'part == "A"' "$work/tokens-a.csv" 0 tokens
    select_rows 'part == "B"' "$work/tokens-b.csv" 0 tokens
    run_eval "$work/tokens-a.csv" "$work/tokens-a.db" "$work/tokens-b.csv" \
        "token split, A -> B" "$layers"
    run_eval "$work/tokens-b.csv" "$work/tokens-b.db" "$work/tokens-a.csv" \
        "token split, B -> A" "$layers"
fi

if [ "$split" = octaves ] || [ "$split" = all ]; then
    select_rows 'part == "A"' "$work/octaves-a.csv" 0 octaves
    select_rows 'part == "B"' "$work/octaves-b.csv" 0 octaves
    run_eval "$work/octaves-a.csv" "$work/octaves-a.db" "$work/octaves-b.csv" \
        "octave split (even octaves of m -> odd)" "$layers"
    run_eval "$work/octaves-b.csv" "$work/octaves-b.db" "$work/octaves-a.csv" \
        "octave split (odd octaves of m -> even)" "$layers"
fi

if [ "$split" = sweeps ] || [ "$split" = all ]; then
    if [ -z "$sweep_cols" ]; then
        echo "== sweep split: $csv has neither model, tp and vidur_op nor a sweep column; skipped"
    else
        select_rows 'part == "A"' "$work/sweeps-a.csv" 0 sweeps
        select_rows 'part == "B"' "$work/sweeps-b.csv" 0 sweeps
        run_eval "$work/sweeps-a.csv" "$work/sweeps-a.db" "$work/sweeps-b.csv" \
            "sweep split, A -> B"
        run_eval "$work/sweeps-b.csv" "$work/sweeps-b.db" "$work/sweeps-a.csv" \
            "sweep split, B -> A"
    fi
fi

if [ "$split" = group ] || [ "$split" = both ] || [ "$split" = all ]; then
    gcol=0
    for name in model sweep; do
        if [ "$(col "$name")" != 0 ]; then
            gcol=$(col "$name")
            gname=$name
            break
        fi
    done
    if [ "$gcol" = 0 ]; then
        echo "== group split: $csv has no model or sweep column; skipped"
    else
        tail -n +2 "$csv" | cut -d, -f"$gcol" | sort -u | while read -r value; do
            [ -n "$value" ] || continue
            safe=$(echo "$value" | tr -c 'A-Za-z0-9._-' '_')
            select_rows "group != \"$value\"" "$work/train-$safe.csv" "$gcol"
            select_rows "group == \"$value\"" "$work/test-$safe.csv" "$gcol"
            if [ "$(wc -l <"$work/train-$safe.csv")" -le 1 ]; then
                echo "== $gname $value held out: no other $gname to calibrate on; skipped"
                continue
            fi
            run_eval "$work/train-$safe.csv" "$work/train-$safe.db" "$work/test-$safe.csv" \
                "$gname '$value' held out" "$layers"
        done
    fi
fi
