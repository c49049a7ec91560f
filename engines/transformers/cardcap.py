"""Emulated cards: the engine's memory capped to a smaller card's, and its KV
pool sized from what the cap leaves, as a real engine sizes it from its card.

On a real card of C bytes an engine (vLLM's gpu_memory_utilization) may use
C x utilisation; the CUDA context and other memory outside PyTorch's
allocator take part of C before anything is loaded; the weights and one
profiled forward of the largest prefill chunk (the activation reserve) come
next, and the KV pool is what is left. On the H200 the same is emulated:
PyTorch's allocator is capped (torch.cuda.set_per_process_memory_fraction) at
C less the memory outside it, so an allocation past the card's size fails
with out-of-memory as it would on the card, and the pool is sized from C.
Only memory is emulated: bandwidth and compute stay the H200's, and every
record says so (LABEL).

Pure arithmetic, no torch: the engine measures, this module decides, and
test_cardcap.py checks the decisions on any machine.
"""

import dataclasses
import math

GB = 10**9
GiB = 1 << 30

# DEFAULT_UTILISATION is the share of the card the engine sizes itself to:
# vLLM's gpu_memory_utilization default, and the calculator's
# (sizing.DefaultUtilisation), so that both size the same card.
DEFAULT_UTILISATION = 0.90

# CARDS are the emulated cards by their datasheet size (decimal GB, what the
# calculator's catalog uses): the name `memory -gpu` knows them by.
CARDS = {
    24: "L4",  # and RTX 4090
    48: "L40S",
    80: "H100 SXM",
    141: "H200",
}

# HF_KEYS are the config.json keys a capped engine reports of its model, so
# that the calculator (sizing.ParseHFConfig) sizes the same shape.
HF_KEYS = ("model_type", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
           "intermediate_size", "vocab_size", "tie_word_embeddings", "max_position_embeddings")

LABEL = "emulated {card} ({gb:g} GB) on {device}: memory only; bandwidth and compute are the {device}'s"


class CapError(ValueError):
    """CapError is a cap that cannot be used: it says why and what to change."""


def parse_cap(gib=None, fraction=None, device_total=None):
    """parse_cap is the card's bytes from --memory-cap-gib N or
    --memory-cap-fraction F of the device's total; None when neither is given."""
    if gib is not None and fraction is not None:
        raise CapError("--memory-cap-gib and --memory-cap-fraction exclude each other")
    if gib is not None:
        if not gib > 0:
            raise CapError(f"--memory-cap-gib {gib}: want a positive size in GiB")
        cap = int(gib * GiB)
    elif fraction is not None:
        if not 0 < fraction <= 1:
            raise CapError(f"--memory-cap-fraction {fraction}: want a share of the device above 0, at most 1")
        if not device_total:
            raise CapError("--memory-cap-fraction needs the device's total memory")
        cap = int(fraction * device_total)
    else:
        return None
    if device_total and cap > device_total:
        raise CapError(f"memory cap {cap / GiB:.2f} GiB is more than the device's {device_total / GiB:.2f} GiB")
    return cap


def card_name(cap_bytes):
    """card_name is the catalog card whose datasheet size the cap is (within
    1%), else "card"."""
    gb = cap_bytes / GB
    for size, name in CARDS.items():
        if abs(gb - size) <= 0.01 * size:
            return name
    return "card"


def label(cap_bytes, card=None, device="H200"):
    """label is what every record of an emulated card says of it."""
    return LABEL.format(card=card or card_name(cap_bytes), gb=round(cap_bytes / GB, 1), device=device)


