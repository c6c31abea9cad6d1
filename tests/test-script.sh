#!/bin/bash
# tools/test.sh, the README's test command, run on a small meson project of
# its own (a test that passes, one that fails, one that skips): it ends with
# "N passed, N failed, N skipped" from meson's log of that run, also when a
# test fails, and exits with meson test's status. Then tools/test-summary.py,
# which .ci/run sums its logs with too, on logs made up here.
set -u
: "${TILECAST_BIN:?}" "${TILECAST_SOURCE_ROOT:?}"
for tool in meson ninja python3; do
    command -v "$tool" > /dev/null || { echo "$tool not installed: skip"; exit 77; }
done
. "$(dirname "$0")/lib.sh"
SUMMARY=$TILECAST_SOURCE_ROOT/tools/test-summary.py

last() { # last LINE: the last line of the last command's stdout is LINE
    [ "$(tail -n 1 "$TMP/out")" = "$1" ] ||
        fail "the last line is '$(tail -n 1 "$TMP/out")', expected '$1'"
}

P=$TMP/project
mkdir -p "$P/tools"
cp "$TILECAST_SOURCE_ROOT/tools/test.sh" "$SUMMARY" "$P/tools/"
cat > "$P/meson.build" <<'MESON'
project('summary-check')
sh = find_program('sh')
test('pass', sh, args: ['-c', 'exit 0'])
test('fail', sh, args: ['-c', 'exit 1'])
test('skip', sh, args: ['-c', 'exit 77'])
add_test_setup('other')
MESON

run 1 "$P/tools/test.sh"
last "1 passed, 1 failed, 1 skipped"
run 0 "$P/tools/test.sh" pass skip
last "1 passed, 0 failed, 1 skipped"
# under --setup meson writes testlog-other.json; the earlier testlog.json is
# not this run's
run 0 "$P/tools/test.sh" --setup other pass
last "1 passed, 0 failed, 0 skipped"
run 1 "$P/tools/test.sh" --setup other fail
last "0 passed, 1 failed, 0 skipped"

# the summary alone: every result meson writes, and a line cut short
printf '%s\n' '{"name": "a", "result": "OK"}' '{"name": "b", "result": "EXPECTEDFAIL"}' \
    '{"name": "c", "result": "SKIP"}' '{"name": "d", "result": "FAIL"}' \
    '{"name": "e", "result": "TIMEOUT"}' '{"name": "f", "result": "UNEXPECTEDPASS"}' \
    '' '{"name": "g", "resu' > "$TMP/one.json"
printf '%s\n' '{"name": "h", "result": "OK"}' > "$TMP/two.json"
run 1 python3 "$SUMMARY" "$TMP/one.json"
last "2 passed, 4 failed, 1 skipped"
has err "one.json:8"
run 0 python3 "$SUMMARY" "$TMP/two.json" "$TMP/absent.json"
last "1 passed, 0 failed, 0 skipped"
run 1 python3 "$SUMMARY" "$TMP/one.json" "$TMP/two.json"
last "3 passed, 4 failed, 1 skipped"
printf '%s\n' '{"name": "s", "result": "SKIP"}' > "$TMP/skip.json"
run 1 python3 "$SUMMARY" "$TMP/skip.json"
has out "no tests ran"
last "0 passed, 0 failed, 1 skipped"

finish test-script
