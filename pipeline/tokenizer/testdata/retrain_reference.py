# Writes retrain.json (run from the repository root): the Python BPE of
# engines/transformers/cpu_reference.py with the retrained model's tokenizer
# (engines/transformers/retrain/tokenizer.json) over corpus/default's prompts as
# its template renders them (extraction.CHAT_TEMPLATE_COLLAPSE: collapse=True),
# for tokenizer_test.go's TestPrompt_Retrain.
import json, sys
sys.path.insert(0, "engines/transformers")
import cpu_reference, extraction as ex
bpe = cpu_reference.BPE("engines/transformers/retrain/tokenizer.json")
out = {"source": "engines/transformers/cpu_reference.py BPE of engines/transformers/retrain/tokenizer.json over extraction.prompt_text(collapse=True) of corpus/default", "counts": {}, "ids": {}}
with open("corpus/default/documents.jsonl", encoding="utf-8") as f:
    for line in f:
        if not line.strip(): continue
        d = json.loads(line)
        out["counts"][d["id"]] = len(bpe.encode(ex.prompt_text(d["text"], collapse=True)))
for s in ["Total   due:\t 1234567.89 EUR (m³)", "12 123 1234 12345 123456 ٣٤٥ 2025-03-12", "Ünïcödé café e\u0301 — 12 345,00 €", "<|eot_id|>x<|begin_of_text|>"]:
    out["ids"][s] = bpe.encode(s)
json.dump(out, open("pipeline/tokenizer/testdata/retrain.json", "w"), ensure_ascii=False, indent=0, sort_keys=True)
print(len(out["counts"]), sum(out["counts"].values()), max(out["counts"].values()))
