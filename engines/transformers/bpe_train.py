#!/usr/bin/env python3
"""bpe_train.py trains the model's byte-level BPE without the tokenizers
library: the algorithm of tokenizers' BpeTrainer (specials first, the 256
byte-level characters in code point order, then the most frequent pair again
and again, ties to the smallest pair of ids, until no pair is seen
min_frequency times or the vocabulary is full) in plain Python with the
`regex` module, so the tokenizer can be trained and checked on a machine with
no GPU and no PyPI. test_bpe_train.py checks it against the committed
tokenizer, which tokenizers trained: the same merges in the same order.

Two kinds of tokenizer:

- "v1", the committed model's: NFC, runs of spaces and tabs collapsed by a
  normalizer, one Split regex. llama.cpp applies neither, so its ids differ
  (engines/llamacpp/README.md).
- "llamacpp", the retrain's: no normalizer (the chat template collapses the
  runs of spaces, see extraction.CHAT_TEMPLATE_COLLAPSE), and pre-tokenizer
  splits that, after BPE, give exactly the ids of llama.cpp's built-in
  pre-tokenizer "superbpe" (llama-vocab.cpp: `\\p{N}+`, then
  `(?=(\\d{3})+(?!\\d))`). See PRETOKENIZE_LLAMACPP.

    /usr/bin/python3 engines/transformers/bpe_train.py --corpora /tmp/corpora --seeds 1000:1012 \\
        --out /tmp/tok/tokenizer.json

--corpora holds `extractbench corpus generate -seed N -out DIR/seed-N` output
(train.py's --workdir layout).
"""

import argparse
import hashlib
import heapq
import json
import os
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import extraction as ex  # noqa: E402

VOCAB_SIZE = 7680  # train.py's: a multiple of 64, special tokens included
MIN_FREQUENCY = 2

# The committed model's (train.py's PRETOKENIZE and COLLAPSE_SPACES).
PRETOKENIZE_V1 = r" ?[\p{L}\p{M}]+|\p{Nd}{1,3}(?=(?:\p{Nd}{3})*(?!\p{Nd}))| ?[^\s\p{L}\p{M}\p{Nd}]+|\s+(?!\S)|\s+"
COLLAPSE_V1 = r"[ \t]+"

# PRETOKENIZE_LLAMACPP cuts finer than superbpe, which cuts only number runs,
# and so that no token can straddle one of its cuts: letters (and marks) with
# at most one leading space; a run of numbers (\p{N}, as llama.cpp counts
# them: `³` too); punctuation and symbols with at most one leading space;
# whitespace other than the space in runs; a space left alone (before a
# number, a newline or the end). So a space is only ever the first byte of a
# token, never after another whitespace byte, and no merge joins the pieces
# of superbpe's longer piece: BPE over that piece gives the same ids as over
# these. DIGIT_GROUPS is superbpe's second split verbatim but for `\d`, which
# llama.cpp's std::wregex takes as ASCII digits only: [0-9] says so for every
# regex engine (Python's `regex` and Oniguruma would take other scripts'
# digits too).
PRETOKENIZE_LLAMACPP = r" ?[\p{L}\p{M}]+|\p{N}+| ?[^\s\p{L}\p{M}\p{N}]+|[^\S ]+| "
DIGIT_GROUPS = r"(?=([0-9]{3})+(?![0-9]))"
LLAMACPP_PRE = "superbpe"  # the GGUF's tokenizer.ggml.pre for this kind

KINDS = ("v1", "llamacpp")


