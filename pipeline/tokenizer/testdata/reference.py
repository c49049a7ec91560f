# Writes extract-llama-15m.json (run from the repository root): the Python BPE of
# engines/transformers/cpu_reference.py over corpus/default's prompts, for tokenizer_test.go.
import json, sys, os
sys.path.insert(0, "engines/transformers")
import cpu_reference, extraction as ex
bpe = cpu_reference.BPE("engines/transformers/model/extract-llama-15m/tokenizer.json")
out = {"source": "engines/transformers/cpu_reference.py BPE over extraction.prompt_text (SYSTEM, USER) of corpus/default", "counts": {}, "ids": {}}
with open("corpus/default/documents.jsonl", encoding="utf-8") as f:
    for line in f:
        if not line.strip(): continue
        d = json.loads(line)
        out["counts"][d["id"]] = len(bpe.encode(ex.prompt_text(d["text"])))
for s in ["Total   due:\t 1234567.89 EUR (m³)", "  leading\n\n  spaces  \n", "Ünïcödé café e\u0301 — 12 345,00 €", "a\u00a0b\u2003c  \n\t\nx", "<|eot_id|>x<|begin_of_text|>"]:
    out["ids"][s] = bpe.encode(s)
json.dump(out, open("pipeline/tokenizer/testdata/extract-llama-15m.json", "w"), ensure_ascii=False, indent=0, sort_keys=True)
print(len(out["counts"]), max(out["counts"].values()), out["counts"].get("doc-0249"))
print(ex.SYSTEM); print(repr(ex.USER))
