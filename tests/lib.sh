# Helpers shared by the command-line integration tests (cli-db, cli-predict,
# cli-specs, layer-accuracy). Sourced, not run: `. "$(dirname "$0")/lib.sh"` after the script
# has checked its environment. Sets TC (the built command) and TMP (a
# temporary folder removed on exit), counts failures in $failures, and leaves
# TILECAST_SPECS_PATH unset so only the shipped specs (or --specs-dir) count.
TC=$TILECAST_BIN
unset TILECAST_SPECS_PATH
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# run EXPECTED_RC CMD...: runs CMD, stdout to $TMP/out, stderr to $TMP/err.
run() {
    local want=$1 rc
    shift
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    [ "$rc" -eq "$want" ] || fail "'$*' exited $rc, expected $want; stderr: $(head -c 600 "$TMP/err")"
}

has() { # has FILE TEXT
    grep -qF -- "$2" "$TMP/$1" || fail "$1 of the last command lacks '$2'"
}

# finish NAME: the script's exit status, 1 when any check failed.
finish() {
    if [ "$failures" -ne 0 ]; then
        echo "$failures check(s) failed" >&2
        exit 1
    fi
    echo "$1: all checks passed"
}
