"""A dry engine for the memory-boundary scripts (server.py --dry): a tiny
random "model" in plain Python on the CPU, no torch, with a paged KV pool
sized from an emulated card by cardcap.plan_pool, a FIFO scheduler that
admits while blocks are free, and preemption (recompute) when a running
sequence needs a block and none is left: the behaviour device-margin.sh looks
for on the H200, on any machine, so that DRY=1 runs the whole job here.

Its memory is bookkeeping, not allocation: the "device" is DEVICE_TOTAL_BYTES,
the weights (SHAPE's parameters in bf16), activations (one prefill chunk of
SHAPE) and memory outside the allocator are computed figures,
and memory() reports weights + activations + the KV blocks in use. Answers are
a function of the prompt and the position only (batch-invariant by
construction), never of the batch.
"""

import asyncio
import collections
import hashlib
import logging
import time

import cardcap
import tokenizer as tk
from events import Event

log = logging.getLogger("dryengine")

DEVICE_TOTAL_BYTES = 8 << 30  # the pretend device
DEFAULT_STEP_MS = 2.0
OUTSIDE_BYTES = 900 << 20  # the pretend CUDA context and libraries (the calculator assumes 1 GiB)

# SHAPE is the tiny model's config.json (cardcap.HF_KEYS): 8 layers of 512, 8 KV heads of 64,
# so 16 KiB of KV a token: a few long sequences fill a card of a few GB.
SHAPE = dict(model_type="llama", hidden_size=512, num_hidden_layers=8, num_attention_heads=8, num_key_value_heads=8,
             head_dim=64, intermediate_size=1024, vocab_size=tk.VOCAB_SIZE, tie_word_embeddings=True,
             max_position_embeddings=8192)


def shape_params(s=SHAPE):
    """shape_params is the tiny Llama's parameter count (tied embeddings, gated MLP, RMSNorm)."""
    h, hd = s["hidden_size"], s["head_dim"]
    attn = h * s["num_attention_heads"] * hd * 2 + h * s["num_key_value_heads"] * hd * 2
    layer = attn + 3 * h * s["intermediate_size"] + 2 * h
    return s["vocab_size"] * h + s["num_hidden_layers"] * layer + h


def activation_bytes(tokens, s=SHAPE):
    """activation_bytes is the pretend profiled prefill of that many tokens: one layer's live
    tensors in 16 bits (residual and attention output, q, k, v, gate and up)."""
    width = 2 * s["hidden_size"] + (s["num_attention_heads"] + 2 * s["num_key_value_heads"]) * s["head_dim"] + 2 * s["intermediate_size"]
    return tokens * width * 2


def served_name(args):
    """served_name is the dry engine's model name: the --model directory's, else dry-<shape>."""
    import os

    if args.model:
        return os.path.basename(os.path.normpath(args.model))
    return f"dry-{args.shape or '8b'}"


class _Seq:
    def __init__(self, rid, ids, max_new, on_event, created):
        self.rid, self.ids, self.max_new, self.on_event = rid, list(ids), max_new, on_event
        self.generated, self.blocks, self.created, self.first_sched = [], 0, created, None
        self.seed = hashlib.sha256(repr(self.ids).encode()).digest()

    def token(self, pos):
        h = hashlib.sha256(self.seed + pos.to_bytes(4, "little")).digest()
        return int.from_bytes(h[:4], "little") % 1000 + 1000  # ordinary text pieces, never an end token

    def held(self):
        return len(self.ids) + len(self.generated)


