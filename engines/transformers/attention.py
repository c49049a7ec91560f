"""Attention for the fixture engine without the flash-attn package.

transformers' paged flash path (integrations/flash_paged.py) packs a batch's
sequences and calls flash_attn_varlen_func; this module hands it PyTorch's
own flash kernel instead (torch.nn.attention.varlen.varlen_attn, else
aten._flash_attention_forward), after checking it against a float32
reference on GQA shapes with queries shorter than keys. With a "flash" name
transformers builds no dense batch mask and turns CUDA graphs and async
batching on, which sdpa_paged does not.
"""

import inspect
import logging

import torch

log = logging.getLogger("attention")

# TORCH_FLASH is the attention implementation this module registers: the
# library's own paged flash path with PyTorch's built-in flash kernel in place
# of the flash-attn package, which the machine lacks. The name must contain
# "flash": transformers then builds no dense attention mask for the batch.
TORCH_FLASH = "torch_flash_varlen"


def _reference_attention(q, k, v, cu_q, cu_k, scale):
    """Per-sequence attention in float32, causal aligned to the bottom right
    (a query at the end of its sequence sees every key before it)."""
    outs = []
    rep = q.shape[1] // k.shape[1]
    for i in range(len(cu_q) - 1):
        qi = q[cu_q[i] : cu_q[i + 1]].float().transpose(0, 1)
        ki = k[cu_k[i] : cu_k[i + 1]].float().repeat_interleave(rep, dim=1).transpose(0, 1)
        vi = v[cu_k[i] : cu_k[i + 1]].float().repeat_interleave(rep, dim=1).transpose(0, 1)
        lq, lk = qi.shape[1], ki.shape[1]
        allowed = torch.arange(lk, device=q.device)[None, :] <= torch.arange(lq, device=q.device)[:, None] + (lk - lq)
        s = (qi @ ki.transpose(1, 2)) * scale
        s = s.masked_fill(~allowed, float("-inf"))
        outs.append((s.softmax(-1) @ vi).transpose(0, 1))
    return torch.cat(outs)


def _varlen_candidates():
    """Ways to call PyTorch's flash kernel on packed sequences, best first."""
    cands = []
    try:
        from torch.nn.attention.varlen import varlen_attn

        params = inspect.signature(varlen_attn).parameters

        def via_varlen(q, k, v, cu_q, cu_k, max_q, max_k, scale):
            kw = {}
            if "scale" in params:
                kw["scale"] = scale
            if "is_causal" in params:
                kw["is_causal"] = True
            elif "window_size" in params:
                kw["window_size"] = (-1, 0)
            return varlen_attn(q, k, v, cu_q, cu_k, max_q, max_k, **kw)

        cands.append(("torch.nn.attention.varlen.varlen_attn", via_varlen))
    except ImportError:
        pass

    def via_aten(q, k, v, cu_q, cu_k, max_q, max_k, scale):
        out = torch.ops.aten._flash_attention_forward(q, k, v, cu_q, cu_k, max_q, max_k, 0.0, True, False, scale=scale)
        return out[0]

    cands.append(("aten._flash_attention_forward", via_aten))
    return cands


