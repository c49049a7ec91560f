#!/usr/bin/env python3
"""random_model.py writes a train.py model directory with random weights, in
numpy only (no torch, transformers or safetensors): the shape of train.py's
--shape, the given tokenizer.json, the chat template that goes with it
(extraction.CHAT_TEMPLATE_COLLAPSE for a tokenizer without a normalizer), bf16
safetensors and SHA256SUMS. It exists so that a retrain's shape and tokenizer
can go through convert.py, llama-quantize and llama-server on a machine with
no GPU before the GPU trains the weights: what the GGUF ladder does to every
tensor (no k-quant fallback) and how llama.cpp tokenises do not depend on the
weights' values. Its answers mean nothing. The same seed writes the same
bytes.

    /usr/bin/python3 engines/llamacpp/random_model.py --shape h512 \\
        --tokenizer engines/transformers/retrain/tokenizer.json --out /tmp/rand/extract-llama-15m
"""

import argparse
import json
import os
import shutil
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "transformers"))
import extraction as ex  # noqa: E402
import modeldir  # noqa: E402
import train  # noqa: E402  (SHAPES and MAX_CONTEXT only: its top level needs no torch)


def bf16(a):
    """bf16 is a float32 array rounded to bfloat16 (nearest even), as uint16."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    return ((u + (0x7FFF + ((u >> 16) & 1))) >> 16).astype(np.uint16)


def tensors(shape, vocab, rng):
    """tensors yields (name, shape, float32 array) as LlamaForCausalLM names them."""
    h, f, L = shape["hidden_size"], shape["intermediate_size"], shape["num_hidden_layers"]
    q = shape["num_attention_heads"] * shape["head_dim"]
    kv = shape["num_key_value_heads"] * shape["head_dim"]
    std = shape["initializer_range"]
    normal = lambda *s: (rng.standard_normal(s, dtype=np.float32) * std)  # noqa: E731
    yield "model.embed_tokens.weight", normal(vocab, h)
    for i in range(L):
        p = f"model.layers.{i}."
        yield p + "input_layernorm.weight", np.ones(h, np.float32)
        yield p + "self_attn.q_proj.weight", normal(q, h)
        yield p + "self_attn.k_proj.weight", normal(kv, h)
        yield p + "self_attn.v_proj.weight", normal(kv, h)
        yield p + "self_attn.o_proj.weight", normal(h, q)
        yield p + "post_attention_layernorm.weight", np.ones(h, np.float32)
        yield p + "mlp.gate_proj.weight", normal(f, h)
        yield p + "mlp.up_proj.weight", normal(f, h)
        yield p + "mlp.down_proj.weight", normal(h, f)
    yield "model.norm.weight", np.ones(h, np.float32)


def write_safetensors(path, named):
    """write_safetensors writes {name: float32 array} as one bf16 shard."""
    header, blobs, off = {}, [], 0
    for name in sorted(named):
        raw = bf16(named[name]).tobytes()
        header[name] = {"dtype": "BF16", "shape": list(named[name].shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    return off


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", choices=sorted(train.SHAPES), default="h512")
    ap.add_argument("--tokenizer", required=True, help="tokenizer.json (bpe_train.py)")
    ap.add_argument("--out", required=True, help="the model directory (its name is the served name)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    shape = train.SHAPES[a.shape]
    with open(a.tokenizer, encoding="utf-8") as f:
        tj = json.load(f)
    vocab = len(tj["model"]["vocab"])
    sid = {t["content"]: t["id"] for t in tj["added_tokens"]}
    template = ex.CHAT_TEMPLATE if tj.get("normalizer") is not None else ex.CHAT_TEMPLATE_COLLAPSE
    os.makedirs(a.out, exist_ok=True)
    shutil.copyfile(a.tokenizer, os.path.join(a.out, "tokenizer.json"))
    named = dict(tensors(shape, vocab, np.random.default_rng(a.seed)))
    shard = "model-00001-of-00001.safetensors"
    size = write_safetensors(os.path.join(a.out, shard), named)
    write_json(os.path.join(a.out, "model.safetensors.index.json"), {
        "metadata": {"total_parameters": sum(x.size for x in named.values()), "total_size": size},
        "weight_map": {n: shard for n in sorted(named)},
    })
    eos = [sid[ex.EOT], sid[ex.EOS_TEXT]]
    write_json(os.path.join(a.out, "config.json"), {
        "architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
        "bos_token_id": sid[ex.BOS], "dtype": "bfloat16", "eos_token_id": eos,
        "head_dim": shape["head_dim"], "hidden_act": "silu", "hidden_size": shape["hidden_size"],
        "initializer_range": shape["initializer_range"], "intermediate_size": shape["intermediate_size"],
        "max_position_embeddings": train.MAX_CONTEXT, "mlp_bias": False, "model_type": "llama",
        "num_attention_heads": shape["num_attention_heads"], "num_hidden_layers": shape["num_hidden_layers"],
        "num_key_value_heads": shape["num_key_value_heads"], "pad_token_id": sid[ex.EOS_TEXT], "pretraining_tp": 1,
        "rms_norm_eps": shape["rms_norm_eps"], "rope_parameters": {"rope_theta": shape["rope_theta"], "rope_type": "default"},
        "tie_word_embeddings": True, "use_cache": True, "vocab_size": vocab,
        "random_weights": True,
    })
    write_json(os.path.join(a.out, "generation_config.json"), {"bos_token_id": sid[ex.BOS], "eos_token_id": eos, "pad_token_id": sid[ex.EOS_TEXT]})
    write_json(os.path.join(a.out, "tokenizer_config.json"), {
        "backend": "tokenizers", "bos_token": ex.BOS, "clean_up_tokenization_spaces": False, "eos_token": ex.EOT,
        "model_max_length": train.MAX_CONTEXT, "pad_token": ex.EOS_TEXT, "tokenizer_class": "TokenizersBackend",
        "chat_template": template,
    })
    with open(os.path.join(a.out, "chat_template.jinja"), "w", encoding="utf-8") as f:
        f.write(template)
    modeldir.write_sums(a.out)
    n = sum(x.size for x in named.values())
    print(f"{a.out}: random {a.shape} weights, {n:,} parameters, {vocab} tokens, sha256 {modeldir.model_sha256(a.out)}", file=sys.stderr)


if __name__ == "__main__":
    main()
