#!/bin/bash
# Two runs of slurm.sh at once, each with its own munged, slurmctld and
# slurmd: they must not collide (ports, sockets, state directories), so both
# pass. Skips (77) when slurm.sh does.
set -u
here=$(dirname "$0")
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
bash "$here/slurm.sh" > "$logs/a.log" 2>&1 &
a=$!
bash "$here/slurm.sh" > "$logs/b.log" 2>&1 &
b=$!
wait "$a"
rc_a=$?
wait "$b"
rc_b=$?
if [ "$rc_a" -eq 77 ] && [ "$rc_b" -eq 77 ]; then
    tail -1 "$logs/a.log"
    exit 77
fi
status=0
for run in a:$rc_a b:$rc_b; do
    name=${run%%:*} rc=${run#*:}
    if [ "$rc" -ne 0 ]; then
        echo "FAIL: run $name of slurm.sh exited $rc alongside the other:"
        cat "$logs/$name.log"
        status=1
    else
        tail -1 "$logs/$name.log"
    fi
done
[ "$status" -eq 0 ] && echo "ok: two runs in parallel both passed"
exit "$status"