def bytes_to_unicode():
    """The byte-level alphabet (GPT-2's, tokenizers' ByteLevel)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


B2U = bytes_to_unicode()


def normalizer_json(kind):
    if kind == "v1":
        return {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Replace", "pattern": {"Regex": COLLAPSE_V1}, "content": " "}]}
    return None


def pre_tokenizer_json(kind):
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    if kind == "v1":
        splits = [PRETOKENIZE_V1]
    else:
        splits = [PRETOKENIZE_LLAMACPP, DIGIT_GROUPS]
    return {
        "type": "Sequence",
        "pretokenizers": [{"type": "Split", "pattern": {"Regex": r}, "behavior": "Isolated", "invert": False} for r in splits] + [byte_level],
    }


class PreTokenizer:
    """PreTokenizer is a tokenizer.json's normalizer and Split pre-tokenizers
    (isolated) in Python: text to pieces, as tokenizers cuts them."""

    def __init__(self, normalizer, pre_tokenizer):
        import regex

        self.nfc = False
        self.replace = None
        if normalizer is not None:
            norm = normalizer["normalizers"] if normalizer["type"] == "Sequence" else [normalizer]
            if [n["type"] for n in norm] != ["NFC", "Replace"]:
                raise ValueError(f"normalizer {normalizer} is not one this reader knows")
            self.nfc = True
            self.replace = (regex.compile(norm[1]["pattern"]["Regex"]), norm[1]["content"])
        pre = pre_tokenizer["pretokenizers"] if pre_tokenizer["type"] == "Sequence" else [pre_tokenizer]
        if not pre or pre[-1]["type"] != "ByteLevel" or pre[-1].get("use_regex"):
            raise ValueError(f"pre-tokenizer {pre_tokenizer}: the last step must be ByteLevel without its regex")
        self.splits = []
        for p in pre[:-1]:
            if p["type"] != "Split" or p["behavior"] != "Isolated" or p.get("invert"):
                raise ValueError(f"pre-tokenizer step {p} is not an isolated Split")
            self.splits.append(regex.compile(p["pattern"]["Regex"]))

    def normalize(self, text):
        if self.nfc:
            text = unicodedata.normalize("NFC", text)
        if self.replace:
            text = self.replace[0].sub(self.replace[1], text)
        return text

    def pieces(self, text):
        """pieces returns the normalised text's pieces (non-empty strings)."""
        out = [self.normalize(text)]
        for rx in self.splits:
            nxt = []
            for piece in out:
                at = 0
                for m in rx.finditer(piece):
                    if m.start() > at:
                        nxt.append(piece[at : m.start()])
                    if m.end() > m.start():
                        nxt.append(m.group())
                    at = m.end()
                if at < len(piece):
                    nxt.append(piece[at:])
            out = nxt
        return [p for p in out if p]


def word_counts(texts, pre):
    counts = {}
    for t in texts:
        for p in pre.pieces(t):
            w = "".join(B2U[b] for b in p.encode("utf-8"))
            counts[w] = counts.get(w, 0) + 1
    return counts


