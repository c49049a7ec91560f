#!/usr/bin/env python3
"""convert.py writes a train.py model directory (safetensors + tokenizer.json,
engines/transformers/model/extract-llama-15m) as a llama.cpp GGUF file with
the gguf-py of the llama.cpp source that build.sh checks out. It needs numpy
and nothing else (no torch, transformers or tokenizers: the bundle's
convert_hf_to_gguf.py needs all three), and it writes the same bytes on every
run: no clocks, no host names, tensors and keys in a fixed order.

    /usr/bin/python3 engines/llamacpp/convert.py --gguf-py "$(engines/llamacpp/build.sh --source)/gguf-py" \\
        --model engines/transformers/model/extract-llama-15m --out /tmp/extract-llama-15m-bf16.gguf

What it does that convert_hf_to_gguf.py's LlamaModel does:
- tensor names mapped to llama.cpp's (token_embd, blk.N.attn_q, ...); the tied
  lm_head is left out (llama.cpp then reads token_embd for the output);
- q_proj and k_proj rows permuted from Hugging Face's rotate-half RoPE layout
  to llama.cpp's interleaved one (LlamaModel.permute, with the KV heads for k);
- 2-D weights in the output type (bf16 by default: the model's own dtype, so
  the conversion is lossless), the norms in float32;
- the byte-level BPE as tokenizer.ggml.model "gpt2": tokens by id, merges by
  rank, the five specials as CONTROL tokens, <|eot_id|> as end of sequence
  and of turn, no BOS added by the tokenizer (the chat template writes it).

What it does differently, because llama.cpp cannot read a tokenizer.json's
normalizer or pre-tokenizer regex and picks both from tokenizer.ggml.pre:
- pre-tokenizer "superbpe" (see PRE_TOKENIZER);
- the chat template collapses runs of spaces and tabs in each message to one
  space (see chat_template): the tokenizer's Replace normalizer, moved to
  where llama.cpp can run it. NFC is not reproduced (corpus/default is NFC).
"""

import argparse
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "transformers"))
import extraction as ex  # noqa: E402
import modeldir  # noqa: E402

# PRE_TOKENIZER is the llama.cpp pre-tokenizer whose splits, after the
# template's whitespace collapse, give the ids tokenizers gives: superbpe cuts
# only digit runs, right-aligned in groups of three, which is train.py's
# `\p{Nd}{1,3}(?=(?:\p{Nd}{3})*(?!\p{Nd}))`, and leaves letters, punctuation
# and spaces in one piece. That is harmless here because train.py's merges
# never join two of its pre-tokens (letters, punctuation, digits and
# whitespace never share one), so BPE over the longer piece makes the same
# tokens. llama.cpp's other pre-tokenizers glue a punctuation mark to the word
# after it ("(abc") or digits to each other in other groups, which this
# vocabulary never saw. checked by compare_tokens.py over corpus/default.
PRE_TOKENIZER = "superbpe"

# COLLAPSE_PASSES: each `replace('  ', ' ')` halves a run of spaces (rounding
# up), so 10 passes bring any run of up to 1,024 spaces to one.
COLLAPSE_PASSES = 10

GGUF_TYPES = {"bf16": "BF16", "f16": "F16", "f32": "F32"}
FILE_TYPES = {"bf16": "MOSTLY_BF16", "f16": "MOSTLY_F16", "f32": "ALL_F32"}


def chat_template(original):
    """chat_template is the model's template with each message's content
    normalised as its tokenizer's normalizer does (tabs to spaces, runs of
    spaces to one), so llama.cpp's prompt has the tokens the model was trained
    on. It refuses a template it does not recognise rather than guess."""
    if original == ex.CHAT_TEMPLATE_COLLAPSE:
        return original  # a retrained model's template collapses already (its tokenizer has no normalizer)
    needle = "{{ message['content'] }}"
    if original.count(needle) != 1:
        raise ValueError(f"chat template: expected one {needle!r}, got {original!r}")
    collapse = "{{ message['content'] | replace('\t', ' ')" + " | replace('  ', ' ')" * COLLAPSE_PASSES + " }}"
    return original.replace(needle, collapse)


