#!/usr/bin/env bash
# recipe-search.sh OUTDIR 'FLAGS 1' 'FLAGS 2' ...: trains one model per set of train.py flags
# (added to run-real-h200.sh's reference recipe, so they override it) and prints the held-out
# accepted share of each, per length class and per field, beside its final answer loss. As many
# trainings run at once as there are GPUs times PER_GPU (default 1: a training keeps one H200
# busy, two on one card take about twice as long each). train.py is deterministic, so the
# winner's flags reproduce its weights bit for bit: put them in run-real-h200.sh's recipe.
#
#   bash engines/transformers/recipe-search.sh /tmp/search '--steps 3000' '--seed 7' '--lr 1e-3 --warmup 300'
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: recipe-search.sh OUTDIR FLAGS...}
shift
[ $# -gt 0 ] || { echo "recipe-search.sh: no recipe given" >&2; exit 2; }
mkdir -p "$out"
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
[ "$gpus" -gt 0 ] || gpus=1
slots=$((gpus * ${PER_GPU:-1}))

k=0
for flags in "$@"; do
	k=$((k + 1))
	dir=$out/r$k
	mkdir -p "$dir"
	echo "$flags" >"$dir/flags"
	# Each training its own corpus directory: two generating the same seed at once would race.
	CUDA_VISIBLE_DEVICES=$(((k - 1) % gpus)) MODEL=$dir/extract-llama-15m RETRAIN=1 TRAIN_ONLY=1 \
		TRAIN_ARGS="$flags --workdir $dir/data" bash engines/transformers/run-real-h200.sh "$dir/log" >"$dir/run.log" 2>&1 &
	echo "r$k started $(date +%T): $flags"
	while [ "$(jobs -rp | wc -l)" -ge "$slots" ]; do sleep 2; done
done
wait

python3 - "$out" <<'EOF'
import json, os, sys
out = sys.argv[1]
print(f"{'recipe':<6} {'loss':>6} {'all':>6} {'short':>6} {'usual':>6} {'long':>6} {'date':>6} {'amount':>6} {'categ':>6}  flags")
for r in sorted((d for d in os.listdir(out) if d[:1] == "r" and d[1:].isdigit()), key=lambda d: int(d[1:])):
    path = os.path.join(out, r, "extract-llama-15m", "training-log.json")
    flags = open(os.path.join(out, r, "flags")).read().strip() if os.path.exists(os.path.join(out, r, "flags")) else ""
    if not os.path.exists(path):
        print(f"{r:<6} no training log (see {os.path.join(out, r, 'run.log')})  {flags}")
        continue
    log = json.load(open(path))
    held = log.get("heldout", {}).get("summary")
    loss = log["loss_curve"][-1]["loss"] if log.get("loss_curve") else float("nan")
    if not held:
        print(f"{r:<6} {loss:>6.3f} no held-out evaluation  {flags}")
        continue
    share = lambda c: held.get(c, {}).get("accepted_share", float("nan"))
    fa = held["all"]["field_accuracy"]
    print(f"{r:<6} {loss:>6.3f} {share('all'):>6.3f} {share('short'):>6.3f} {share('usual'):>6.3f} {share('long'):>6.3f} "
          f"{fa['date']:>6.3f} {fa['amount']:>6.3f} {fa['category']:>6.3f}  {flags}")
EOF
