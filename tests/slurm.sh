#!/bin/bash
# A real one-node SLURM (Debian's slurm-wlm and munge) configured under a
# temporary directory, started here and stopped by PID: the cpu backend runs
# tools/slurm/collect.sbatch as `sbatch --array=0-3 --wait`, the four shard
# files are merged with `tilecast db merge`, and the merged set of shapes
# must equal that of one unsharded run. Skips (77) without slurmctld/munged
# or without root (slurmd runs jobs as root here). The daemons listen on
# ports picked free at start, so that runs in parallel and a SLURM already on
# the host do not collide.
set -u
: "${TILECAST_BIN:?}" "${TILECAST_SOURCE_ROOT:?}"
export PATH="$PATH:/usr/sbin:/sbin"
for tool in slurmctld slurmd munged sbatch scontrol sinfo sqlite3 runuser python3; do
    command -v "$tool" > /dev/null || { echo "$tool not installed: skip"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "not root: skip"; exit 77; }
id munge > /dev/null 2>&1 || { echo "no munge user: skip"; exit 77; }
"$TILECAST_BIN" collect --help > /dev/null || exit 1
if "$TILECAST_BIN" collect --backend cpu --sweep /dev/null --db /nonexistent/x.db 2>&1 |
        grep -q "built without the cpu backend"; then
    echo "built without the cpu backend: skip"; exit 77
fi

