#!/usr/bin/env python3
"""ceiling.py measures the engine's own ceiling: the corpus's prompts pushed
through the continuous batching manager in process (no HTTP, no streaming),
keeping N requests in flight, with the same model, sizing and chat layout as
server.py. It prints output tokens/s per level and repetition, then the median
and range per level, and writes a JSON result with every repetition kept.

The prompt text comes from the protocol file, so it is what the runner sends.

    python3 engines/transformers/ceiling.py --shape 8b --protocol engines/transformers/protocol-8b.yaml \\
        --concurrency 1,2,4,8,16,32,64,128 --out results/8b/ceiling-sweep.json
    python3 engines/transformers/ceiling.py --model engines/transformers/model/extract-llama-15m --quant fp8 \\
        --protocol engines/transformers/protocol-real.yaml --concurrency 1,2,4,8,16,32,64,128 --repetitions 3 --out fp8.json

With --model the prompts go through the trained tokenizer's chat template and
the engine is sized as server.py sizes it for a trained model.
"""

import argparse
import json
import logging
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

DEFAULT_SYSTEM = "You extract fields from business documents. Answer with JSON only."
DEFAULT_USER = (
    "Extract date (issue date, YYYY-MM-DD), amount (total due, a JSON number) and category (one of: utilities, telecom, software, office_supplies, travel, meals, rent, professional_services, taxes, healthcare). "
    "Use null for a field the document lacks. Answer with one JSON object with the keys date, amount and category.\n\n{{document}}"
)  # the protocols' prompt


def load_prompt(path):
    """load_prompt returns (system, user template, max_tokens) from a protocol file."""
    if not path:
        return DEFAULT_SYSTEM, DEFAULT_USER, 128
    import yaml

    with open(path, encoding="utf-8") as f:
        p = yaml.safe_load(f)
    return p["prompt"]["system"], p["prompt"]["user"], int(p.get("generation", {}).get("max_tokens", 128))


def load_docs(path, limit):
    """load_docs reads the corpus; with a limit, that many documents in the
    corpus's length-class proportions, the first of each class, in corpus order."""
    with open(path, encoding="utf-8") as f:
        docs = [json.loads(line) for line in f if line.strip()]
    if not limit or limit >= len(docs):
        return docs
    by = {}
    for d in docs:
        by.setdefault(d.get("length_class"), []).append(d)
    keep = set()
    for items in by.values():
        keep.update(id(d) for d in items[: max(1, round(limit * len(items) / len(docs)))])
    return [d for d in docs if id(d) in keep][:limit]


class HookedCaptures:
    """HookedCaptures reads the engine's own capture counter (CUDA graph
    captures + compilations, engine.capture_counter) with GraphCaptures'
    interface."""

    def __init__(self, engine):
        self.engine = engine

    @property
    def count(self):
        return self.engine.graph_captures()


class GraphCaptures(logging.Handler):
    """GraphCaptures counts the CUDA graphs the batching manager captures
    while it runs: it captures one lazily for each new batch shape (and logs
    "Creating graph for key ..."), which makes the first pass over new shapes
    slower than the next. Each level reports how many it met."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.count = 0

    def emit(self, record):
        if "Creating graph" in record.getMessage():
            self.count += 1

    @classmethod
    def install(cls):
        """install attaches a counter to transformers' batching logger,
        keeping that logger's own console output to warnings."""
        lg = logging.getLogger("ContinuousBatchingLogger")
        for h in lg.handlers:
            h.setLevel(max(h.level, logging.WARNING))
        lg.setLevel(logging.INFO)
        c = cls()
        lg.addHandler(c)
        return c


def run_level(engine, prompts, level, max_tokens, repetition=1, captures=None):
    """run_level keeps level requests in flight until every prompt is answered."""
    manager = engine.manager
    graphs0 = captures.count if captures else 0
    engine.reset_peaks()
    pending = list(enumerate(prompts))
    in_flight, out_tokens, failed = 0, 0, 0
    t0 = time.perf_counter()

    def submit():
        nonlocal in_flight
        i, ids = pending.pop(0)
        manager.add_request(input_ids=ids, request_id=f"ceil-{level}-{repetition}-{i}", max_new_tokens=max_tokens, streaming=False)
        in_flight += 1

    while pending and in_flight < level:
        submit()
    while in_flight:
        out = manager.get_result(timeout=1.0)
        if out is None:
            if not engine.alive():
                raise RuntimeError("generation loop stopped")
            continue
        if not engine._finished(out):
            continue
        in_flight -= 1
        if getattr(out, "error", None):
            failed += 1
        out_tokens += len(out.generated_tokens or [])
        if pending:
            submit()
    wall = time.perf_counter() - t0
    mem = engine.memory()
    return {
        "level": level,
        "repetition": repetition,
        "requests": len(prompts),
        "failed": failed,
        "prompt_tokens": sum(len(p) for p in prompts),
        "output_tokens": out_tokens,
        "seconds": round(wall, 3),
        "output_tokens_per_s": round(out_tokens / wall, 1),
        "total_tokens_per_s": round((out_tokens + sum(len(p) for p in prompts)) / wall, 1),
        "docs_per_s": round(len(prompts) / wall, 3),
        "torch_max_allocated_bytes": mem["max_allocated"],
        "torch_max_reserved_bytes": mem["max_reserved"],
        "graph_captures": (captures.count - graphs0) if captures else None,
    }


