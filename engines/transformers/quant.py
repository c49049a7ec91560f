"""Quantised linear layers for the trained model (server.py --quant).

Each scheme replaces the nn.Linear modules of the decoder layers (attention
q/k/v/o and MLP gate/up/down); the embeddings, the final norm and the tied
lm_head stay bf16. The quantised weights are what the GPU stores: the bf16
originals are freed, so the weights' memory shrinks (about half for these
layers; the embedding, a fifth of the model, stays bf16).

- bf16: no change.
- fp8: weights float8_e4m3fn with one float32 scale per output channel
  (amax / 448); activations quantised to e4m3 on the fly with one scale per
  token (dynamic, amax / 448); the product is torch._scaled_mm with
  row-wise scales, accumulating in float32 and writing bf16.
- int8: weight-only int8, symmetric, one bf16 scale per output channel
  (amax / 127); activations stay bf16; the weight is dequantised on the fly
  (y = (x @ W_int8ᵀ) * scale, the int8 values are exact in bf16).
"""

import torch
from torch import nn

SCHEMES = {
    "bf16": "bf16 (no quantisation)",
    "fp8": "fp8-e4m3 weights per-output-channel scale + activations per-token dynamic, torch._scaled_mm",
    "int8": "int8 weight-only per-output-channel scale (symmetric), dequantised on the fly, bf16 activations",
}

FP8_MAX = 448.0  # largest finite float8_e4m3fn
INT8_MAX = 127.0


class FP8Linear(nn.Module):
    """FP8Linear is y = x Wᵀ with W in e4m3 (per-output-channel scales) and x
    quantised per token on the fly; torch._scaled_mm computes the product."""

    def __init__(self, linear):
        super().__init__()
        if linear.bias is not None:
            raise ValueError("FP8Linear: bias not supported")
        w = linear.weight.detach()
        self.out_features, self.in_features = w.shape
        if self.in_features % 16 or self.out_features % 16:
            raise ValueError(f"torch._scaled_mm needs dims that are multiples of 16, got {tuple(w.shape)}")
        q, scale = quantize_fp8_rows(w)
        self.register_buffer("weight", q)  # [out, in], row-major: its transpose is the column-major mat2
        self.register_buffer("weight_scale", scale.reshape(1, -1).contiguous())  # float32 [1, out]

    def forward(self, x):
        shape = x.shape
        x2 = x.reshape(-1, self.in_features)
        m = x2.shape[0]
        pad = (-m) % 16
        if pad:
            x2 = torch.nn.functional.pad(x2, (0, 0, 0, pad))
        xq, xs = quantize_fp8_rows(x2)
        y = torch._scaled_mm(xq, self.weight.t(), scale_a=xs, scale_b=self.weight_scale, out_dtype=torch.bfloat16)
        if pad:
            y = y[:m]
        return y.reshape(*shape[:-1], self.out_features)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, fp8_e4m3 W per-channel, A per-token"


class Int8Linear(nn.Module):
    """Int8Linear is weight-only int8: W stored int8 with a per-output-channel
    scale, dequantised on the fly (the scale is applied to the output)."""

    def __init__(self, linear):
        super().__init__()
        if linear.bias is not None:
            raise ValueError("Int8Linear: bias not supported")
        w = linear.weight.detach()
        self.out_features, self.in_features = w.shape
        q, scale = quantize_int8_rows(w)
        self.register_buffer("weight", q)  # int8 [out, in]
        self.register_buffer("weight_scale", scale.to(w.dtype))  # [out]

    def forward(self, x):
        y = torch.nn.functional.linear(x, self.weight.to(x.dtype))
        return y * self.weight_scale

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, int8 weight-only per-channel"


def quantize_fp8_rows(t):
    """quantize_fp8_rows quantises each row of a 2-D tensor to e4m3 with its
    own scale (row amax / 448); returns (q, scale[rows, 1] float32)."""
    tf = t.float()
    scale = tf.abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / FP8_MAX
    q = (tf / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    return q, scale


def quantize_int8_rows(t):
    """quantize_int8_rows quantises each row of a 2-D tensor to int8 with its
    own scale (row amax / 127, symmetric, round to nearest); returns (q,
    scale[rows] float32)."""
    tf = t.float()
    scale = tf.abs().amax(dim=1).clamp(min=1e-12) / INT8_MAX
    q = torch.round(tf / scale[:, None]).clamp(-INT8_MAX, INT8_MAX).to(torch.int8)
    return q, scale


def dequantize_int8_rows(q, scale):
    """dequantize_int8_rows is the inverse of quantize_int8_rows (up to rounding)."""
    return q.float() * scale.float()[:, None]


LAYERS = {"fp8": FP8Linear, "int8": Int8Linear}


def quantize_model(model, scheme):
    """quantize_model replaces every nn.Linear inside the decoder layers of a
    Llama model by the scheme's layer, in place, and returns how many it
    replaced. The originals are dropped, so their memory can be freed."""
    if scheme == "bf16":
        return 0
    cls = LAYERS[scheme]
    layers = model.model.layers
    count = 0
    for layer in layers:
        for parent in list(layer.modules()):
            for name, child in list(parent.named_children()):
                if isinstance(child, nn.Linear):
                    setattr(parent, name, cls(child))
                    count += 1
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return count


def weight_bytes_by_dtype(model):
    """weight_bytes_by_dtype sums the bytes of parameters and buffers per dtype."""
    out = {}
    seen = set()
    for t in list(model.parameters()) + list(model.buffers()):
        if t.data_ptr() in seen:  # tied weights count once
            continue
        seen.add(t.data_ptr())
        k = str(t.dtype).replace("torch.", "")
        out[k] = out.get(k, 0) + t.numel() * t.element_size()
    return out