def _checked_varlen():
    """_checked_varlen returns the first candidate that matches the reference on
    GQA shapes with queries shorter than keys (prefill chunks and decode), with
    native GQA or, failing that, with repeated KV heads."""
    gen = torch.Generator(device="cuda").manual_seed(1)
    errors = []
    for name, fn in _varlen_candidates():
        for repeat in (False, True):
            ok = True
            for head_dim in (128, 64):
                lq, lk = [5, 1, 3, 1], [9, 7, 3, 300]
                cu_q = torch.tensor([0] + list(_cumsum(lq)), dtype=torch.int32, device="cuda")
                cu_k = torch.tensor([0] + list(_cumsum(lk)), dtype=torch.int32, device="cuda")
                q = torch.randn(sum(lq), 32, head_dim, device="cuda", dtype=torch.bfloat16, generator=gen)
                k = torch.randn(sum(lk), 8, head_dim, device="cuda", dtype=torch.bfloat16, generator=gen)
                v = torch.randn(sum(lk), 8, head_dim, device="cuda", dtype=torch.bfloat16, generator=gen)
                scale = head_dim**-0.5
                ref = _reference_attention(q, k, v, cu_q.tolist(), cu_k.tolist(), scale)
                try:
                    kk, vv = (k.repeat_interleave(4, dim=1), v.repeat_interleave(4, dim=1)) if repeat else (k, v)
                    got = fn(q, kk, vv, cu_q, cu_k, max(lq), max(lk), scale).float()
                    err = ((got - ref).norm() / ref.norm()).item()
                except Exception as e:  # noqa: BLE001 - any failure disqualifies the candidate
                    errors.append(f"{name} repeat={repeat}: {type(e).__name__}: {e}"[:300])
                    ok = False
                    break
                if not err < 2e-2:
                    errors.append(f"{name} repeat={repeat} head_dim={head_dim}: rel err {err:.3g}")
                    ok = False
                    break
            if ok:
                return name, repeat, fn
    raise RuntimeError("no PyTorch flash varlen path matches the reference: " + "; ".join(errors))


def _cumsum(xs):
    t = 0
    for x in xs:
        t += x
        yield t


def install_torch_flash():
    """install_torch_flash registers TORCH_FLASH with transformers and returns a
    description of the kernel it checked and chose."""
    from transformers import AttentionInterface
    from transformers.integrations import flash_paged
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    name, repeat, fn = _checked_varlen()

    def flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, softmax_scale=None, causal=True, **kwargs):
        if not causal:
            raise ValueError("torch_flash_varlen supports causal attention only")
        if kwargs.get("window_size", (-1, -1)) not in ((-1, -1), [-1, -1]):
            raise ValueError("torch_flash_varlen has no sliding window")
        if repeat and k.shape[1] != q.shape[1]:
            r = q.shape[1] // k.shape[1]
            k, v = k.repeat_interleave(r, dim=1), v.repeat_interleave(r, dim=1)
        return fn(q, k, v, cu_q, cu_k, int(max_q), int(max_k), softmax_scale or q.shape[-1] ** -0.5)

    original = flash_paged.lazy_import_paged_flash_attention

    def lazy_import(implementation, *args, **kwargs):
        if TORCH_FLASH in str(implementation):
            return flash_attn_varlen_func, None  # None: no fused decode kernel, use varlen for decode too
        return original(implementation, *args, **kwargs)

    flash_paged.lazy_import_paged_flash_attention = lazy_import
    AttentionInterface.register(TORCH_FLASH, sdpa_attention_forward)  # plain forwards, outside CB
    AttentionInterface.register("paged|" + TORCH_FLASH, flash_paged.paged_attention_forward)
    try:
        from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

        flash_mask = ALL_MASK_ATTENTION_FUNCTIONS["flash_attention_2"]
        AttentionMaskInterface.register(TORCH_FLASH, flash_mask)
        AttentionMaskInterface.register("paged|" + TORCH_FLASH, flash_mask)
    except Exception as e:  # noqa: BLE001 - masks are only needed outside CB
        log.warning("mask registration skipped: %s", e)
    return f"{name}{' (kv heads repeated)' if repeat else ' (native GQA)'}"


def set_attention(model, attn):
    """set_attention switches the model to attn. TORCH_FLASH is set on the
    config directly, as the paged implementation the batching manager uses:
    transformers' own switch looks for the flash-attn package and refuses it
    (or, once the name is registered in the process, accepts the plain name,
    and the manager's later switch to "paged|..." then refuses it)."""
    if attn == TORCH_FLASH:
        model.config._attn_implementation = "paged|" + attn
        return "config"
    model.set_attn_implementation(attn)
    return "set_attn_implementation"
