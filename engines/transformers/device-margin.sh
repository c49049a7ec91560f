#!/usr/bin/env bash
# device-margin.sh OUTDIR PACKDIR: issue 30's memory boundary as one detached job on the lent
# H200. For each emulated card (CARDS, datasheet GB: 24 = L4/RTX 4090, 48 = L40S, 80 = H100,
# 141 = the whole H200 as the calculator's catalog sizes it) the Llama-3.1-8B-shaped random-weight
# bf16 model is served by server.py with --memory-cap-gib (PyTorch's allocator capped to the card,
# the KV pool sized from what the card leaves after the measured memory outside PyTorch, the
# weights and a profiled activation reserve: cardcap.py), and measured by extractbench twice:
#
#   concurrency  long documents only (length class long, 5,500-7,500 tokens, from a generated
#                corpus, so that there are as many as the highest level), at levels LEVEL_FACTORS x
#                the calculator's prediction P at CONTEXT tokens: growing concurrency through the
#                boundary, where the engine stops running more (running < requested, waiting > 0,
#                KV at 100%), preempts, or fails with out-of-memory. Each level L is its own run
#                (results directory cL): a context-mode run of L long documents at L in flight,
#                one wave, because a concurrency sweep always starts with a synchronous level-1
#                pass over the whole corpus (~10 minutes of 8B long documents on its own);
#   context      at P requests in flight, short, usual and long documents in turn (P of each).
#
# One engine per card, started here and stopped after its runs (extractbench does not start it:
# a start per run would build 16 GB of weights again); engine.log and version.json beside.
#
# First the trained 15M model (engines/transformers/model/extract-llama-15m) under a cap that puts
# its boundary inside its sweep (Q_CAP_GIB, Q_UTILISATION; a 24 GB card would hold ~700 of its
# long sequences),
# over corpus/default's 50 long documents at levels Q_LEVELS: its outputs at each level against
# level 1 (outputs_changed, verdicts_changed) say whether the boundary moves its answers.
# Finally `extractbench select` over every run: the sheet with its section "Emulated cards"
# (the calculator's prediction beside the measured boundary, per card).
#
# Each step's wall time goes to PACKDIR/steps.txt; PACKDIR gets at most 8 files under 16 MiB:
# runs.tar.xz (every results directory, protocols and engine logs), select.md (the sheet and
# its section "Emulated cards"), margins.json (that section's rows), select.json, steps.txt,
# predictions.txt, gpu.txt, device.log. PACKDIR.done marks the end.
#
# Every card is labelled in its protocol (engine.gpu, so in the manifest, the report and select):
# "emulated <card> (<N> GB) on <device>: memory only; bandwidth and compute are the <device>'s".
#
# DRY=1 runs the same job on a CPU machine: server.py --dry (dryengine.py: a tiny random model in
# plain Python with the same pool arithmetic and a FIFO scheduler that preempts), cards of a few
# GB of a pretend device (DRY_CARDS), the calculator fed the tiny model's config.json.
#
# llama.cpp (not run here: engines/llamacpp/device-cards.sh): the same emulation is the total
# context it is given and its slots, `llama-server -c $((N * CTX)) --parallel N` (each slot gets
# -c / N tokens of KV) under a balloon process holding all but the card's bytes: a card's
# boundary is the largest N whose start-up allocation and first request fit
# (reference/h200/margin/llamacpp).
#
#   mkdir -p /tmp/margin && setsid nohup bash engines/transformers/device-margin.sh /tmp/margin /tmp/mpack >/tmp/margin.out 2>&1 </dev/null &
#
#   CARDS           emulated cards, datasheet GB (default "24 48 80 141")
#   CONTEXT         tokens per sequence the prediction P is asked for (default 6800: the long
#                   documents' mean prompt, ~6,550, + MAX_TOKENS)
#   LEVEL_FACTORS   concurrency levels as multiples of P (default "0.5 0.75 1 1.25 1.5")
#   MAX_TOKENS      output tokens per request (default 256: random weights never stop, so every
#                   sequence grows by this much, and long enough that all requests of a level are
#                   admitted before the first finishes)
#   CONTEXT_SWEEP   0 skips the context sweeps; QUALITY=0 skips the 15M model
#   Q_CAP_GIB, Q_UTILISATION, Q_LEVELS   the 15M model's cap (default 3), the share of it its KV
#                   pool is sized to (default 0.38: 86,272 tokens, 16 of corpus/default's long
#                   sequences; it ran 14-15 at once at 16, 32 and 48 in flight, at the boundary:
#                   reference/h200/margin/extract-llama-15m-capped; 0.6 gave ~50, and its sweep
#                   ran at most 26 with the KV cache at 51%, never at the boundary:
#                   extract-llama-15m-capped-u0.6) and levels
#                   (default 1,16,32,48)
#   CUDA_GRAPHS     on|off|auto for the 8B engines (default: server.py's, transformers' own choice)
#   PASS_TIMEOUT    seconds before one run is cut (default 900; what it measured stays)
#
# Expected on the H200 (from the 8B reference's ~15,800 tokens/s at 128 in flight, ~35 s to
# start): 24 GB ~1 min, 48 GB ~2.5, 80 GB ~4, 141 GB ~6.5, the 15M model ~1: ~15 minutes in
# all, ~13 with CONTEXT_SWEEP=0.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
out=${1:?usage: device-margin.sh OUTDIR PACKDIR}
pack=${2:?usage: device-margin.sh OUTDIR PACKDIR}
mkdir -p "$out" "$pack"
out=$(cd "$out" && pwd)
pack=$(cd "$pack" && pwd)
rm -f "$pack.done" "$pack"/*
dry=${DRY:-0}
max_tokens=${MAX_TOKENS:-256}
context=${CONTEXT:-6800}
factors=${LEVEL_FACTORS:-0.5 0.75 1 1.25 1.5}
steps=$pack/steps.txt

eb=./extractbench
if [ ! -x "$eb" ] && [ -f .devcarry/extractbench.gz ]; then
	gunzip -c .devcarry/extractbench.gz >"$out/extractbench" && chmod +x "$out/extractbench" && eb=$out/extractbench
fi
if [ "$dry" = 1 ]; then
	py=${PYTHON:-/usr/bin/python3}
	cards=${DRY_CARDS:-2 3}
	device="CPU (dry run)"
else
	py=${PYTHON:-python3}
	cards=${CARDS:-24 48 80 141}
	device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
	device=${device:-NVIDIA H200}
fi

# step NAME CMD...: runs CMD, appends "NAME rc=RC SECONDS s" to steps.txt.
step() {
	local name=$1 t0=$SECONDS rc
	shift
	echo "== $name $(date +%T)"
	"$@"
	rc=$?
	echo "$name rc=$rc $((SECONDS - t0)) s" >>"$steps"
	echo "== $name: rc $rc, $((SECONDS - t0)) s"
	return $rc
}

# measured DIR: how many requests DIR/results.db holds (0 when there is none).
measured() {
	"$py" -c 'import os, sqlite3, sys
p = os.path.join(sys.argv[1], "results.db")
print(sqlite3.connect(p).execute("select count(*) from requests").fetchone()[0] if os.path.exists(p) else 0)' "$1" 2>/dev/null || echo 0
}

# healthy: the engine on $port answers /health.
healthy() {
	"$py" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "http://127.0.0.1:$port/health" >/dev/null 2>&1
}

# card_name GB: the catalog card of that datasheet size (cardcap.CARDS), else "dryGB".
card_name() {
	case $1 in
	24) echo L4 ;; 48) echo L40S ;; 80) echo "H100 SXM" ;; 141) echo H200 ;; *) echo "dry$1" ;;
	esac
}

# predict GB: the calculator's most sequences of CONTEXT tokens on that card, without margin.
predict() {
	local gpu
	gpu=$(card_name "$1")
	[ "$dry" = 1 ] && gpu="$gpu=$1"
	"$eb" memory -model "$calc_model" -context "$context" -gpus "$gpu" -json |
		"$py" -c 'import json,sys; print(json.load(sys.stdin)["fits"][0]["max_concurrency_no_margin"])'
}

# subset SRC DEST CLASS:N...: DEST/documents.jsonl with the first N documents of each CLASS of SRC
# (no manifest: the loader computes it from the records).
subset() {
	local src=$1 dest=$2
	shift 2
	mkdir -p "$dest"
	"$py" - "$src/documents.jsonl" "$dest/documents.jsonl" "$@" <<'EOF'
import json, sys
src, dest, want = sys.argv[1], sys.argv[2], dict((c, int(n)) for c, n in (a.split(":") for a in sys.argv[3:]))
got = {c: 0 for c in want}
with open(src) as f, open(dest, "w") as w:
    for line in f:
        c = json.loads(line)["length_class"]
        if got.get(c, want.get(c, 0)) < want.get(c, 0):
            got[c] += 1
            w.write(line)
short = {c: (got[c], n) for c, n in want.items() if got[c] < n}
if short:
    sys.exit(f"subset: {src} has too few documents of {short} (got, wanted)")
EOF
}

# protocol FILE NAME CORPUS SWEEP VARIANT START GPU MODEL MAXTOK [ENGINE_LINES]: one variant's
# protocol (no start line when START is empty: the engine is already up).
protocol() {
	local start_line=""
	[ -n "$6" ] && start_line="      start: \"$6\""$'\n'
	cat >"$1" <<EOF
# Written by device-margin.sh $(date -u +%FT%TZ).
name: margin-$2
description: "$7"
corpus: $3
prompt:
  system: "You extract fields from business documents. Answer with JSON only."
  user: "Extract date (issue date, YYYY-MM-DD), amount (total due, a JSON number) and category (one of: utilities, telecom, software, office_supplies, travel, meals, rent, professional_services, taxes, healthcare). Use null for a field the document lacks. Answer with one JSON object with the keys date, amount and category.\n\n{{document}}"
output_schema: default
parse: strict
generation: {max_tokens: $9, temperature: 0, seed: 7}
acceptance: {min_accepted: 0, latency_p95_ms: 600000}
sweep: $4
request_timeout: 600s
variants:
  - name: $5
    engine:
      url: "http://127.0.0.1:$port"
      model: $8
      kind: transformers
${start_line}      ready_timeout: 600s
      context_window: 8192
      gpu: "$7"
${10:-}
EOF
}

{
	echo "== device-margin.sh $(date +%T): DRY=$dry, cards $cards, device $device, context $context, max_tokens $max_tokens"
	[ -x "$eb" ] || { echo "device-margin.sh: no ./extractbench (build it, or carry .devcarry/extractbench.gz)"; touch "$pack.done"; exit 2; }
	if [ "$dry" = 1 ]; then
		port=18790
		"$py" -c 'import json,sys; sys.path.insert(0,"engines/transformers"); import dryengine; json.dump(dryengine.SHAPE, open(sys.argv[1],"w"))' "$out/dry-config.json"
		calc_model=$out/dry-config.json
		model='dry-8b'
		qextra="      random_weights: true"
	else
		port=8000
		calc_model=Llama-3.1-8B
		model=random-llama-3.1-8b
		qextra="      weights: bf16
      params: 17517568
      tokenizer: $PWD/engines/transformers/model/extract-llama-15m/tokenizer.json"
		nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >"$pack/gpu.txt" 2>&1
		"$py" -c 'import torch, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__)' >>"$pack/gpu.txt" 2>&1
	fi
	extra="      random_weights: true
      weights: bf16
      tokenizer: extractbench-approx-v1"
	: >"$pack/predictions.txt"
	declare -A pred
	maxd=1
	for c in $cards; do
		pred[$c]=$(predict "$c") || { echo "device-margin.sh: memory failed for card $c"; pred[$c]=0; }
		echo "card $c GB ($(card_name "$c")): calculator at $context tokens: ${pred[$c]} sequences (memory -model $calc_model -context $context -gpus $(card_name "$c")); llama.cpp's equivalent: llama-server -c $((pred[$c] * context)) --parallel ${pred[$c]}" | tee -a "$pack/predictions.txt"
		top=$("$py" -c 'import sys; p=int(sys.argv[1]); print(max(max(1, round(p*float(f))) for f in sys.argv[2].split()))' "${pred[$c]}" "$factors")
		[ "$top" -gt "$maxd" ] && maxd=$top
	done
	# The 15M model first: it is short and its quality half of the issue must not wait on the
	# 8B cards (a session's limit stopped the job before it, 2026-12-02).
	if [ "${QUALITY:-1}" != 0 ]; then
		qgib=${Q_CAP_GIB:-3}
		qutil=${Q_UTILISATION:-0.38}
		[ "$dry" = 1 ] && qgib=${DRY_Q_CAP_GIB:-2.5}
		qdir=$out/extract-llama-15m-capped
		mkdir -p "$qdir"
		subset corpus/default "$qdir/corpus-long" "long:50"
		if [ "$dry" = 1 ]; then
			qstart="$py engines/transformers/server.py --dry --model engines/transformers/model/extract-llama-15m --memory-cap-gib $qgib --port $port"
			qmodel=extract-llama-15m
		else
			qstart="$py engines/transformers/server.py --model engines/transformers/model/extract-llama-15m --memory-cap-gib $qgib --utilisation $qutil --card '15m-cap-${qgib}GiB' --port $port"
			qmodel=extract-llama-15m
		fi
		qlabel="emulated card ($qgib GiB) on $device: memory only; bandwidth and compute are the $device's"
		protocol "$qdir/protocol.yaml" extract-llama-15m-capped "$qdir/corpus-long" \
			"{mode: concurrency, levels: [${Q_LEVELS:-1,16,32,48}], repetitions: 1, warmup: 2, on_memory_failure: stop}" \
			bf16-capped "$qstart" "$qlabel" "$qmodel" 48 "$qextra"
		step "15m quality" timeout "${SWEEP_TIMEOUT:-1800}" "$eb" run -quiet -protocol "$qdir/protocol.yaml" -out "$qdir/run"
		# An engine that could not start under the cap (its CUDA graphs come out of what the pool
		# leaves) is started once more without them, as the 8B cards are; the first attempt's
		# results directory stays beside (run-attempt-1) as the record of that.
		if [ "$dry" != 1 ] && [ "$(measured "$qdir/run")" = 0 ]; then
			mv "$qdir/run" "$qdir/run-attempt-1"
			protocol "$qdir/protocol.yaml" extract-llama-15m-capped "$qdir/corpus-long" \
				"{mode: concurrency, levels: [${Q_LEVELS:-1,16,32,48}], repetitions: 1, warmup: 2, on_memory_failure: stop}" \
				bf16-capped "$qstart --cuda-graphs off" "$qlabel" "$qmodel" 48 "$qextra"
			step "15m quality (no CUDA graphs)" timeout "${SWEEP_TIMEOUT:-1800}" "$eb" run -quiet -protocol "$qdir/protocol.yaml" -out "$qdir/run"
		fi
	fi

	# A generated corpus with enough long documents for the highest level (one in six is long).
	step corpus "$eb" corpus generate -seed "${CORPUS_SEED:-1}" -n $((maxd * 6 + 60)) -out "$out/corpus-gen" >/dev/null

	for c in $cards; do
		name=$(card_name "$c" | tr 'A-Z ' 'a-z-')-${c}gb
		dir=$out/$name
		mkdir -p "$dir"
		p=${pred[$c]}
		[ "$p" -ge 1 ] || p=1
		levels=$("$py" -c 'import sys; p=int(sys.argv[1]); print(" ".join(str(l) for l in sorted({max(1, round(p*float(f))) for f in sys.argv[2].split()})))' "$p" "$factors")
		gib=$("$py" -c "print(round($c * 10**9 / 2**30, 6))")
		label="emulated $(card_name "$c") ($c GB) on $device: memory only; bandwidth and compute are the $device's"
		if [ "$dry" = 1 ]; then
			server=("$py" engines/transformers/server.py --dry --shape 8b)
		else
			server=("$py" engines/transformers/server.py --shape 8b)
		fi
		server+=(--memory-cap-gib "$gib" --card "$(card_name "$c")" --port "$port")
		[ -n "${CUDA_GRAPHS:-}" ] && [ "$dry" != 1 ] && server+=(--cuda-graphs "$CUDA_GRAPHS")
		echo "== $name: $gib GiB cap, predicted $p, levels $levels; ${server[*]}"
		# One engine per card for all its passes (a start per pass would reload 16 GB each time).
		# An engine that cannot start under the cap with CUDA graphs (their pools and the batch
		# buffers come out of the 10% the KV pool leaves) is started again without them, then with
		# its pool sized to 0.8 of the card (what a vLLM user does: a lower gpu_memory_utilization);
		# steps.txt and engine-attempt-N.log say which attempt started, /version what it sized.
		up=0
		for attempt in 1 2 3; do
			t0=$SECONDS
			"${server[@]}" >"$dir/engine.log" 2>&1 &
			spid=$!
			for _ in $(seq 1 600); do
				healthy && { up=1; break; }
				kill -0 "$spid" 2>/dev/null || break
				sleep 1
			done
			echo "$name engine start (attempt $attempt) up=$up $((SECONDS - t0)) s" >>"$steps"
			[ "$up" = 1 ] && break
			echo "== $name: the engine did not start (attempt $attempt)"
			tail -20 "$dir/engine.log"
			kill "$spid" 2>/dev/null
			wait "$spid" 2>/dev/null
			cp "$dir/engine.log" "$dir/engine-attempt-$attempt.log"
			[ "$dry" = 1 ] && break
			case $attempt in
			1) [ -n "${CUDA_GRAPHS:-}" ] || server+=(--cuda-graphs off) ;;
			2) server+=(--utilisation 0.8) ;;
			esac
		done
		[ "$up" = 1 ] || continue
		"$py" -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
			"http://127.0.0.1:$port/version" >"$dir/version.json" 2>&1
		# The concurrency sweep: a context-mode run per level (L long documents at L in flight:
		# one wave, no synchronous baseline over them), so each pass is its own results directory.
		for l in $levels; do
			subset "$out/corpus-gen" "$dir/corpus-long-$l" "long:$l"
			protocol "$dir/protocol-c$l.yaml" "$name-c$l" "$dir/corpus-long-$l" \
				"{mode: context, levels: classes, concurrency: $l, repetitions: 1, warmup: 1, on_memory_failure: record}" \
				"$name" "" "$label" "$model" "$max_tokens" "$extra"
			step "$name concurrency $l" timeout "${PASS_TIMEOUT:-900}" "$eb" run -quiet -protocol "$dir/protocol-c$l.yaml" -out "$dir/c$l"
			healthy || { echo "== $name: the engine is down after level $l: higher levels not run"; break; }
		done
		if [ "${CONTEXT_SWEEP:-1}" != 0 ] && healthy; then
			subset "$out/corpus-gen" "$dir/corpus-classes" "short:$p" "usual:$p" "long:$p"
			protocol "$dir/protocol-context.yaml" "$name-context" "$dir/corpus-classes" \
				"{mode: context, levels: classes, concurrency: $p, repetitions: 1, warmup: 1, on_memory_failure: record}" \
				"$name" "" "$label" "$model" "$max_tokens" "$extra"
			step "$name context" timeout "${PASS_TIMEOUT:-900}" "$eb" run -quiet -protocol "$dir/protocol-context.yaml" -out "$dir/context"
		fi
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		rm -rf "$dir"/corpus-long-* "$dir/corpus-classes"
	done

	runs=$(find "$out" -name results.db -printf '%h\n' | sort)
	# shellcheck disable=SC2086 # one argument per results directory
	step select "$eb" select -out "$pack" $runs >/dev/null
	# shellcheck disable=SC2086
	"$eb" select -json $runs >"$pack/select.json" 2>&1
	rm -f "$pack/select.html"
	find "$out" \( -name 'results.db-wal' -o -name 'results.db-shm' \) -exec rm -f {} +
	step pack tar -C "$out" -cJf "$pack/runs.tar.xz" --exclude=extractbench --exclude=corpus-gen --exclude=corpus-long --exclude=.extractbench.lock .
	ls -la "$pack"
} >"$pack/device.log" 2>&1
touch "$pack.done"
