#!/usr/bin/env bash
# collect on a disk that fills up, at every stage: while creating the
# database and while storing rows. Either it succeeds, or it exits 3 with a
# message that says the disk is full and, once rows were measured, what was
# kept; a database it leaves always passes db check, and the same command
# resumes it once there is room. The disk is a small tmpfs, so the test
# needs root (or CAP_SYS_ADMIN) in a mount namespace of its own; exit 77
# otherwise.
set -u
if [ "${TC_DISK_FULL_INNER:-}" != 1 ]; then
    command -v unshare >/dev/null || { echo "no unshare: skipped"; exit 77; }
    unshare -m true 2>/dev/null || { echo "cannot make a mount namespace: skipped"; exit 77; }
    TC_DISK_FULL_INNER=1 exec unshare -m bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
disk=$TMP/disk
mkdir "$disk"
mount -t tmpfs -o size=300k tmpfs "$disk" 2>/dev/null || { echo "cannot mount a tmpfs: skipped"; exit 77; }
trap 'umount "$disk" 2>/dev/null; rm -rf "$TMP"' EXIT

# free KiB from too little to create the file up to enough for the whole sweep
for free in 60 80 90 100 110 120 130 140 150 170 200; do
    rm -rf "${disk:?}"/*
    dd if=/dev/zero of="$disk/fill" bs=1k count=$((300 - free)) 2>/dev/null
    "$TC" collect --backend cpu --sweep quick --db "$disk/x.db" --max-reps 3 --min-reps 1 \
        --quiet >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        [ "$rc" -eq 3 ] || fail "free $free KiB: exit $rc"
        grep -q "disk is full\|disk full" "$TMP/err" || fail "free $free KiB: the message does not say the disk is full: $(head -c 300 "$TMP/err")"
        grep -q "no transaction is active" "$TMP/err" && fail "free $free KiB: a rollback's message hides the error"
    fi
    if [ -e "$disk/x.db" ]; then
        "$TC" db check "$disk/x.db" >"$TMP/check" 2>&1 ||
            fail "free $free KiB (exit $rc): the database left fails db check: $(head -c 300 "$TMP/check")"
        if [ "$rc" -ne 0 ] && grep -q "measured" "$TMP/err"; then
            grep -q "are kept in" "$TMP/err" || fail "free $free KiB: no word of what was kept"
        fi
        # room again: the same command completes the run
        rm -f "$disk/fill"
        "$TC" collect --backend cpu --sweep quick --db "$disk/x.db" --max-reps 3 --min-reps 1 \
            --quiet >"$TMP/out" 2>"$TMP/err" || fail "free $free KiB: the re-run failed: $(head -c 300 "$TMP/err")"
    else
        ls "$disk" | grep -q creating && fail "free $free KiB: a temporary file was left: $(ls "$disk")"
    fi
done
finish disk-full
