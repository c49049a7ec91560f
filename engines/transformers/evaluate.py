#!/usr/bin/env python3
"""evaluate.py scores the trained model on a corpus, in process, through the
engine server.py serves with (engine.CBEngine: same weights, quantisation,
tokenizer and chat template, transformers' continuous batching), greedy, and
judges every answer as extractbench does under the strict rule
(extraction.score: date same day, amount within 0.005 as a decimal, category
exact, null only where expected). A prompt that, with max_tokens, would not
fit the 8,192-token context is counted as a truncation failure, as the server
would refuse it.

    python3 engines/transformers/evaluate.py --model engines/transformers/model/extract-llama-15m \\
        --quant bf16,fp8,int8 --corpus corpus/default/documents.jsonl --out eval.json

Prints accepted share and per-field accuracy per length class and variant.
The documents are sent --level at a time (default 64), with CUDA graphs off
(the server captures graphs of padded batch shapes; the kernels are the same
but padded matrix products may round differently); at temperature 0 an answer
can still differ from a level-1 answer served over HTTP by such rounding.
"""

import argparse
import gc
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import extraction as ex  # noqa: E402


def stratified(docs, n):
    """stratified picks n documents in the corpus's class proportions (the
    first of each class)."""
    by = {}
    for d in docs:
        by.setdefault(d.get("length_class"), []).append(d)
    out = []
    for c, items in by.items():
        out += items[: max(1, round(n * len(items) / len(docs)))]
    return out[:n]


def generate(engine, prompts, max_tokens, level):
    """generate runs prompts (lists of ids) through the engine's batching
    manager, level at a time, greedily; returns the generated ids of each."""
    manager = engine.manager
    results = [None] * len(prompts)
    pending = list(range(len(prompts)))
    in_flight = 0

    def submit():
        nonlocal in_flight
        i = pending.pop(0)
        manager.add_request(input_ids=prompts[i], request_id=f"eval-{i}", max_new_tokens=max_tokens, streaming=False)
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
        i = int(str(out.request_id).rsplit("-", 1)[1])
        if getattr(out, "error", None):
            results[i] = {"error": str(out.error), "ids": list(out.generated_tokens or [])}
        else:
            results[i] = {"error": None, "ids": list(out.generated_tokens or [])}
        if pending:
            submit()
    return results


def evaluate(model_dir, quant, docs, max_tokens=48, level=64, engine=None):
    """evaluate scores docs with the model in quant; returns records and a
    summary per length class."""
    import engine as eng
    import torch

    own = engine is None
    t0 = time.perf_counter()
    if own:
        sizing = eng.Sizing(num_blocks=eng.TRAINED_NUM_BLOCKS, cuda_graphs=False)
        engine = eng.CBEngine(model_dir=model_dir, quant=quant, sizing=sizing)
    load_s = time.perf_counter() - t0
    try:
        prompts, records, runnable = [], [], []
        for d in docs:
            ids = engine.encode_chat(ex.messages_for(d["text"]))
            rec = {"id": d.get("id"), "class": d.get("length_class"), "prompt_tokens": len(ids), "expected": d["expected"]}
            records.append(rec)
            if len(ids) + max_tokens > engine.max_context:
                rec.update(output=None, finish="context", score=ex.unscored("truncation", "prompt + max_tokens over the context"))
                continue
            runnable.append(len(records) - 1)
            prompts.append(ids)
        t1 = time.perf_counter()
        outs = generate(engine, prompts, max_tokens, level)
        gen_s = time.perf_counter() - t1
        out_tokens = 0
        for k, out in zip(runnable, outs):
            rec = records[k]
            gen = out["ids"]
            out_tokens += len(gen)
            text = engine.tokenizer.decode(gen)
            stopped = bool(gen) and gen[-1] in engine.eos_ids
            rec["output"], rec["completion_tokens"] = text, len(gen)
            rec["finish"] = "error" if out["error"] else "stop" if stopped else "length"
            if out["error"]:
                rec["score"] = ex.unscored("error", out["error"][:200])
            else:
                rec["score"] = ex.score_generation(text, rec["expected"], stopped)
        info = engine.info()
        mem = engine.memory()
    finally:
        if own:
            engine.close()
            del engine
            gc.collect()
            torch.cuda.empty_cache()
    summary = ex.count_failures(ex.summarize(records), records, ("truncation", "error"))
    return {
        "model": os.path.basename(os.path.normpath(model_dir)),
        "quantization": quant,
        "quantization_scheme": info.get("quantization_scheme"),
        "weights_bytes": info.get("weights_bytes"),
        "weight_bytes_by_dtype": info.get("weight_bytes_by_dtype"),
        "torch_max_allocated_bytes": mem["max_allocated"],
        "max_tokens": max_tokens,
        "level": level,
        "load_seconds": round(load_s, 2),
        "generate_seconds": round(gen_s, 2),
        "output_tokens": out_tokens,
        "prompt_tokens_max": max(r["prompt_tokens"] for r in records) if records else 0,
        "summary": summary,
        "error_kinds": ex.error_kinds(records),
        "records": records,
    }


def print_summary(res):
    """print_summary prints one variant's table."""
    print(f"== {res['model']} {res['quantization']}: load {res['load_seconds']}s, generate {res['generate_seconds']}s, "
          f"weights {res['weights_bytes'] / 2**20:.1f} MiB {res.get('weight_bytes_by_dtype')}, longest prompt {res['prompt_tokens_max']} tokens")
    ex.print_table(res["summary"], res.get("error_kinds"))
    sys.stdout.flush()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="train.py model directory")
    p.add_argument("--quant", default="bf16,fp8,int8", help="comma-separated variants")
    p.add_argument("--corpus", default=os.path.join(HERE, "..", "..", "corpus", "default", "documents.jsonl"))
    p.add_argument("--limit", type=int, default=0, help="only N documents, in the corpus's class proportions")
    p.add_argument("--max-tokens", type=int, default=48)
    p.add_argument("--level", type=int, default=64, help="requests in flight")
    p.add_argument("--out", help="write every record and the summaries as JSON here")
    p.add_argument("--failures", type=int, default=8, help="print this many failed answers per variant")
    args = p.parse_args()

    docs = ex.load_jsonl(args.corpus)
    if args.limit:
        docs = stratified(docs, args.limit)
    results = []
    for quant in args.quant.split(","):
        res = evaluate(args.model, quant, docs, args.max_tokens, args.level)
        print_summary(res)
        bad = [r for r in res["records"] if not r["score"]["accepted"]]
        for r in bad[: args.failures]:
            print(f"   {r['id']} {r['class']} {r['score']['failure']}: {r['score']['detail'][:80]} | got {r.get('output')!r} want {ex.render_answer(r['expected'])}")
        results.append(res)
    if len(results) > 1:  # paired: documents whose verdict differs from the first variant's
        base = {r["id"]: r["score"]["accepted"] for r in results[0]["records"]}
        for res in results[1:]:
            flips = [r["id"] for r in res["records"] if r["score"]["accepted"] != base.get(r["id"])]
            res["flipped_vs_" + results[0]["quantization"]] = flips
            print(f"{res['quantization']} vs {results[0]['quantization']}: {len(flips)} documents change verdict {flips[:12]}")
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump({"corpus": args.corpus, "variants": results}, f, indent=1)
            f.write("\n")
    sys.stdout.flush()
    os._exit(0)  # the batching manager's thread is not a daemon


if __name__ == "__main__":
    main()