tmp=$(mktemp -d /tmp/tilecast-slurm.XXXXXX)
chmod 755 "$tmp"
munged_pid='' ctld_pid='' slurmd_pid=''
stop() {
    # slurmd, then slurmctld, then munged; by PID, never by name
    for pid in $slurmd_pid $ctld_pid $munged_pid; do
        kill -TERM "$pid" 2> /dev/null || continue
        for _ in $(seq 1 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2> /dev/null
    done
    rm -rf "$tmp"
}
trap stop EXIT
fail() {
    echo "FAIL: $*"
    for f in "$tmp"/log/*.log "$tmp"/jobs/*.log; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done
    exit 1
}

host=$(hostname -s)
ncpu=$(nproc)
mkdir -p "$tmp/munge" "$tmp/munge-run" "$tmp/log" "$tmp/state" "$tmp/spool" "$tmp/run" "$tmp/jobs"

# munge: its own key and socket, as the munge user (it refuses root-owned keys)
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chown -R munge:munge "$tmp/munge" "$tmp/munge-run"
chmod 0700 "$tmp/munge"
chmod 0400 "$tmp/munge/munge.key"
# the socket's directory must be searchable by every client
chmod 0755 "$tmp/munge-run"
sock="$tmp/munge-run/munge.socket"
runuser -u munge -- munged --foreground --key-file="$tmp/munge/munge.key" --socket="$sock" \
    --pid-file="$tmp/munge-run/munged.pid" --log-file="$tmp/munge/munged.log" \
    --seed-file="$tmp/munge/munged.seed" --origin=127.0.0.1 > "$tmp/log/munged.out" 2>&1 &
munged_pid=$!
for _ in $(seq 1 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "munged did not start"

# Two free TCP ports: bound at once (so they differ) on every address, as
# slurmctld and slurmd bind theirs, then released for them to take.
ports=$(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s:
    x.bind(("", 0))
print(*(x.getsockname()[1] for x in s))') || fail "cannot pick free TCP ports"
read -r ctld_port slurmd_port <<< "$ports"
[ -n "$slurmd_port" ] || fail "cannot pick free TCP ports: '$ports'"

cat > "$tmp/slurm.conf" <<CONF
ClusterName=tilecast-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=4
SchedulerParameters=batch_sched_delay=0
SlurmdParameters=config_overrides
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
MpiDefault=none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$ncpu State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$tmp/slurm.conf"

slurmctld -D -f "$SLURM_CONF" > "$tmp/log/slurmctld.out" 2>&1 &
ctld_pid=$!
slurmd -D -f "$SLURM_CONF" > "$tmp/log/slurmd.out" 2>&1 &
slurmd_pid=$!
for _ in $(seq 1 100); do scontrol ping 2> /dev/null | grep -q UP && break; sleep 0.1; done
scontrol ping | grep -q UP || fail "slurmctld does not answer"
for _ in $(seq 1 100); do sinfo -h -o %t 2> /dev/null | grep -q idle && break; sleep 0.1; done
sinfo -h -o %t | grep -q idle || fail "the node is not idle: $(sinfo -h -o '%t %E')"

# The template, minus the GPU request this test node does not have.
sed '/--gpus-per-task/d' "$TILECAST_SOURCE_ROOT/tools/slurm/collect.sbatch" > "$tmp/jobs/collect.sbatch"
sweep="$TILECAST_SOURCE_ROOT/tests/data/sweeps/kill.yaml"
common="--max-time-per-shape-ms 20 --min-reps 3 --warmup 1"
cd "$tmp/jobs" || fail "no work directory"
TILECAST="$TILECAST_BIN" TILECAST_BACKEND=cpu TILECAST_GPU='' TILECAST_SWEEP="$sweep" \
TILECAST_OUT=shard TILECAST_COLLECT_ARGS="$common" OPENBLAS_NUM_THREADS=1 \
    sbatch --array=0-3 --wait --cpus-per-task=1 --time=10 "$tmp/jobs/collect.sbatch" \
    > "$tmp/jobs/sbatch.out" 2>&1 || { cat "$tmp/jobs/sbatch.out"; fail "sbatch --wait failed"; }
cat "$tmp/jobs/sbatch.out"
for i in 0 1 2 3; do
    [ -f "shard-$i-of-4.db" ] || fail "shard $i wrote no database"
    shard=$(sqlite3 "shard-$i-of-4.db" "SELECT shard FROM run")
    [ "$shard" = "$i/4" ] || fail "shard $i recorded '$shard'"
done
"$TILECAST_BIN" db merge merged.db shard-*-of-4.db || fail "tilecast db merge"
"$TILECAST_BIN" db check merged.db > /dev/null || fail "merged database fails db check"

# one unsharded run of the same sweep, outside SLURM
# shellcheck disable=SC2086
OPENBLAS_NUM_THREADS=1 "$TILECAST_BIN" collect --backend cpu --sweep "$sweep" --db single.db \
    --quiet $common > /dev/null || fail "unsharded run"
shapes() {
    sqlite3 "$1" "SELECT 'gemm', dtype, layout, m, n, k, batch, status FROM gemm
                  UNION ALL SELECT 'attention', dtype, batch, heads, kv_heads, seq_q, causal, status
                  FROM attention ORDER BY 1, 2, 3, 4, 5, 6, 7"
}
shapes merged.db > merged.txt
shapes single.db > single.txt
n=$(wc -l < single.txt)
[ "$n" -gt 30 ] || fail "the unsharded run stored only $n shapes"
diff single.txt merged.txt > diff.txt || { head diff.txt; fail "merged shards differ from the unsharded run"; }
[ "$(sort -u merged.txt | wc -l)" -eq "$n" ] || fail "the merged database holds shapes twice"
# each shard measured a part: disjoint and all non-empty
for i in 0 1 2 3; do
    c=$(sqlite3 "shard-$i-of-4.db" "SELECT (SELECT count(*) FROM gemm) + (SELECT count(*) FROM attention)")
    [ "$c" -gt 0 ] || fail "shard $i is empty"
    total=$(( ${total:-0} + c ))
done
[ "$total" -eq "$n" ] || fail "the shards hold $total rows for $n shapes"
# A 1-based array (--array=1-4) is shards 0..3 too, named by shard: task 4
# of 4 must not ask for shard '4/4'.
mkdir one-based && cd one-based || fail "no work directory for the 1-based array"
TILECAST="$TILECAST_BIN" TILECAST_BACKEND=cpu TILECAST_GPU='' TILECAST_SWEEP="$sweep" \
TILECAST_OUT=shard TILECAST_COLLECT_ARGS="$common" OPENBLAS_NUM_THREADS=1 \
    sbatch --array=1-4 --wait --cpus-per-task=1 --time=10 "$tmp/jobs/collect.sbatch" \
    > sbatch.out 2>&1 || { cat sbatch.out; cat tilecast-collect-*.log; fail "sbatch --array=1-4 failed"; }
for i in 0 1 2 3; do
    [ -f "shard-$i-of-4.db" ] || { cat tilecast-collect-*.log; fail "1-based array: shard $i wrote no database"; }
    shard=$(sqlite3 "shard-$i-of-4.db" "SELECT shard FROM run")
    [ "$shard" = "$i/4" ] || fail "1-based array: shard $i recorded '$shard'"
done
"$TILECAST_BIN" db merge merged.db shard-*-of-4.db > /dev/null || fail "merge of the 1-based array"
shapes merged.db > merged.txt
diff ../single.txt merged.txt > diff.txt || { head diff.txt; fail "the 1-based array's shards differ from the unsharded run"; }
cd .. || fail "cd"
echo "ok: 4 shards, $n shapes, merged set equals the unsharded run; so does --array=1-4"