@dataclasses.dataclass
class Pool:
    """Pool is how a capped engine is sized: the allocator's limit and the
    KV pool, with every term that went into them (bytes)."""

    cap_bytes: int  # the emulated card
    device_total_bytes: int  # the real device
    outside_torch_bytes: int  # CUDA context and other memory outside PyTorch's allocator (measured)
    weights_bytes: int  # allocated after the model was built (measured)
    activation_bytes: int  # one profiled prefill chunk's peak above the weights (measured)
    utilisation: float
    block_size: int
    kv_bytes_per_token: int
    torch_limit_bytes: int  # cap - outside_torch
    torch_fraction: float  # torch_limit / device_total: set_per_process_memory_fraction's argument
    kv_budget_bytes: int  # cap x utilisation - outside_torch - weights - activations
    num_blocks: int
    kv_capacity_tokens: int

    def sequences(self, tokens_per_sequence):
        """sequences is how many sequences of that many tokens the pool holds
        at once: whole blocks each (a sequence's last block is never shared)."""
        return max_sequences(self.num_blocks, self.block_size, tokens_per_sequence)

    def as_dict(self, card=None, device="H200"):
        """as_dict is the pool for /version and the run's manifest."""
        d = dataclasses.asdict(self)
        d["card"] = card or card_name(self.cap_bytes)
        d["label"] = label(self.cap_bytes, card, device)
        return d


def plan_pool(cap_bytes, device_total_bytes, outside_torch_bytes, weights_bytes, activation_bytes,
              kv_bytes_per_token, block_size=256, utilisation=DEFAULT_UTILISATION, min_tokens=1):
    """plan_pool sizes a capped engine; CapError when the card cannot hold
    the weights, the activations and one sequence of min_tokens."""
    if not 0 < utilisation <= 1:
        raise CapError(f"utilisation {utilisation}: want a share above 0, at most 1")
    if block_size <= 0 or kv_bytes_per_token <= 0:
        raise CapError(f"block size {block_size}, KV bytes per token {kv_bytes_per_token}: want positive numbers")
    if cap_bytes > device_total_bytes:
        raise CapError(f"memory cap {cap_bytes / GiB:.2f} GiB is more than the device's {device_total_bytes / GiB:.2f} GiB")
    torch_limit = cap_bytes - outside_torch_bytes
    if torch_limit <= 0:
        raise CapError(f"memory cap {cap_bytes / GiB:.2f} GiB is all taken by the {outside_torch_bytes / GiB:.2f} GiB outside PyTorch")
    budget = int(cap_bytes * utilisation) - outside_torch_bytes - weights_bytes - activation_bytes
    block_bytes = block_size * kv_bytes_per_token
    blocks = budget // block_bytes if budget > 0 else 0
    need = -(-min_tokens // block_size)
    if blocks < need:
        raise CapError(
            f"a {cap_bytes / GB:.1f} GB card at utilisation {utilisation:g} leaves {budget / GiB:.2f} GiB for the KV cache "
            f"after {outside_torch_bytes / GiB:.2f} GiB outside PyTorch, {weights_bytes / GiB:.2f} GiB of weights and "
            f"{activation_bytes / GiB:.2f} GiB of activations: {blocks} blocks of {block_size} tokens, fewer than the {need} "
            f"one sequence of {min_tokens} tokens needs; give a larger cap or a smaller model"
        )
    return Pool(
        cap_bytes=cap_bytes,
        device_total_bytes=device_total_bytes,
        outside_torch_bytes=outside_torch_bytes,
        weights_bytes=weights_bytes,
        activation_bytes=activation_bytes,
        utilisation=utilisation,
        block_size=block_size,
        kv_bytes_per_token=kv_bytes_per_token,
        torch_limit_bytes=torch_limit,
        torch_fraction=torch_limit / device_total_bytes,
        kv_budget_bytes=budget,
        num_blocks=blocks,
        kv_capacity_tokens=blocks * block_size,
    )


def max_sequences(num_blocks, block_size, tokens_per_sequence):
    """max_sequences is num_blocks // ceil(tokens / block_size)."""
    if tokens_per_sequence <= 0:
        raise CapError(f"tokens per sequence {tokens_per_sequence}: want a positive number")
    return num_blocks // math.ceil(tokens_per_sequence / block_size)


def kv_bytes_per_token(layers, kv_heads, head_dim, element_bytes=2):
    """kv_bytes_per_token is 2 (K and V) x layers x KV heads x head dim x bytes."""
    return 2 * layers * kv_heads * head_dim * element_bytes
