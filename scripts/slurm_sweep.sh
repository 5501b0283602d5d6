#!/usr/bin/env bash
# Runs a trident sweep on a Slurm cluster as a job array of N shards, then merges the shards.
#
#   scripts/slurm_sweep.sh [-n SHARDS] [-o OUTDIR] SCENARIO [trident sweep options...]
#
# Submits, with sbatch, from the current directory:
#   1. an array job of SHARDS tasks (default 4); task i runs
#        trident sweep SCENARIO --shard i/SHARDS --out OUTDIR/shard-i.csv --resume \
#                      --jobs $SLURM_CPUS_PER_TASK [options]
#   2. a merge job that starts once every task has succeeded (afterok) and runs
#        trident merge OUTDIR/shard-*.csv > OUTDIR/sweep.csv
# and prints both job ids. OUTDIR defaults to sweep-out. The tasks run with --resume, so a
# task that is requeued, or the whole script run again after a failure, completes its shard
# instead of starting over; the merged file is byte for byte what one unsharded
# `trident sweep SCENARIO [options]` writes.
#
# Environment:
#   TRIDENT      the trident binary (default: build/trident); must be reachable from the nodes
#   SBATCH_ARGS  extra sbatch options for both jobs, e.g.
#                "--partition=cpu --time=2:00:00 --cpus-per-task=32"
#
# Example: 8 shards of the shipped micro-batch sweep, extended to more micro-batch counts:
#   SBATCH_ARGS="--cpus-per-task=16" scripts/slurm_sweep.sh -n 8 -o mb \
#       scenarios/microbatch-sweep.yaml --vary plan.num_microbatches=1,2,4,...,1024
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

shards=4
outdir=sweep-out
while getopts "n:o:h" opt; do
  case "$opt" in
    n) shards=$OPTARG ;;
    o) outdir=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
if ! [[ "$shards" =~ ^[1-9][0-9]*$ ]]; then
  echo "slurm_sweep.sh: -n must be a positive integer, not '$shards'" >&2
  exit 2
fi
command -v sbatch >/dev/null || { echo "slurm_sweep.sh: sbatch not found (is this a Slurm login node?)" >&2; exit 2; }

trident=${TRIDENT:-build/trident}
[ -x "$trident" ] || { echo "slurm_sweep.sh: $trident is not an executable (set TRIDENT)" >&2; exit 2; }
trident=$(realpath "$trident")
mkdir -p "$outdir"
outdir=$(realpath "$outdir")

# The user's sweep arguments, quoted for the job's shell.
sweep_args=$(printf ' %q' "$@")
out_q=$(printf '%q' "$outdir")
trident_q=$(printf '%q' "$trident")
read -r -a extra <<< "${SBATCH_ARGS:-}"

task="$trident_q sweep$sweep_args --shard \$SLURM_ARRAY_TASK_ID/$shards"
task+=" --out $out_q/shard-\$SLURM_ARRAY_TASK_ID.csv --resume"
task+=" \${SLURM_CPUS_PER_TASK:+--jobs \$SLURM_CPUS_PER_TASK}"
array_id=$(sbatch --parsable "${extra[@]}" --job-name=trident-sweep \
  --array="0-$((shards - 1))" --output="$outdir/shard-%a.log" --wrap "$task")
array_id=${array_id%%;*}

merge="$trident_q merge $out_q/shard-*.csv > $out_q/sweep.csv"
merge_id=$(sbatch --parsable "${extra[@]}" --job-name=trident-merge \
  --dependency="afterok:$array_id" --output="$outdir/merge.log" --wrap "$merge")
merge_id=${merge_id%%;*}

echo "submitted sweep array job $array_id ($shards tasks) and merge job $merge_id"
echo "result: $outdir/sweep.csv"