class DryEngine:
    """DryEngine is server.py's engine interface over the pretend model."""

    max_context = 8192
    eos_ids = set(tk.EOS_IDS)
    quant = None

    def __init__(self, cap, block_size=256, max_batch_tokens=8192, weights_mib=None, step_ms=None, served="dry-8b"):
        self.served = served
        self.block_size = block_size
        self.max_batch_tokens = max_batch_tokens
        self.step_s = (step_ms if step_ms is not None else DEFAULT_STEP_MS) / 1000
        self.weights_bytes = int(weights_mib * (1 << 20)) if weights_mib is not None else shape_params() * 2
        self.activation_bytes = activation_bytes(max_batch_tokens)
        self.kv_per_token = cardcap.kv_bytes_per_token(SHAPE["num_hidden_layers"], SHAPE["num_key_value_heads"], SHAPE["head_dim"])
        cap = cap or dict(cap_bytes=DEVICE_TOTAL_BYTES, utilisation=cardcap.DEFAULT_UTILISATION, card=None)
        self.card = cap.get("card")
        self.pool = cardcap.plan_pool(cap["cap_bytes"], DEVICE_TOTAL_BYTES, OUTSIDE_BYTES, self.weights_bytes, self.activation_bytes,
                                      self.kv_per_token, block_size, cap["utilisation"], min_tokens=self.max_context)
        self.free_blocks = self.pool.num_blocks
        self.waiting = collections.deque()
        self.running = []
        self.preemptions = 0
        self.peak = 0
        self.cancelled = set()
        self._task = None
        self._up = True
        log.info("dry engine: %s", self.cap_info())

    # ---- server interface

    def alive(self):
        return self._up

    def submit(self, rid, ids, max_new_tokens, on_event):
        self.waiting.append(_Seq(rid, ids, max_new_tokens, on_event, time.perf_counter()))
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop())

    def cancel(self, rid):
        self.cancelled.add(rid)

    def stats(self):
        total = self.pool.num_blocks
        return {"running": len(self.running), "waiting": len(self.waiting),
                "kv_usage": (total - self.free_blocks) / total if total else 0.0, "preemptions": self.preemptions}

    def _used(self):
        return OUTSIDE_BYTES + self.weights_bytes + self.activation_bytes + (self.pool.num_blocks - self.free_blocks) * self.block_size * self.kv_per_token

    def memory(self):
        now = self._used() - OUTSIDE_BYTES
        return {"max_allocated": max(self.peak, now), "max_reserved": max(self.peak, now), "allocated": now, "reserved": now}

    def reset_peaks(self):
        self.peak = self._used() - OUTSIDE_BYTES

    def cap_info(self):
        out = self.pool.as_dict(self.card, device="CPU (dry run)")
        out["hf_config"] = dict(SHAPE)
        held = self.weights_bytes + self.activation_bytes + self.pool.num_blocks * self.block_size * self.kv_per_token
        out.update(after_start_allocated_bytes=held, after_start_reserved_bytes=held, start_peak_allocated_bytes=held)
        return out

    def info(self):
        return {"transformers": "none (dry)", "torch": "none (dry)", "cuda": None, "gpu": "none", "engine": "dry",
                "shape": "dry", "served_model": self.served, "random_weights": True, "weights_bytes": self.weights_bytes,
                "num_blocks": self.pool.num_blocks, "block_size": self.block_size, "kv_bytes_per_token": self.kv_per_token,
                "kv_capacity_tokens": self.pool.kv_capacity_tokens, "max_context": self.max_context,
                "tokenizer": tk.NAME, "memory_cap": self.cap_info(),
                "notes": [cardcap.label(self.pool.cap_bytes, self.card, device="CPU (dry run)")]}

    def close(self):
        self._up = False
        if self._task is not None:
            self._task.cancel()

    # ---- the scheduler

    def _blocks_for(self, tokens):
        return -(-tokens // self.block_size)

    async def _loop(self):
        while self._up and (self.waiting or self.running):
            await asyncio.sleep(self.step_s)
            self._step()
            self.peak = max(self.peak, self._used() - OUTSIDE_BYTES)
        self._task = None

    def _release(self, s):
        self.free_blocks += s.blocks
        s.blocks = 0

    def _step(self):
        for s in [s for s in self.running if s.rid in self.cancelled]:
            self.running.remove(s)
            self._release(s)
        self.waiting = collections.deque(s for s in self.waiting if s.rid not in self.cancelled)
        budget = self.max_batch_tokens
        admitted = []
        while self.waiting:  # FIFO admission while the head's blocks are free and the chunk budget allows
            s = self.waiting[0]
            need = self._blocks_for(s.held() + 1)
            if need > self.free_blocks or (s.held() > budget and budget < self.max_batch_tokens):
                break
            self.waiting.popleft()
            self.free_blocks -= need
            s.blocks = need
            budget -= min(budget, s.held())
            if s.first_sched is None:
                s.first_sched = time.perf_counter()
            admitted.append(s)
        for s in list(self.running):  # decode one token each; a block short preempts the newest
            if s not in self.running:
                continue
            if s.held() + 1 > s.blocks * self.block_size:
                while self.free_blocks == 0 and self.running:
                    victim = self.running[-1]
                    self.running.remove(victim)
                    self._release(victim)
                    self.waiting.appendleft(victim)
                    self.preemptions += 1
                    if victim is s:
                        break
                if s not in self.running:
                    continue
                self.free_blocks -= 1
                s.blocks += 1
            tok = s.token(len(s.generated))
            s.generated.append(tok)
            done = len(s.generated) >= s.max_new
            qt = max(0.0, s.first_sched - s.created) if len(s.generated) == 1 else None
            s.on_event(Event([tok], len(s.generated), done, None, qt))
            if done:
                self.running.remove(s)
                self._release(s)
        self.running.extend(admitted)
