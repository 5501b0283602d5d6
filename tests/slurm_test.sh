#!/usr/bin/env bash
# scripts/slurm_sweep.sh on a real one-node Slurm: starts munged, slurmctld and slurmd
# (Debian's packages) configured for this host only, in a private directory with their own
# ports, runs a 3-shard sweep of scenarios/tiny.yaml through sbatch, and checks that the
# merged CSV equals the unsharded sweep byte for byte. Every daemon is stopped on exit and
# every wait is bounded. Needs root (the daemons switch users and own their spool); without
# root or without the packages it says why and exits 77, which ctest reports as skipped.
# Usage: slurm_test.sh TRIDENT_BINARY SOURCE_DIR
set -euo pipefail
trident=$1
source=$2
skip() { echo "slurm_test: SKIPPED: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root to run munged, slurmctld and slurmd"
for tool in munged slurmctld slurmd sbatch squeue sinfo; do
  command -v "$tool" >/dev/null ||
    skip "$tool not found (apt-get install slurmctld slurmd slurm-client munge)"
done

tmp=$(mktemp -d /tmp/trident_slurm.XXXXXX)
chmod 700 "$tmp"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "slurm_test: FAILED: $*" >&2
  for log in "$tmp"/*.log "$tmp"/out/*.log; do
    [ -f "$log" ] && { echo "--- $log" >&2; tail -20 "$log" >&2; }
  done
  exit 1
}
# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND until it succeeds.
wait_for() {
  local limit=$1 what=$2
  shift 2
  for _ in $(seq $((limit * 5))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  fail "timed out after ${limit}s waiting for $what"
}

# munge, with its own key and socket.
mkdir -p "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
munged --force --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/munge.sock" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munged.log" \
  --seed-file="$tmp/munge/munge.seed"
wait_for 10 "munged" test -s "$tmp/munge/munged.pid"
pids+=("$(cat "$tmp/munge/munged.pid")")

# Slurm: this host as the controller and the only node, on free-looking ports.
host=$(hostname -s)
port=$((20000 + RANDOM % 20000))
mkdir -p "$tmp/state" "$tmp/spool"
export SLURM_CONF=$tmp/slurm.conf
cat > "$SLURM_CONF" <<EOF
ClusterName=trident-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
pids+=($!)
wait_for 20 "slurmctld" sinfo -h
slurmd -D -f "$SLURM_CONF" -N "$host" >"$tmp/slurmd.out" 2>&1 &
pids+=($!)
node_idle() { sinfo -h -N -o %T | grep -q '^idle'; }
wait_for 30 "the node to be idle" node_idle

# The sweep, sharded over 3 array tasks and merged by a dependent job.
cd "$source"
TRIDENT=$trident SBATCH_ARGS="--cpus-per-task=1" \
  scripts/slurm_sweep.sh -n 3 -o "$tmp/out" scenarios/tiny.yaml \
  > "$tmp/submit.log" || fail "slurm_sweep.sh failed"
no_jobs() { [ -z "$(squeue -h -o %i)" ]; }
wait_for 90 "the sweep and merge jobs to finish" no_jobs
[ -s "$tmp/out/sweep.csv" ] || fail "no merged CSV"
"$trident" sweep scenarios/tiny.yaml > "$tmp/whole.csv"
cmp "$tmp/whole.csv" "$tmp/out/sweep.csv" || fail "the merged CSV differs from the unsharded sweep"
echo "slurm_test: ok: $(($(wc -l < "$tmp/whole.csv") - 1)) points over 3 Slurm array tasks," \
  "merged CSV equals the unsharded sweep byte for byte"
