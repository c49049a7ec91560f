#!/usr/bin/env python3
"""compare_tokens.py checks that a running llama-server tokenises the
protocol's chat prompts as the model's tokenizer.json does: for each document
of each corpus it renders the messages extractbench sends through the
server's own chat template (POST /apply-template), tokenises that (POST
/tokenize) and compares the ids with engines/transformers/cpu_reference.py's
BPE over the model's own template (a plain Python copy of tokenizers'
behaviour: normalizer if any, the Split pre-tokenizers, merges by rank). With
--hf it also encodes every prompt with Hugging Face's tokenizers itself (the
Rust core, through the npm package of hf-tokenizers.sh and Node), so the three
are compared: llama.cpp, tokenizers, cpu_reference. Needs the `regex` module.

    python3 engines/llamacpp/compare_tokens.py --url http://127.0.0.1:PORT \\
        --corpus corpus/default/documents.jsonl --corpus /tmp/c/seed-999/documents.jsonl \\
        [--model DIR] [--hf "$(engines/llamacpp/hf-tokenizers.sh)"] [--limit N] [--out FILE] [--table FILE]

It prints one line per corpus (documents, identical ids, identical template
text, prompt tokens) and, for the first differing documents, the position and
the pieces around it; --out writes the per-document counts as JSON, --table
the per-corpus lines as a Markdown table. Exit status 1 when any document
differs anywhere.
"""

import argparse
import json
import os
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "transformers"))
import cpu_reference  # noqa: E402  (its BPE needs only `regex`)
import extraction as ex  # noqa: E402

DEFAULT_MODEL = os.path.join(HERE, "..", "transformers", "model", "extract-llama-15m")


def post(url, body):
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)


def hf_encode(package, tokenizer_json, texts):
    """hf_encode is tokenizers' ids for each text: hf_encode.js under node, or
    with package "python" the Python tokenizers library (the H200's)."""
    if package == "python":
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(tokenizer_json)
        return [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]
    data = "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in texts)
    out = subprocess.run(["node", os.path.join(HERE, "hf_encode.js"), package, tokenizer_json],
                         input=data.encode("utf-8"), capture_output=True, check=True)
    ids = [json.loads(line) for line in out.stdout.decode().splitlines() if line.strip()]
    if len(ids) != len(texts):
        raise RuntimeError(f"hf_encode.js gave {len(ids)} results for {len(texts)} texts: {out.stderr.decode()[-500:]}")
    return ids


def first_difference(a, b):
    return next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def compare(url, model, corpus, hf=None, limit=0, show=5):
    """compare returns (summary row, per-document rows) for one corpus."""
    bpe = cpu_reference.BPE(os.path.join(model, "tokenizer.json"))
    render, _ = cpu_reference.chat_renderer(model)
    docs = ex.load_jsonl(corpus)
    if limit:
        docs = docs[:limit]
    texts = [render(ex.messages_for(d["text"])) for d in docs]
    hf_ids = hf_encode(hf, os.path.join(model, "tokenizer.json"), texts) if hf else None
    rows, shown = [], 0
    for k, (d, text) in enumerate(zip(docs, texts)):
        msgs = ex.messages_for(d["text"])
        want = bpe.encode(text)
        prompt = post(url + "/apply-template", {"messages": msgs})["prompt"]
        got = post(url + "/tokenize", {"content": prompt, "add_special": False, "parse_special": True})["tokens"]
        row = {"id": d["id"], "reference_tokens": len(want), "llama_tokens": len(got), "identical": got == want,
               "template_identical": prompt == text}
        if hf_ids is not None:
            row["hf_tokens"] = len(hf_ids[k])
            row["hf_identical"] = hf_ids[k] == want
        rows.append(row)
        if not (row["identical"] and row.get("hf_identical", True)) and shown < show:
            shown += 1
            other, name = (got, "llama") if not row["identical"] else (hf_ids[k], "tokenizers")
            i = first_difference(other, want)
            print(f"{d['id']}: first difference at token {i}: {name} {[bpe.inv.get(t) for t in other[i:i + 6]]} "
                  f"reference {[bpe.inv.get(t) for t in want[i:i + 6]]} ({len(other)} vs {len(want)} tokens)")
    n = len(rows)
    summary = {
        "corpus": corpus, "documents": n,
        "llama_identical": sum(r["identical"] for r in rows),
        "hf_identical": sum(r["hf_identical"] for r in rows) if hf_ids is not None else None,
        "template_identical": sum(r["template_identical"] for r in rows),
        "reference_tokens": sum(r["reference_tokens"] for r in rows),
        "llama_tokens": sum(r["llama_tokens"] for r in rows),
        "max_reference_tokens": max((r["reference_tokens"] for r in rows), default=0),
    }
    return summary, rows


def table(model, summaries):
    lines = [
        f"model `{os.path.basename(os.path.normpath(model))}`, tokenizer.json sha256 "
        f"`{cpu_reference.modeldir.file_sha256(os.path.join(model, 'tokenizer.json'))}`",
        "",
        "| corpus | documents | llama.cpp = cpu_reference | tokenizers = cpu_reference | template text identical | prompt tokens (reference / llama.cpp) | longest prompt |",
        "| --- | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    for s in summaries:
        hf = "not run" if s["hf_identical"] is None else f"{s['hf_identical']}/{s['documents']}"
        lines.append(f"| {s['corpus_name']} | {s['documents']} | {s['llama_identical']}/{s['documents']} | {hf} | "
                     f"{s['template_identical']}/{s['documents']} | {s['reference_tokens']:,} / {s['llama_tokens']:,} | {s['max_reference_tokens']:,} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--corpus", action="append", required=True, help="a documents.jsonl (repeat for more)")
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--hf", help="the tokenizers npm package directory (hf-tokenizers.sh), or 'python' for the Python "
                                 "tokenizers library: compare tokenizers too")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--out")
    ap.add_argument("--table", help="write the per-corpus summary here as Markdown")
    a = ap.parse_args()

    summaries, all_rows, bad = [], {}, False
    for corpus in a.corpus:
        s, rows = compare(a.url, a.model, corpus, a.hf, a.limit)
        s["corpus_name"] = os.path.relpath(corpus) if not os.path.isabs(corpus) else corpus
        summaries.append(s)
        all_rows[corpus] = rows
        ok = s["llama_identical"] == s["documents"] and s["hf_identical"] in (None, s["documents"]) and s["template_identical"] == s["documents"]
        bad |= not ok
        hf = "" if s["hf_identical"] is None else f", {s['hf_identical']} identical to tokenizers'"
        print(f"{corpus}: {s['documents']} documents, {s['llama_identical']} with identical prompt ids{hf}, "
              f"{s['template_identical']} with identical template text; {s['reference_tokens']:,} prompt tokens "
              f"(llama.cpp {s['llama_tokens']:,})")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"summaries": summaries, "documents": all_rows}, f, indent=1)
            f.write("\n")
    if a.table:
        with open(a.table, "w") as f:
            f.write(table(a.model, summaries))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
