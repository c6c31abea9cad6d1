#!/bin/bash
# Held-out accuracy of calibrated predictions on measured data.
#
# Usage: tools/holdout-eval.sh MEASURED_CSV [--split shape|group|both]
#                              [--min-time-us T] [--keep DIR]
#
# MEASURED_CSV is in the format of the project's measured data (gpu, dtype,
# op, batch, m, n, k, layout, time_us, tflops, timing, source, ...).
#
#   shape  splits the rows in two halves by a hash of (m, n, k, batch,
#          layout): never the same shape in both halves. Half A is imported
#          into a temporary database and half B evaluated against it, then
#          the other way round.
#   group  where the file has a `model` or `sweep` column: each value in
#          turn is held out whole (leave one model or sweep out), the rest
#          imported.
#   both   (default) both splits.
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
    --split) split="${2:?--split needs shape, group or both}"; shift 2 ;;
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
case "$split" in shape | group | both) ;; *)
    echo "holdout-eval: --split must be shape, group or both, not '$split'" >&2; exit 1 ;;
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
select_rows() { # awk-condition out-file [group-column]
    awk -F, -v cm="$(col m)" -v cn="$(col n)" -v ck="$(col k)" -v cb="$(col batch)" \
        -v cl="$(col layout)" -v cg="${3:-0}" '
        BEGIN { for (i = 32; i < 127; i++) ord[sprintf("%c", i)] = i }
        NR == 1 { print; next }
        {
            # string hash of the shape key: a shape always lands in one half
            key = $cm "," $cn "," $ck "," $cb "," $cl
            h = 5381
            for (i = 1; i <= length(key); i++)
                h = (h * 33 + ord[substr(key, i, 1)]) % 1000000007
            part = (int(h / 7) % 2 == 0) ? "A" : "B"
            group = cg ? $cg : ""
            if ('"$1"') print
        }' "$csv" >"$2"
}

# Imports $1 into a fresh database $2; evaluates $3 against it, then the
# analytical model on the same rows.
run_eval() { # train.csv db test.csv label
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
    echo
}

if [ "$split" = shape ] || [ "$split" = both ]; then
    select_rows 'part == "A"' "$work/half-a.csv"
    select_rows 'part == "B"' "$work/half-b.csv"
    run_eval "$work/half-a.csv" "$work/half-a.db" "$work/half-b.csv" "shape split, A -> B"
    run_eval "$work/half-b.csv" "$work/half-b.db" "$work/half-a.csv" "shape split, B -> A"
fi

if [ "$split" = group ] || [ "$split" = both ]; then
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
                "$gname '$value' held out"
        done
    fi
fi