def read_safetensors(model_dir, index):
    """read_safetensors returns {name: (dtype, shape, raw bytes)} for every
    tensor of the shards the index lists, read without the safetensors package."""
    out = {}
    for shard in sorted(set(index["weight_map"].values())):
        with open(os.path.join(model_dir, shard), "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(n))
            data = f.read()
        for name, info in header.items():
            if name == "__metadata__":
                continue
            a, b = info["data_offsets"]
            out[name] = (info["dtype"], info["shape"], data[a:b])
    missing = set(index["weight_map"]) - set(out)
    if missing:
        raise ValueError(f"{model_dir}: tensors in the index but in no shard: {sorted(missing)}")
    return out


def as_float32(dtype, shape, raw):
    if dtype == "BF16":
        return (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32).reshape(shape)
    if dtype == "F16":
        return np.frombuffer(raw, dtype="<f2").astype(np.float32).reshape(shape)
    if dtype == "F32":
        return np.frombuffer(raw, dtype="<f4").reshape(shape).copy()
    raise ValueError(f"tensor dtype {dtype} is not bf16, f16 or f32")


def weight(dtype, shape, raw, outtype):
    """weight is a 2-D tensor in the output type: (array, gguf raw dtype or None).
    bf16 to bf16 keeps the stored bits."""
    if outtype == "bf16":
        if dtype == "BF16":
            return np.frombuffer(raw, dtype="<u2").reshape(shape).copy(), "BF16"
        f = as_float32(dtype, shape, raw)
        # round to nearest even, as gguf-py's quants.quantize_bf16 does
        u = f.view(np.uint32)
        u = (u + (0x7FFF + ((u >> 16) & 1))) >> 16
        return u.astype(np.uint16), "BF16"
    if outtype == "f16":
        return as_float32(dtype, shape, raw).astype(np.float16), None
    return as_float32(dtype, shape, raw), None


def permute(w, n_head, n_head_kv=None):
    """permute is convert_hf_to_gguf.py's LlamaModel.permute: each head's rows
    from (half, pair) order to (pair, half), llama.cpp's RoPE layout."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


LAYER_TENSORS = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.o_proj.weight": "attn_output.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
}


def tensors(cfg, st, outtype):
    """tensors yields (gguf name, array, raw dtype) in llama.cpp's order."""
    n_head, n_kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    used = set()

    def take(name):
        used.add(name)
        return st[name]

    yield ("token_embd.weight", *weight(*take("model.embed_tokens.weight"), outtype))
    for i in range(cfg["num_hidden_layers"]):
        for hf, gg in LAYER_TENSORS.items():
            dtype, shape, raw = take(f"model.layers.{i}.{hf}")
            if len(shape) == 1:
                yield (f"blk.{i}.{gg}", as_float32(dtype, shape, raw), None)
                continue
            w, raw_dtype = weight(dtype, shape, raw, outtype)
            if hf == "self_attn.q_proj.weight":
                w = permute(w, n_head, n_head)
            elif hf == "self_attn.k_proj.weight":
                w = permute(w, n_head, n_kv)
            yield (f"blk.{i}.{gg}", np.ascontiguousarray(w), raw_dtype)
    yield ("output_norm.weight", as_float32(*take("model.norm.weight")), None)
    if "lm_head.weight" in st and not cfg.get("tie_word_embeddings"):
        yield ("output.weight", *weight(*take("lm_head.weight"), outtype))
    else:
        used.add("lm_head.weight")
    left = sorted(set(st) - used)
    if left:
        raise ValueError(f"tensors with no llama.cpp name: {left}")


def check_config(cfg):
    want = {
        "architectures": ["LlamaForCausalLM"],
        "hidden_act": "silu",
        "attention_bias": False,
        "mlp_bias": False,
    }
    for k, v in want.items():
        if cfg.get(k) != v:
            raise ValueError(f"config.json: {k} is {cfg.get(k)!r}, this converter handles {v!r}")
    rope = cfg.get("rope_parameters") or {"rope_type": "default", "rope_theta": cfg.get("rope_theta")}
    if rope.get("rope_type") != "default":
        raise ValueError(f"config.json: rope_type {rope.get('rope_type')!r}; only default RoPE is converted")
    return rope["rope_theta"]


def vocab(model_dir):
    """vocab returns (tokens, token types, merges, specials {content: id},
    template) from tokenizer.json and tokenizer_config.json."""
    with open(os.path.join(model_dir, "tokenizer.json"), encoding="utf-8") as f:
        t = json.load(f)
    with open(os.path.join(model_dir, "tokenizer_config.json"), encoding="utf-8") as f:
        tc = json.load(f)
    if t["model"]["type"] != "BPE" or t["decoder"]["type"] != "ByteLevel":
        raise ValueError("tokenizer.json: not a byte-level BPE")
    v = t["model"]["vocab"]
    if sorted(v.values()) != list(range(len(v))):
        raise ValueError("tokenizer.json: vocabulary ids are not 0..n-1")
    tokens = [None] * len(v)
    for s, i in v.items():
        tokens[i] = s
    specials = {a["content"]: a["id"] for a in t["added_tokens"]}
    for s, i in specials.items():
        if tokens[i] != s:
            raise ValueError(f"tokenizer.json: added token {s!r} is not id {i} of the vocabulary")
    types = [3 if i in specials.values() else 1 for i in range(len(tokens))]  # CONTROL, NORMAL
    merges = [m if isinstance(m, str) else " ".join(m) for m in t["model"]["merges"]]
    return tokens, types, merges, specials, tc


def convert(model_dir, out, outtype, gguf):
    sums, model_sha = modeldir.verify(model_dir)
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(model_dir, "model.safetensors.index.json")) as f:
        index = json.load(f)
    theta = check_config(cfg)
    tokens, types, merges, specials, tc = vocab(model_dir)
    if len(tokens) != cfg["vocab_size"]:
        raise ValueError(f"tokenizer has {len(tokens)} tokens, config.json vocab_size {cfg['vocab_size']}")
    st = read_safetensors(model_dir, index)
    name = os.path.basename(os.path.normpath(model_dir))

    tmp = out + ".tmp"
    w = gguf.GGUFWriter(tmp, "llama", use_temp_file=False)
    w.add_type(gguf.GGUFType.MODEL)
    w.add_name(name)
    w.add_string("extractbench.model_sha256", model_sha)  # the SHA256SUMS that was verified
    w.add_string("extractbench.tokenizer_sha256", sums["tokenizer.json"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_head_count_kv(cfg["num_key_value_heads"])
    w.add_rope_freq_base(float(theta))
    w.add_layer_norm_rms_eps(float(cfg["rms_norm_eps"]))
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_file_type(getattr(gguf.LlamaFileType, FILE_TYPES[outtype]))
    w.add_vocab_size(cfg["vocab_size"])
    w.add_rope_dimension_count(head_dim)

    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(PRE_TOKENIZER)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    eos = specials[tc["eos_token"]]
    w.add_bos_token_id(specials[tc["bos_token"]])
    w.add_eos_token_id(eos)
    w.add_eot_token_id(eos)
    w.add_pad_token_id(specials[tc["pad_token"]])
    w.add_add_bos_token(False)  # the template writes <|begin_of_text|>; tokenizer.json adds nothing
    w.add_add_eos_token(False)
    w.add_chat_template(chat_template(tc["chat_template"]))
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)

    for tname, arr, raw_dtype in tensors(cfg, st, outtype):
        qt = getattr(gguf.GGMLQuantizationType, raw_dtype) if raw_dtype else None
        w.add_tensor(tname, arr, raw_dtype=qt)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(tmp, out)
    return model_sha


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gguf-py", required=True, help="the gguf-py directory of build.sh --source's checkout")
    ap.add_argument("--model", required=True, help="a train.py model directory (with SHA256SUMS)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--outtype", choices=sorted(GGUF_TYPES), default="bf16")
    a = ap.parse_args()
    sys.path.insert(0, a.gguf_py)
    import gguf

    model_sha = convert(a.model, a.out, a.outtype, gguf)
    print(f"{a.out}: {a.outtype}, from {a.model} (model_sha256 {model_sha})", file=sys.stderr)


if __name__ == "__main__":
    main()
