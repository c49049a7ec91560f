#!/usr/bin/env python3
"""cpu_reference.py runs a train.py model with none of the serving stack: its
byte-level BPE read from tokenizer.json and its Llama forward written out in
plain PyTorch, float32, on the CPU, greedy decoding with a KV cache. It needs
only torch (any version from 1.13) and the `regex` module, no transformers,
tokenizers, safetensors or GPU, so it runs on the development machine.

Two uses:
- a second opinion on the engine: the same weights and prompts, another
  implementation and other numerics (float32 instead of bf16 kernels); the
  answers should agree but for the rare near-tie, and accuracy within a point
  or two;
- a figure for corpus/default or the held-out corpus where no GPU is lent.

    /usr/bin/python3 engines/transformers/cpu_reference.py --model engines/transformers/model/extract-llama-15m \\
        --corpus corpus/default/documents.jsonl --out /tmp/cpu-default.json

--check-tokens FILE compares each document's prompt length with the
prompt_tokens evaluate.py recorded for it (evaluate.py --out), which tests
this tokenizer against the tokenizers library's.
"""

import argparse
import json
import os
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import extraction as ex  # noqa: E402
import modeldir  # noqa: E402


# ---------------------------------------------------------------- tokenizer


def bytes_to_unicode():
    """The byte-level alphabet (GPT-2's): printable bytes stand for themselves,
    the others are shifted past 255."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


class BPE:
    """BPE encodes and decodes as tokenizers does for train.py's tokenizer.json:
    special tokens matched first, the normalizer (NFC and runs of spaces/tabs
    to one space; none for bpe_train.py's "llamacpp" kind), the Split
    pre-tokenizers (isolated, in turn), byte-level, merges by rank."""

    def __init__(self, path):
        import regex

        import bpe_train

        with open(path, encoding="utf-8") as f:
            t = json.load(f)
        try:
            self.pre = bpe_train.PreTokenizer(t["normalizer"], t["pre_tokenizer"])
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
        self.vocab = t["model"]["vocab"]
        self.inv = {i: s for s, i in self.vocab.items()}
        merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in t["model"]["merges"]]
        self.ranks = {m: r for r, m in enumerate(merges)}
        self.specials = {a["content"]: a["id"] for a in t["added_tokens"]}
        self.special_re = regex.compile("|".join(regex.escape(s) for s in sorted(self.specials, key=len, reverse=True)))
        self.b2u = bytes_to_unicode()
        self.u2b = {c: b for b, c in self.b2u.items()}
        self.cache = {}

    def _word(self, piece):
        if piece in self.cache:
            return self.cache[piece]
        parts = [self.b2u[b] for b in piece.encode("utf-8")]
        while len(parts) > 1:
            best = min(range(len(parts) - 1), key=lambda i: self.ranks.get((parts[i], parts[i + 1]), 1 << 30))
            if (parts[best], parts[best + 1]) not in self.ranks:
                break
            parts[best : best + 2] = [parts[best] + parts[best + 1]]
        ids = [self.vocab[p] for p in parts]
        self.cache[piece] = ids
        return ids

    def _pieces(self, text):
        return self.pre.pieces(text)

    def encode(self, text):
        ids, at = [], 0
        for m in self.special_re.finditer(text):
            for p in self._pieces(text[at : m.start()]):
                ids.extend(self._word(p))
            ids.append(self.specials[m.group()])
            at = m.end()
        for p in self._pieces(text[at:]):
            ids.extend(self._word(p))
        return ids

    def decode(self, ids):
        specials = set(self.specials.values())
        raw = bytes(self.u2b[c] for i in ids if i not in specials for c in self.inv[i])
        return raw.decode("utf-8", errors="replace")


def chat_renderer(model_dir):
    """chat_renderer returns (render(messages) -> prompt text, template): the
    model directory's chat template (tokenizer_config.json), as
    extraction.render_chat renders it."""
    with open(os.path.join(model_dir, "tokenizer_config.json"), encoding="utf-8") as f:
        template = json.load(f).get("chat_template") or ex.CHAT_TEMPLATE
    collapse = ex.template_collapses(template)
    return (lambda messages: ex.render_chat(messages, collapse=collapse)), template


# ---------------------------------------------------------------- weights


DTYPES = {"BF16": 2, "F16": 2, "F32": 4}


def load_safetensors(model_dir):
    """load_safetensors reads every shard of model_dir into float32 tensors."""
    import torch

    names = sorted(f for f in os.listdir(model_dir) if f.endswith(".safetensors"))
    out = {}
    for name in names:
        with open(os.path.join(model_dir, name), "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            header = json.loads(f.read(n))
            data = f.read()
        for key, meta in header.items():
            if key == "__metadata__":
                continue
            a, b = meta["data_offsets"]
            buf = bytearray(data[a:b])
            if meta["dtype"] == "BF16":
                # bf16 is the top half of a float32: widen through int32.
                t = torch.frombuffer(buf, dtype=torch.int16).to(torch.int32).bitwise_left_shift(16).view(torch.float32)
            elif meta["dtype"] == "F32":
                t = torch.frombuffer(buf, dtype=torch.float32)
            elif meta["dtype"] == "F16":
                t = torch.frombuffer(buf, dtype=torch.float16).float()
            else:
                raise ValueError(f"{name}: {key} has dtype {meta['dtype']}")
            out[key] = t.reshape(meta["shape"]).clone()
    return out


# ---------------------------------------------------------------- model


class Llama:
    """Llama is LlamaForCausalLM's forward for one sequence, float32, with a KV
    cache; prompts are prefilled in chunks so attention never holds an L x L
    matrix."""

    def __init__(self, model_dir):
        import torch

        with open(os.path.join(model_dir, "config.json")) as f:
            c = json.load(f)
        if c.get("model_type") != "llama" or c.get("hidden_act") != "silu":
            raise ValueError(f"{model_dir}: not a SiLU Llama")
        rope = c.get("rope_parameters") or {"rope_type": "default", "rope_theta": c.get("rope_theta", 10000.0)}
        if rope.get("rope_type", "default") != "default":
            raise ValueError(f"{model_dir}: rope {rope} (only the default RoPE is written here)")
        self.c = c
        w = load_safetensors(model_dir)
        self.embed = w["model.embed_tokens.weight"]
        self.head = w.get("lm_head.weight", self.embed) if not c.get("tie_word_embeddings") else self.embed
        self.norm = w["model.norm.weight"]
        self.layers = []
        for i in range(c["num_hidden_layers"]):
            p = f"model.layers.{i}."
            self.layers.append({k: w[p + v] for k, v in {
                "in_norm": "input_layernorm.weight", "post_norm": "post_attention_layernorm.weight",
                "q": "self_attn.q_proj.weight", "k": "self_attn.k_proj.weight", "v": "self_attn.v_proj.weight",
                "o": "self_attn.o_proj.weight", "gate": "mlp.gate_proj.weight", "up": "mlp.up_proj.weight",
                "down": "mlp.down_proj.weight"}.items()})
        self.nh, self.nkv, self.hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        self.eps = c["rms_norm_eps"]
        inv = 1.0 / (rope["rope_theta"] ** (torch.arange(0, self.hd, 2, dtype=torch.float64) / self.hd))
        pos = torch.arange(c["max_position_embeddings"], dtype=torch.float64)
        freqs = torch.outer(pos, inv)
        emb = torch.cat([freqs, freqs], dim=-1)
        self.cos, self.sin = emb.cos().float(), emb.sin().float()
        self.eos = set(c["eos_token_id"] if isinstance(c["eos_token_id"], list) else [c["eos_token_id"]])

    def _rms(self, x, w):
        import torch

        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * w

    @staticmethod
    def _rot(x):
        import torch

        h = x.shape[-1] // 2
        return torch.cat([-x[..., h:], x[..., :h]], dim=-1)

    def forward(self, ids, start, cache):
        """forward runs ids at positions start.. and returns the last
        position's logits; cache holds each layer's (K, V) so far."""
        import torch

        n = len(ids)
        x = self.embed[torch.tensor(ids)]
        cos, sin = self.cos[start : start + n][:, None, :], self.sin[start : start + n][:, None, :]
        rep = self.nh // self.nkv
        for li, L in enumerate(self.layers):
            h = self._rms(x, L["in_norm"])
            q = (h @ L["q"].T).view(n, self.nh, self.hd)
            k = (h @ L["k"].T).view(n, self.nkv, self.hd)
            v = (h @ L["v"].T).view(n, self.nkv, self.hd)
            q = q * cos + self._rot(q) * sin
            k = k * cos + self._rot(k) * sin
            if li < len(cache):
                K, V = cache[li]
                K, V = torch.cat([K, k]), torch.cat([V, v])
                cache[li] = (K, V)
            else:
                K, V = k, v
                cache.append((K, V))
            Kr = K.repeat_interleave(rep, dim=1).transpose(0, 1)  # [nh, T, hd]
            Vr = V.repeat_interleave(rep, dim=1).transpose(0, 1)
            s = (q.transpose(0, 1) @ Kr.transpose(1, 2)) / (self.hd ** 0.5)  # [nh, n, T]
            T = K.shape[0]
            causal = torch.arange(T)[None, :] > (torch.arange(n)[:, None] + start)
            s = s.masked_fill(causal[None], float("-inf"))
            a = torch.softmax(s, dim=-1) @ Vr  # [nh, n, hd]
            x = x + a.transpose(0, 1).reshape(n, self.nh * self.hd) @ L["o"].T
            h = self._rms(x, L["post_norm"])
            x = x + (torch.nn.functional.silu(h @ L["gate"].T) * (h @ L["up"].T)) @ L["down"].T
        return self._rms(x[-1], self.norm) @ self.head.T

    def stream(self, ids, max_tokens, chunk=1024):
        """stream decodes greedily after the prompt ids, yielding each new id
        (the last one an end-of-sequence id when the model stopped)."""
        import torch

        with torch.no_grad():
            cache = []
            for a in range(0, len(ids), chunk):
                logits = self.forward(ids[a : a + chunk], a, cache)
            pos = len(ids)
            for _ in range(max_tokens):
                t = int(torch.argmax(logits))
                yield t
                if t in self.eos:
                    return
                logits = self.forward([t], pos, cache)
                pos += 1

    def generate(self, ids, max_tokens, chunk=1024):
        """generate is stream's ids as a list."""
        return list(self.stream(ids, max_tokens, chunk))


# ---------------------------------------------------------------- engine


def verified_sha256(model_dir):
    """verified_sha256 checks model_dir against its SHA256SUMS, as the GPU
    engine does, and returns the model's name (the sha256 of that file): the
    CPU reference never answers, or records answers, for weights other than
    the ones it names. A mismatch raises RuntimeError naming the file."""
    return modeldir.check(model_dir)[1]


class CPUEngine:
    """CPUEngine is server.py's engine interface (submit, cancel, stats,
    info, ...) over Llama: one request at a time in a worker thread, the
    others waiting in its queue, events delivered on the caller's event loop.
    It serves the trained model over HTTP where there is no GPU, so that
    extractbench measures the model's answers end to end (not its speed: a
    float32 forward on the CPU)."""

    def __init__(self, model_dir):
        import queue
        import threading

        import torch

        t0 = time.time()
        self.model_dir = model_dir
        self.served = os.path.basename(os.path.normpath(model_dir))
        self.model_sha256 = verified_sha256(model_dir)
        self.tok = BPE(os.path.join(model_dir, "tokenizer.json"))
        self.render, self.chat_template = chat_renderer(model_dir)
        self.llama = Llama(model_dir)
        self.max_context = self.llama.c["max_position_embeddings"]
        self.eos_ids = set(self.llama.eos)
        self.torch_version = torch.__version__
        self.build_s = time.time() - t0
        self.quant = None
        self._jobs = queue.Queue()
        self._cancelled = set()
        self._running = 0
        self._kv_tokens = 0
        self._worker = threading.Thread(target=self._work, name="cpu-reference", daemon=True)
        self._worker.start()

    def encode_chat(self, messages):
        return self.tok.encode(self.render(messages))

    def decoder(self):
        return ex.StreamDecoder(self.tok.decode)

    def alive(self):
        return self._worker.is_alive()

    def submit(self, rid, ids, max_new_tokens, on_event):
        """submit queues one request; on_event(Event) runs on the caller's event loop."""
        import asyncio

        loop = asyncio.get_running_loop()
        self._jobs.put((rid, list(ids), max_new_tokens, time.perf_counter(), lambda ev: loop.call_soon_threadsafe(on_event, ev)))

    def cancel(self, rid):
        self._cancelled.add(rid)

    def _work(self):
        from events import Event

        while True:
            rid, ids, max_new, queued, deliver = self._jobs.get()
            if rid in self._cancelled:
                self._cancelled.discard(rid)
                continue
            self._running, waited, n = 1, time.perf_counter() - queued, 0
            try:
                for t in self.llama.stream(ids, max_new):
                    n += 1
                    self._kv_tokens = len(ids) + n
                    done = t in self.eos_ids or n == max_new
                    deliver(Event([t], n, done, None, waited if n == 1 else None))
                    if rid in self._cancelled:
                        break
            except Exception as e:  # noqa: BLE001 - the client gets the error, the worker goes on
                deliver(Event([], n, True, f"cpu reference: {e}", waited if n == 0 else None))
            finally:
                self._cancelled.discard(rid)
                self._running, self._kv_tokens = 0, 0

    def stats(self):
        return {"running": self._running, "waiting": self._jobs.qsize(), "kv_usage": self._kv_tokens / self.max_context, "preemptions": None}

    def memory(self):
        return {}  # no GPU: no allocator peaks to report

    def reset_peaks(self):
        pass

    def info(self):
        return {
            "engine": "cpu_reference (float32 on the CPU, one request at a time)",
            "version": f"cpu_reference+torch-{self.torch_version}",
            "transformers": "none",
            "torch": self.torch_version,
            "served_model": self.served,
            "model_dir": self.model_dir,
            "model_sha256": self.model_sha256,
            "parameters": sum(t.numel() for t in [self.llama.embed, self.llama.norm] + [w for L in self.llama.layers for w in L.values()]),
            "max_context": self.max_context,
            "quantization": "none (bf16 weights widened to float32)",
            "build_seconds": round(self.build_s, 2),
            "random_weights": False,
            "tokenizer": f"{self.served} tokenizer.json (cpu_reference.BPE)",
            "chat_template": self.chat_template,
        }

    def close(self):
        pass


# ---------------------------------------------------------------- main


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="train.py model directory")
    p.add_argument("--corpus", default=os.path.join(HERE, "..", "..", "corpus", "default", "documents.jsonl"))
    p.add_argument("--limit", type=int, default=0, help="only the first N documents")
    p.add_argument("--max-tokens", type=int, default=48)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--check-tokens", help="evaluate.py --out JSON: compare prompt lengths, then stop")
    p.add_argument("--out", help="write every record and the summary as JSON here")
    p.add_argument("--failures", type=int, default=8, help="print this many failed answers")
    args = p.parse_args()

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    missing = modeldir.missing(args.model)
    if missing:
        sys.exit(f"cpu_reference.py: {args.model} is not a train.py model directory (no {', '.join(missing)})")
    try:
        model_sha256 = verified_sha256(args.model)
    except RuntimeError as e:
        sys.exit(f"cpu_reference.py: {e}")
    tok = BPE(os.path.join(args.model, "tokenizer.json"))
    render, _ = chat_renderer(args.model)
    docs = ex.load_jsonl(args.corpus)
    if args.limit:
        docs = docs[: args.limit]
    prompts = [tok.encode(render(ex.messages_for(d["text"]))) for d in docs]

    if args.check_tokens:
        with open(args.check_tokens) as f:
            v = json.load(f)["variants"]
        recs = (v[0] if isinstance(v, list) else next(iter(v.values())))["records"]
        want = {r["id"]: r["prompt_tokens"] for r in recs}
        diff = [(d["id"], len(ids), want[d["id"]]) for d, ids in zip(docs, prompts) if d["id"] in want and len(ids) != want[d["id"]]]
        both = sum(1 for d in docs if d["id"] in want)
        print(f"prompt lengths: {both - len(diff)} of {both} documents equal to {args.check_tokens}'s")
        for x in diff[:10]:
            print("  differs:", x)
        sys.exit(1 if diff or not both else 0)

    model = Llama(args.model)
    records = []
    t0 = time.time()
    for i, (d, ids) in enumerate(zip(docs, prompts)):
        rec = {"id": d.get("id"), "class": d.get("length_class"), "prompt_tokens": len(ids), "expected": d["expected"]}
        if len(ids) + args.max_tokens > model.c["max_position_embeddings"]:
            rec.update(output=None, finish="context", score=ex.unscored("truncation", "prompt + max_tokens over the context"))
        else:
            gen = model.generate(ids, args.max_tokens)
            stopped = bool(gen) and gen[-1] in model.eos
            text = tok.decode(gen)
            rec.update(output=text, completion_tokens=len(gen), finish="stop" if stopped else "length",
                       score=ex.score_generation(text, d["expected"], stopped))
        records.append(rec)
        if (i + 1) % 25 == 0:
            print(f"{i + 1}/{len(docs)} documents, {time.time() - t0:.0f}s", file=sys.stderr, flush=True)
    summary = ex.count_failures(ex.summarize(records), records, ("truncation",))
    print(f"== {os.path.basename(os.path.normpath(args.model))} float32 on the CPU (cpu_reference.py), {len(docs)} documents of {args.corpus}, {time.time() - t0:.0f}s")
    kinds = ex.error_kinds(records)
    ex.print_table(summary, kinds)
    for r in [r for r in records if not r["score"]["accepted"]][: args.failures]:
        print(f"   {r['id']} {r['class']} {r['score']['failure']}: {r['score']['detail']} | got {r['output']!r} want {ex.render_answer(r['expected'])}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"model": args.model, "model_sha256": model_sha256, "corpus": args.corpus,
                       "implementation": "cpu_reference.py float32", "summary": summary, "error_kinds": kinds,
                       "records": records}, f, indent=1)


if __name__ == "__main__":
    main()
