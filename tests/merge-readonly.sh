#!/usr/bin/env bash
# db merge into an OUT this user may not write (a read-only file, or
# another user's): refused with a message naming it, exit 2 or 3, before
# anything is opened, so OUT keeps its bytes, owner and mode and no -wal or
# -shm of this user's is left beside it. As root (who may write anything)
# the merge runs as user nobody through setpriv; without setpriv or nobody,
# as root, it is skipped.
set -u
. "$(dirname "$0")/lib.sh"
data=$TILECAST_MEASURED_DATA
as=()
if [ "$(id -u)" -eq 0 ]; then
    command -v setpriv >/dev/null && id nobody >/dev/null 2>&1 ||
        { echo "running as root without setpriv or user nobody: skipped"; exit 77; }
    as=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups)
    chmod 755 "$TMP"
fi
dir=$TMP/shared
mkdir "$dir" && chmod 1777 "$dir"
run 0 "$TC" db import --format csv "$data/vidur_gemm.csv" --into "$dir/out.db"
run 0 "$TC" db import --format csv "$data/cookbook_gemm.csv" --into "$dir/in.db"
chmod 444 "$dir/out.db"
chmod 644 "$dir/in.db"
before=$(sha256sum <"$dir/out.db")
mode=$(stat -c '%u %a' "$dir/out.db")
"${as[@]}" "$TC" db merge "$dir/out.db" "$dir/in.db" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" -eq 2 ] || [ "$rc" -eq 3 ] || fail "merge into a read-only OUT exited $rc"
grep -q "out.db: not writable by this user" "$TMP/err" || fail "message: $(cat "$TMP/err")"
[ "$(sha256sum <"$dir/out.db")" = "$before" ] || fail "OUT changed"
[ "$(stat -c '%u %a' "$dir/out.db")" = "$mode" ] || fail "OUT's owner or mode changed"
[ ! -e "$dir/out.db-wal" ] && [ ! -e "$dir/out.db-shm" ] || fail "a -wal or -shm was left beside OUT"
ls "$dir" | grep -q 'merge-' && fail "a temporary merge file was left: $(ls "$dir")"
finish merge-readonly