def summarize(rows):
    """summarize gives, per level, the median and range of output tokens/s
    over its repetitions (the median of an even count is the mean of the
    middle two)."""
    out = []
    for level in dict.fromkeys(r["level"] for r in rows):
        v = sorted(r["output_tokens_per_s"] for r in rows if r["level"] == level)
        mid = len(v) // 2
        median = v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2
        out.append({
            "level": level,
            "repetitions": len(v),
            "output_tokens_per_s_median": round(median, 1),
            "output_tokens_per_s_min": v[0],
            "output_tokens_per_s_max": v[-1],
        })
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shape", choices=["8b", "1b"], help="random-weight shape (default 8b when no --model)")
    p.add_argument("--model", help="a train.py model directory")
    p.add_argument("--quant", choices=["bf16", "fp8", "int8"], default="bf16")
    p.add_argument("--protocol", help="protocol YAML whose prompt and max_tokens to use")
    p.add_argument("--corpus", default="corpus/default/documents.jsonl")
    p.add_argument("--concurrency", default="128", help="comma-separated levels")
    p.add_argument("--repetitions", type=int, default=1, help="passes per level (each over every prompt)")
    p.add_argument("--max-tokens", type=int, help="override the protocol's max_tokens")
    p.add_argument("--limit", type=int, default=0, help="use only N documents, in the corpus's class proportions")
    p.add_argument("--attn", default="torch_flash_varlen")
    p.add_argument("--max-batch-tokens", type=int, default=8192)
    p.add_argument("--max-memory", type=float, default=0.9)
    p.add_argument("--out", help="write the JSON result here")
    args = p.parse_args()

    system, user, max_tokens = load_prompt(args.protocol)
    max_tokens = args.max_tokens or max_tokens
    docs = load_docs(args.corpus, args.limit)

    import engine as eng

    t0 = time.perf_counter()
    if args.model:
        sizing = eng.Sizing(num_blocks=eng.TRAINED_NUM_BLOCKS, max_batch_tokens=args.max_batch_tokens,
                            max_memory_percent=args.max_memory, cuda_graphs=eng.TRAINED_CUDA_GRAPHS)
        engine = eng.CBEngine(model_dir=args.model, quant=args.quant, attn=args.attn, sizing=sizing)
    else:
        engine = eng.CBEngine(args.shape or "8b", attn=args.attn, sizing=eng.Sizing(max_batch_tokens=args.max_batch_tokens, max_memory_percent=args.max_memory))
    load_s = time.perf_counter() - t0
    prompts = [
        engine.encode_chat([{"role": "system", "content": system}, {"role": "user", "content": user.replace("{{document}}", d["text"])}])
        for d in docs
    ]
    too_long = [i for i, ids in enumerate(prompts) if len(ids) + max_tokens > engine.max_context]
    if too_long:  # the server refuses these (400): the ceiling leaves them out too
        print(f"{len(too_long)} prompts over the context left out", flush=True)
        prompts = [ids for i, ids in enumerate(prompts) if i not in set(too_long)]
    GraphCaptures.install()
    captures = HookedCaptures(engine)
    rows = []
    try:
        for level in (int(x) for x in args.concurrency.split(",")):
            for rep in range(1, args.repetitions + 1):
                row = run_level(engine, prompts, level, max_tokens, rep, captures)
                print(json.dumps(row), flush=True)
                rows.append(row)
    finally:
        info = engine.info()
        engine.close()
    print(f"{'level':>5} {'rep':>3} {'reqs':>5} {'seconds':>8} {'out tok/s':>10} {'docs/s':>7} {'graphs':>6} {'max alloc GiB':>13} {'max resv GiB':>12}")
    for r in rows:
        print(
            f"{r['level']:>5} {r['repetition']:>3} {r['requests']:>5} {r['seconds']:>8} {r['output_tokens_per_s']:>10} {r['docs_per_s']:>7} {r['graph_captures']!s:>6} "
            f"{r['torch_max_allocated_bytes'] / 2**30:>13.2f} {r['torch_max_reserved_bytes'] / 2**30:>12.2f}"
        )
    summary = summarize(rows)
    for s in summary:
        print(f"level {s['level']}: median {s['output_tokens_per_s_median']} output tok/s over {s['repetitions']} (range {s['output_tokens_per_s_min']}-{s['output_tokens_per_s_max']})")
    result = {
        "engine": {k: v for k, v in info.items() if k != "chat_template"},
        "load_seconds": round(load_s, 2),
        "corpus": args.corpus,
        "max_tokens": max_tokens,
        "levels": rows,
        "summary": summary,
    }
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
    sys.stdout.flush()
    os._exit(0)  # the manager's generation thread is not a daemon


if __name__ == "__main__":
    main()