def train(counts, specials, vocab_size=VOCAB_SIZE, min_frequency=MIN_FREQUENCY):
    """train is tokenizers' BpeTrainer.do_train over word counts: returns
    (vocab {token: id}, merges [(a, b)])."""
    id_to_word = list(specials)
    alphabet = set(B2U.values())
    for w in counts:
        alphabet.update(w)
    id_to_word += sorted(c for c in alphabet if c not in specials)
    word_to_id = {w: i for i, w in enumerate(id_to_word)}
    # Words in a fixed order (tokenizers' order is a hash map's; only the
    # pair counts matter, and those do not depend on it).
    words = [[word_to_id[c] for c in w] for w in sorted(counts)]
    wcount = [counts[w] for w in sorted(counts)]
    pair_counts = {}
    where = {}
    for i, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pair_counts[(a, b)] = pair_counts.get((a, b), 0) + wcount[i]
            where.setdefault((a, b), set()).add(i)
    heap = [(-c, p) for p, c in pair_counts.items() if c > 0]
    heapq.heapify(heap)
    merges = []
    while len(word_to_id) < vocab_size and heap:
        neg, pair = heapq.heappop(heap)
        count = pair_counts.get(pair, 0)
        if -neg != count:
            if count > 0:
                heapq.heappush(heap, (-count, pair))
            continue
        if count < 1 or count < min_frequency:
            break
        a, b = pair
        new = id_to_word[a] + id_to_word[b]
        nid = word_to_id.get(new)
        if nid is None:
            nid = len(id_to_word)
            id_to_word.append(new)
            word_to_id[new] = nid
        merges.append((id_to_word[a], id_to_word[b]))
        del pair_counts[pair]
        touched = set()
        for wi in sorted(where.pop(pair, ())):
            w = words[wi]
            c = wcount[wi]
            i = 0
            while i < len(w) - 1:
                if w[i] == a and w[i + 1] == b:
                    if i > 0:
                        left = (w[i - 1], a)
                        pair_counts[left] = pair_counts.get(left, 0) - c
                        np_ = (w[i - 1], nid)
                        pair_counts[np_] = pair_counts.get(np_, 0) + c
                        where.setdefault(np_, set()).add(wi)
                        touched.add(np_)
                    w[i : i + 2] = [nid]
                    if i < len(w) - 1:
                        right = (b, w[i + 1])
                        pair_counts[right] = pair_counts.get(right, 0) - c
                        np_ = (nid, w[i + 1])
                        pair_counts[np_] = pair_counts.get(np_, 0) + c
                        where.setdefault(np_, set()).add(wi)
                        touched.add(np_)
                i += 1
        for p in touched:
            if pair_counts.get(p, 0) > 0:
                heapq.heappush(heap, (-pair_counts[p], p))
    return word_to_id, merges


def tokenizer_json(kind, vocab, merges, specials):
    """tokenizer_json is the file as tokenizers 0.23 saves it (key order included)."""
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": vocab[s], "content": s, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
            for s in specials
        ],
        "normalizer": normalizer_json(kind),
        "pre_tokenizer": pre_tokenizer_json(kind),
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {},
        },
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": [list(m) for m in merges],
        },
    }


def training_texts(paths, kind, banned=()):
    """training_texts is what train.py trains the tokenizer on: each document's
    prompt (as the template renders it) and answer, of the first seeds."""
    collapse = kind == "llamacpp"
    texts = []
    for path in paths:
        for d in ex.load_jsonl(path):
            if hashlib.sha256(d["text"].encode("utf-8")).hexdigest() in banned:
                continue
            texts.append(ex.prompt_text(d["text"], collapse=collapse) + ex.render_answer(d["expected"]))
    return texts


def build(texts, kind):
    pre = PreTokenizer(normalizer_json(kind), pre_tokenizer_json(kind))
    vocab, merges = train(word_counts(texts, pre), ex.SPECIAL_TOKENS)
    return tokenizer_json(kind, vocab, merges, ex.SPECIAL_TOKENS)


def dump(tok, path):
    """dump writes tokenizer.json as tokenizers' save(pretty=True) does."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(tok, f, indent=2, ensure_ascii=False)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpora", required=True, help="directory of seed-N/documents.jsonl")
    p.add_argument("--seeds", default="1000:1012", help="the seeds whose documents train it (train.py: the first 12 training seeds)")
    p.add_argument("--kind", choices=KINDS, default="llamacpp")
    p.add_argument("--default-corpus", default=os.path.join(HERE, "..", "..", "corpus", "default", "documents.jsonl"),
                   help="its documents are left out, as train.py does")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    lo, hi = (int(x) for x in a.seeds.split(":"))
    paths = [os.path.join(a.corpora, f"seed-{s}", "documents.jsonl") for s in range(lo, hi)]
    banned = set()
    if os.path.exists(a.default_corpus):
        banned = {hashlib.sha256(d["text"].encode("utf-8")).hexdigest() for d in ex.load_jsonl(a.default_corpus)}
    texts = training_texts(paths, a.kind, banned)
    tok = build(texts, a.kind)
    dump(tok, a.out)
    print(f"{a.out}: {a.kind}, {len(tok['model']['vocab'])} tokens, {len(tok['model']['merges'])} merges, from {len(texts)} documents", file=sys.stderr)


if __name__ == "__main__":
    main()
