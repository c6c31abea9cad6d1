#!/usr/bin/env bash
# Checks the C sources against the house format and clang-tidy checks, as
# STYLE asks: clang-format 14 with .clang-format (no file may differ from
# its formatted self) and clang-tidy with .clang-tidy over the sources
# configured in BUILD (default: build; configured here if missing), tests
# included. Exit 0 when both are clean, 1 when either finds something (the
# files and findings are printed), 77 when a tool is missing.
#
#   tools/lint.sh [--format-only|--tidy-only] [BUILD]
#
# Fix formatting with: clang-format -i FILE (the version must be 14: other
# versions format some constructs differently).
set -uo pipefail
cd "$(dirname "$0")/.."
do_format=1 do_tidy=1
case "${1:-}" in
--format-only) do_tidy=0; shift ;;
--tidy-only) do_format=0; shift ;;
-h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
build=${1:-build}

find_tool() { # name: the version-14 binary, or the plain one if it is version 14
    local t
    for t in "$1-14" "$1"; do
        if command -v "$t" >/dev/null && "$t" --version | grep -q 'version 14\.'; then
            echo "$t"
            return 0
        fi
    done
    return 1
}

status=0
mapfile -t sources < <(git ls-files -- '*.c' '*.h')
if [ "$do_format" = 1 ]; then
    if ! fmt=$(find_tool clang-format); then
        echo "lint: clang-format 14 not found" >&2
        exit 77
    fi
    bad=0
    for f in "${sources[@]}"; do
        if ! "$fmt" --dry-run --Werror "$f" 2>/dev/null; then
            echo "format: $f differs from clang-format's output (clang-format -i $f)"
            bad=$((bad + 1))
        fi
    done
    echo "format: ${#sources[@]} files checked, $bad to reformat"
    [ "$bad" = 0 ] || status=1
fi
if [ "$do_tidy" = 1 ]; then
    if ! tidy=$(find_tool clang-tidy) || ! command -v run-clang-tidy >/dev/null; then
        echo "lint: clang-tidy 14 (and run-clang-tidy) not found" >&2
        exit 77
    fi
    [ -f "$build/compile_commands.json" ] || meson setup "$build" >/dev/null || exit 1
    # generated headers (config.h) must exist before clang-tidy parses a file
    ninja -C "$build" >/dev/null || exit 1
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    # only the project's own sources: the build folder also lists generated files
    run-clang-tidy -clang-tidy-binary "$(command -v "$tidy")" -p "$build" -quiet \
        -j "$(nproc)" '/(common|db|predictor|collector|tools|tests|python)/[^/]*\.c$' \
        2>&1 | sed 's/\x1b\[[0-9;]*m//g' >"$log"
    rc=$?
    grep -E '(warning|error): ' "$log" | sort -u
    n=$(grep -cE '(warning|error): ' "$log")
    echo "tidy: $n findings"
    if [ "$rc" != 0 ] || [ "$n" != 0 ]; then
        [ "$n" != 0 ] || tail -20 "$log"
        status=1
    fi
fi
exit $status
