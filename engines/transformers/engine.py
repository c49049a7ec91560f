"""The GPU side of the fixture engine: a Llama-shaped model with random
weights, served by transformers' continuous batching manager.

The CB API used (transformers 5.x, read off the installed source):
  model.init_continuous_batching(generation_config=GenerationConfig(...),
                                 continuous_batching_config=ContinuousBatchingConfig(...))
  manager.warmup(); manager.start()
  manager.register_result_handler(request_id, callback)   # callback runs on the asyncio loop
  manager.add_request(input_ids, request_id=..., max_new_tokens=..., streaming=True)
  manager.cancel_request(request_id); manager.stop()
Older or newer spellings are tried where they differ (see _cb_config, _init_manager).

Two kinds of model. With a shape (--shape 8b|1b) nothing is downloaded: the
weights are random (normal, std 0.02, built directly on the GPU) and the
tokenizer is tokenizer.py; timing and memory are real, the generated text is
meaningless. With a model directory (--model DIR, made by train.py) the
weights and the BPE tokenizer are the trained ones, optionally quantised
(quant.py), and prompts go through the tokenizer's own chat template.

Graph captures and compilations are counted by hooking torch itself
(CUDAGraph.capture_begin, and dynamo's compiled-graph counter), whoever
triggers them: /metrics reports the count as engine_graph_captures_total.
"""

import dataclasses
import inspect
import json
import logging
import os
import sys
import threading
import time

import torch
import transformers
from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

import cardcap
import extraction
import modeldir
import tokenizer as tk
from events import Event
from attention import TORCH_FLASH, install_torch_flash, set_attention

log = logging.getLogger("engine")

MAX_CONTEXT = 8192  # prompt + completion tokens a request may use

# SHAPES are the public architectures whose shapes the fixture copies.
SHAPES = {
    "8b": dict(  # Llama-3.1-8B
        served="random-llama-3.1-8b",
        calculator="Llama-3.1-8B",  # sizing's preset of the same shape
        hidden_size=4096,
        intermediate_size=14336,
        num_hidden_layers=32,
        num_attention_heads=32,
        num_key_value_heads=8,
        tie_word_embeddings=False,
    ),
    "1b": dict(  # Llama-3.2-1B
        served="random-llama-3.2-1b",
        calculator="Llama-3.2-1B",
        hidden_size=2048,
        intermediate_size=8192,
        num_hidden_layers=16,
        num_attention_heads=32,
        num_key_value_heads=8,
        tie_word_embeddings=True,
    ),
}

def versions():
    """versions returns the software and GPU the engine runs on."""
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    return {
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "gpu": gpu,
    }


def llama_config(shape):
    """llama_config returns the LlamaConfig of a SHAPES entry."""
    s = {k: v for k, v in SHAPES[shape].items() if k not in ("served", "calculator")}
    return LlamaConfig(
        vocab_size=tk.VOCAB_SIZE,
        max_position_embeddings=MAX_CONTEXT,
        rms_norm_eps=1e-5,
        bos_token_id=tk.BEGIN_OF_TEXT,
        eos_token_id=tk.EOT,
        pad_token_id=tk.END_OF_TEXT,
        **s,
    )


def build_model(shape, seed=0):
    """build_model makes the model on the GPU in bf16 with random weights.

    Parameters are created on the device (no CPU init, no copy); the default
    dtype is switched so they are born bf16.
    """
    torch.manual_seed(seed)
    prev = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device("cuda"):
            model = LlamaForCausalLM(llama_config(shape))
    finally:
        torch.set_default_dtype(prev)
    model.eval()
    model.requires_grad_(False)
    bad = [n for n, p in model.named_parameters() if not torch.isfinite(p).all()]
    if bad:
        raise RuntimeError(f"random init left non-finite values in {bad[:3]}")
    return model


def _cb_config_class():
    for mod in ("transformers", "transformers.generation", "transformers.generation.configuration_utils"):
        try:
            m = __import__(mod, fromlist=["ContinuousBatchingConfig"])
            c = getattr(m, "ContinuousBatchingConfig", None)
            if c is not None:
                return c
        except ImportError:
            continue
    return None


def _accepts(fn_or_cls):
    if dataclasses.is_dataclass(fn_or_cls):
        return {f.name for f in dataclasses.fields(fn_or_cls)}
    return set(inspect.signature(fn_or_cls).parameters)


@dataclasses.dataclass
class Sizing:
    """Sizing is how the CB manager is sized; None lets transformers decide."""

    block_size: int = 256
    num_blocks: int | None = None
    max_batch_tokens: int | None = 8192
    max_memory_percent: float | None = 0.9
    cuda_graphs: bool | None = None  # None: transformers' default for the attention path


def init_manager(model, sizing, eos_ids=(tk.EOT,), pad_id=tk.END_OF_TEXT, bos_id=tk.BEGIN_OF_TEXT):
    """init_manager creates, warms up and starts a continuous batching manager."""
    eos = list(eos_ids)
    gen = GenerationConfig(
        max_new_tokens=128,
        do_sample=False,
        eos_token_id=eos[0] if len(eos) == 1 else eos,
        pad_token_id=pad_id,
        bos_token_id=bos_id,
    )
    wanted = {
        "block_size": sizing.block_size,
        "num_blocks": sizing.num_blocks,
        "max_batch_tokens": sizing.max_batch_tokens,
        "max_memory_percent": sizing.max_memory_percent,
        # Off so that every pass over the same corpus pays its real prefill.
        "allow_block_sharing": False,
        "use_cuda_graph": sizing.cuda_graphs,
        "scheduler_type": "fifo",
    }
    kwargs = {}
    cls = _cb_config_class()
    init_params = _accepts(model.init_continuous_batching)
    if cls is not None and "continuous_batching_config" in init_params:
        fields = _accepts(cls)
        kwargs["continuous_batching_config"] = cls(**{k: v for k, v in wanted.items() if k in fields and v is not None})
        ignored = sorted(k for k, v in wanted.items() if k not in fields and v is not None)
    else:  # older 5.x: sizing lives on the GenerationConfig
        gen.block_size, gen.num_blocks, gen.max_batch_tokens = sizing.block_size, sizing.num_blocks, sizing.max_batch_tokens
        gen.max_memory = sizing.max_memory_percent
        gen.scheduler = "fifo"
        for k in ("allow_prefix_sharing", "allow_block_sharing"):
            if k in init_params:
                kwargs[k] = False
        ignored = []
    if ignored:
        log.warning("ContinuousBatchingConfig lacks %s", ignored)
    manager = model.init_continuous_batching(generation_config=gen, **kwargs)
    t0 = time.perf_counter()
    if hasattr(manager, "warmup"):
        manager.warmup()
    warm = time.perf_counter() - t0
    manager.start()
    deadline = time.time() + 600
    while getattr(manager, "batch_processor", None) is None:
        if time.time() > deadline or not manager.is_running():
            raise RuntimeError("continuous batching manager did not start")
        time.sleep(0.05)
    return manager, warm


# ---------------------------------------------------------------- emulated cards


@dataclasses.dataclass
class Cap:
    """Cap is an emulated card (cardcap.py): its bytes, the share of it the
    engine sizes itself to, and its name."""

    cap_bytes: int
    utilisation: float = cardcap.DEFAULT_UTILISATION
    card: str | None = None


def outside_torch_bytes():
    """outside_torch_bytes is the device memory in use that PyTorch's
    allocator does not hold (the CUDA context, kernels' modules, libraries'
    workspaces), and the device's total: the device is taken to be this
    process's alone, as on the lent H200."""
    free, total = torch.cuda.mem_get_info()
    return max(0, total - free - torch.cuda.memory_reserved()), total


def set_cap_fraction(cap_bytes):
    """set_cap_fraction caps PyTorch's allocator at a card of cap_bytes less
    what is outside it now; returns (fraction, outside, total)."""
    outside, total = outside_torch_bytes()
    fraction = min(1.0, max(1e-6, (cap_bytes - outside) / total))
    torch.cuda.set_per_process_memory_fraction(fraction)
    return fraction, outside, total


@torch.no_grad()
def profile_activations(model, tokens):
    """profile_activations runs one forward of a prefill chunk of that many
    tokens (logits for the last only, as the batching manager computes them)
    and returns its peak allocation above what was allocated before: the
    activation reserve a real engine profiles at start-up."""
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    ids = torch.zeros((1, tokens), dtype=torch.long, device="cuda")
    try:
        model(input_ids=ids, use_cache=False, logits_to_keep=1)
    except TypeError:  # older transformers: num_logits_to_keep
        model(input_ids=ids, use_cache=False, num_logits_to_keep=1)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    del ids
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    return peak


def kv_bytes_per_token_of(cfg):
    """kv_bytes_per_token_of is a model config's KV bytes per token in bf16."""
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    return cardcap.kv_bytes_per_token(cfg.num_hidden_layers, cfg.num_key_value_heads, head_dim)


class EngineDown(RuntimeError):
    """EngineDown means the generation loop has stopped (after a crash such as an OOM)."""


_preemptions = None


def _count_preemptions():
    """Counts the running requests the manager evicts to free KV blocks
    (transformers' preemption: OffloadingManager.offload_requests returns how
    many it evicted; older versions evict one per offload_one_request), or
    returns None when this version has neither hook."""
    global _preemptions
    if _preemptions is not None:
        return _preemptions
    try:
        from transformers.generation.continuous_batching.offloading_manager import OffloadingManager
    except ImportError:
        return None
    counter = [0]
    many = getattr(OffloadingManager, "offload_requests", None)
    one = getattr(OffloadingManager, "offload_one_request", None)
    if many is not None:

        def offload_requests(self, *args, **kwargs):
            n = many(self, *args, **kwargs)
            counter[0] += n if isinstance(n, int) else 0
            return n

        OffloadingManager.offload_requests = offload_requests
    elif one is not None:

        def offload_one_request(self, *args, **kwargs):
            counter[0] += 1
            return one(self, *args, **kwargs)

        OffloadingManager.offload_one_request = offload_one_request
    else:
        return None
    _preemptions = counter
    return counter

# ---------------------------------------------------------------- graph captures

_captures = None


class CaptureCounter:
    """CaptureCounter counts CUDA graph captures and compilations in this
    process since it was installed: every torch.cuda.CUDAGraph.capture_begin
    (transformers' batching manager captures through it, lazily, one graph
    per new batch shape) and every graph torch.compile's dynamo produced. It
    also counts transformers' own "Creating graph for key" log lines, as a
    cross-check of the hook."""

    def __init__(self):
        self.graph_captures = 0
        self.log_lines = 0
        self._lock = threading.Lock()

    def compilations(self):
        """compilations is dynamo's count of graphs it compiled (0 when
        torch._dynamo was never imported, so nothing was compiled)."""
        dyn = sys.modules.get("torch._dynamo.utils")
        if dyn is None:
            return 0
        try:
            return int(dyn.counters["stats"]["unique_graphs"])
        except Exception:  # noqa: BLE001 - a missing counter is no compilation seen
            return 0

    def total(self):
        """total is captures + compilations: the figure /metrics exports."""
        return self.graph_captures + self.compilations()


class _CaptureLog(logging.Handler):
    def __init__(self, counter):
        super().__init__(logging.DEBUG)
        self.counter = counter

    def emit(self, record):
        try:
            if "Creating graph" in record.getMessage():
                self.counter.log_lines += 1
        except Exception:  # noqa: BLE001
            pass


def capture_counter():
    """capture_counter installs the hooks once and returns the counter."""
    global _captures
    if _captures is not None:
        return _captures
    counter = CaptureCounter()
    original = torch.cuda.CUDAGraph.capture_begin

    def capture_begin(self, *args, **kwargs):
        with counter._lock:
            counter.graph_captures += 1
        return original(self, *args, **kwargs)

    torch.cuda.CUDAGraph.capture_begin = capture_begin
    lg = logging.getLogger("ContinuousBatchingLogger")
    for h in lg.handlers:  # keep the batching logger's console output at warnings
        h.setLevel(max(h.level, logging.WARNING))
    if lg.level == logging.NOTSET or lg.level > logging.INFO:
        lg.setLevel(logging.INFO)
    lg.addHandler(_CaptureLog(counter))
    _captures = counter
    return counter


# ---------------------------------------------------------------- trained models

QUANT_SCHEMES = ("bf16", "fp8", "int8")

# KV blocks for a trained model: the protocols' hardest point, 128 requests of
# a full 8,192-token context, in 256-token blocks, plus a margin. The model is
# small (4 KiB of KV a token), so this is a few GiB; sizing from 90% of the
# GPU would allocate tens of millions of tokens nobody uses.
TRAINED_NUM_BLOCKS = 128 * MAX_CONTEXT // 256 + 256

# CUDA graphs for a trained model (server.py --cuda-graphs auto). On, with
# every batch shape captured at start-up (install_graph_buckets): without
# graphs a step of this small model costs about ten times more (CPU launch
# overhead), and transformers' own lazy capture would capture inside
# measured passes.
TRAINED_CUDA_GRAPHS = True

# ---------------------------------------------------------------- graph buckets
#
# transformers 5.17's batching manager keys its CUDA graphs of the varlen path
# (the only path here: the decode fast path needs flash-attn's kvcache kernel)
# by (padded query tokens, padded KV tokens read, padded max_seqlen_k). By
# default the queries pad to multiples of 64, the KV read to multiples of
# 16,384 and max_seqlen_k to a power of two: hundreds of keys, captured lazily
# as batches meet them. install_graph_buckets makes the set small and known:
# queries pad to a power of two from 64 up to max_batch_tokens, the KV read
# to a power of two from 8,192 up to the cache size, max_seqlen_k to the
# context (an upper bound is all the flash kernel needs), and the warm-up
# captures every reachable (queries, KV) pair for both IO pairs of async
# batching before the server opens its port.

GRAPH_Q_MIN = 64


def scheduler_reserve(manager):
    """scheduler_reserve is the running scheduler's safety_margin (a share of the KV blocks), or
    None where this transformers keeps it elsewhere."""
    for path in (("batch_processor", "scheduler"), ("scheduler",)):
        obj = manager
        for name in path:
            obj = getattr(obj, name, None)
        margin = getattr(obj, "safety_margin", None)
        if isinstance(margin, (int, float)):
            return float(margin)
    return None


def q_buckets(max_batch_tokens):
    """q_buckets are the padded query sizes: powers of two from GRAPH_Q_MIN, then max_batch_tokens."""
    out, b = [], GRAPH_Q_MIN
    while b < max_batch_tokens:
        out.append(b)
        b *= 2
    return out + [max_batch_tokens]


def kv_buckets(num_pages):
    """kv_buckets are the padded KV-read sizes: powers of two from MAX_CONTEXT, then the cache size."""
    out, b = [], MAX_CONTEXT
    while b < num_pages:
        out.append(b)
        b *= 2
    return out + [num_pages]


def bucket(value, buckets):
    """bucket is the smallest bucket >= value (the last one caps)."""
    for b in buckets:
        if value <= b:
            return b
    return buckets[-1]


def warmup_plan(q, kv_read, max_requests):
    """warmup_plan splits q query tokens and kv_read cached tokens over as few
    fake requests as keep each within the context: [(query, past), ...], or
    None when no real batch can have that shape (more requests needed than
    query tokens)."""
    per = MAX_CONTEXT - 2
    n = max(1, -(-(q + kv_read) // per))
    if n > q or n > max_requests:
        return None
    return [(q // n + (1 if i < q % n else 0), kv_read // n + (1 if i < kv_read % n else 0)) for i in range(n)]


def install_graph_buckets():
    """install_graph_buckets patches transformers' batching manager (this
    process) to pad batches to the buckets above and to capture every bucket
    pair at warm-up. Returns the patched classes' module names."""
    from transformers.generation.continuous_batching import input_outputs as iom
    from transformers.generation.continuous_batching import model_runner as mrm
    from transformers.generation.continuous_batching.requests import FutureRequestState, RequestState, RequestStatus

    runner, ios = mrm.ModelRunner, iom.ContinuousBatchingIOs
    if getattr(runner, "_extractbench_buckets", False):
        return
    pad0, kwargs0 = runner.maybe_pad_inputs, ios.get_model_kwargs

    def maybe_pad_inputs(self, num_q_tokens, max_kv_read, use_decode_fast_path):
        if not self.pad_inputs or use_decode_fast_path:
            return pad0(self, num_q_tokens, max_kv_read, use_decode_fast_path)
        return bucket(num_q_tokens, q_buckets(self.cache.max_batch_tokens)), bucket(max_kv_read, kv_buckets(self.cache.num_pages))

    def get_model_kwargs(self, use_padding=False):
        kw = kwargs0(self, use_padding)
        if use_padding and not self.use_block_table and getattr(self, "use_cuda_graph_varlen", False):
            k = min(MAX_CONTEXT, self.cache.num_pages)
            self.max_seqlen_k = {lt: k for lt in self.max_seqlen_k}
            kw["max_seqlen_k"] = {lt: k for lt in kw["max_seqlen_k"]} if isinstance(kw["max_seqlen_k"], dict) else k
        return kw

    @torch.no_grad()
    def warmup(self, model):
        try:
            capture_all(self, model, FutureRequestState, RequestState, RequestStatus)
        except Exception:  # noqa: BLE001 - shapes not captured now are captured lazily, and counted
            log.exception("graph warm-up stopped")

    runner.maybe_pad_inputs, ios.get_model_kwargs, runner.warmup = maybe_pad_inputs, get_model_kwargs, warmup
    runner._extractbench_buckets = True


def capture_all(runner, model, FutureRequestState, RequestState, RequestStatus):
    """capture_all runs one fake varlen batch of every reachable bucket pair
    through the runner, so each graph is captured now; in async batching, for
    both IO pairs. Largest first, so the shared graph memory pool is sized
    once and later captures fit in it."""
    if not runner.pad_inputs:
        return
    io, cache = runner.inputs_and_outputs, runner.cache
    qs, kvs = q_buckets(cache.max_batch_tokens), kv_buckets(cache.num_pages)
    max_requests = getattr(runner.cb_config, "max_requests_per_batch", None) or 1024
    pairs = 2 if hasattr(io, "swap_io_pairs") else 1
    t0 = time.perf_counter()
    done, unreachable, failed = 0, 0, []
    for _ in range(pairs):
        for q in reversed(qs):
            for j in reversed(range(len(kvs))):
                kv = kvs[j]
                kv_read = kvs[j - 1] + 1 if j else 0  # the smallest read that pads to kv
                plan = warmup_plan(q, kv_read, max_requests)
                if plan is None:
                    unreachable += 1
                    continue
                states = []
                try:
                    for i, (qi, pi) in enumerate(plan):
                        rid = f"__extractbench_warmup_{q}_{kv}_{i}__"
                        st = RequestState(request_id=rid, initial_tokens=[0] * (qi + pi), max_new_tokens=1)
                        st._status = RequestStatus.PREFILLING
                        st.tokens_to_process = [0] * qi
                        st.position_offset = pi
                        if cache.allocate_blocks(-(-(qi + pi) // cache.block_size), rid, 0) is None:
                            raise RuntimeError(f"no KV blocks for {len(plan)} requests")
                        states.append(FutureRequestState(st, has_new_token=True, complete_blocks=0, query_length=qi))
                    pq, pkv = runner.maybe_pad_inputs(q, kv_read, False)
                    if (pq, pkv) != (q, kv):
                        raise RuntimeError(f"({q}, {kv_read}) padded to ({pq}, {pkv})")
                    io.prepare_batch_tensors(states, runner.logit_processor, False, pq, pkv, use_padding=True)
                    runner.compute_batch(model, io.get_model_kwargs(use_padding=True))
                    done += 1
                except Exception as e:  # noqa: BLE001 - a shape left uncaptured is captured lazily (and counted)
                    failed.append(f"({q}, {kv}): {type(e).__name__}: {e}"[:200])
                finally:
                    for fs in states:
                        cache.free_blocks(fs.state.request_id)
        if pairs == 2:
            io.swap_io_pairs()
    torch.cuda.synchronize()
    log.info("graph warm-up: %d batch shapes run (q buckets %s, kv buckets %s, %d IO pairs), %d unreachable, %d failed, in %.1fs",
             done, qs, kvs, pairs, unreachable, len(failed), time.perf_counter() - t0)
    for f in failed[:5]:
        log.warning("graph warm-up failed for %s", f)


class TrainedTokenizer:
    """TrainedTokenizer is the model's own BPE tokenizer (transformers'
    AutoTokenizer over tokenizer.json), prompts rendered with its chat
    template (apply_chat_template)."""

    def __init__(self, model_dir):
        from transformers import AutoTokenizer

        self.tok = AutoTokenizer.from_pretrained(model_dir)
        if not getattr(self.tok, "chat_template", None):
            raise RuntimeError(f"{model_dir}: the tokenizer has no chat template")
        self.chat_template = self.tok.chat_template
        self.name = f"{os.path.basename(os.path.normpath(model_dir))}-bpe{len(self.tok)}"
        ids = lambda t: self.tok.convert_tokens_to_ids(t)  # noqa: E731
        self.eot, self.end_of_text, self.bos = ids(extraction.EOT), ids(extraction.EOS_TEXT), ids(extraction.BOS)
        self.eos_ids = {self.eot, self.end_of_text}
        # The template and extraction.render_chat must agree (train.py trained on the latter);
        # a retrained model's template collapses runs of spaces (CHAT_TEMPLATE_COLLAPSE).
        probe = extraction.messages_for("Nota  fiscal\n  R$ 1.234,56\n")
        collapse = extraction.template_collapses(self.chat_template)
        if self.render(probe) != extraction.render_chat(probe, collapse=collapse):
            raise RuntimeError("the tokenizer's chat template does not render as extraction.render_chat")

    def render(self, messages):
        """render is the prompt text of messages through the chat template."""
        text = self.tok.apply_chat_template(extraction.flat_messages(messages), tokenize=False, add_generation_prompt=True)
        if not isinstance(text, str):  # some versions wrap it
            text = text[0] if isinstance(text, list) else str(text)
        return text

    def encode_chat(self, messages):
        """encode_chat returns the prompt ids of an OpenAI messages list."""
        return self.tok.encode(self.render(messages), add_special_tokens=False)

    def decode(self, ids):
        """decode is the text of ids, special tokens dropped."""
        return self.tok.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)

    def decoder(self):
        """decoder returns a streaming detokenizer for one request."""
        return extraction.StreamDecoder(self.decode)


def load_trained(model_dir, quant="bf16"):
    """load_trained reads a train.py model directory onto the GPU in bf16,
    then quantises its decoder linears (quant.py). Returns (model, facts)."""
    import quant as q
    from transformers import LlamaForCausalLM

    if quant not in QUANT_SCHEMES:
        raise ValueError(f"quantisation {quant!r}: want one of {QUANT_SCHEMES}")
    try:
        model = LlamaForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16)
    except TypeError:
        model = LlamaForCausalLM.from_pretrained(model_dir, torch_dtype=torch.bfloat16)
    model.to(device="cuda", dtype=torch.bfloat16)
    model.eval()
    model.requires_grad_(False)
    params = sum(p.numel() for p in model.parameters())
    replaced = q.quantize_model(model, quant)
    torch.cuda.synchronize()
    return model, {
        "parameters": params,
        "quantized_linears": replaced,
        "weight_bytes_by_dtype": q.weight_bytes_by_dtype(model),
        "quantization": quant,
        "quantization_scheme": q.SCHEMES[quant],
    }


class CBEngine:
    """CBEngine serves one model through a CB manager: a random-weight shape
    (shape=...) or a train.py model directory (model_dir=..., quant=...). The
    server calls submit/cancel on its event loop and stats from anywhere."""

    def __init__(self, shape=None, attn=TORCH_FLASH, sizing=None, model_dir=None, quant="bf16", cap=None):
        if (shape is None) == (model_dir is None):
            raise ValueError("CBEngine: give a shape or a model directory")
        sizing = sizing or Sizing()
        self.cap, self.pool = cap, None
        if cap is not None:  # before the weights, so that they count against the card
            set_cap_fraction(cap.cap_bytes)
        self.captures = capture_counter()
        self.shape, self.attn, self.model_dir = shape, attn, model_dir
        self.max_context = MAX_CONTEXT
        self.notes = []
        self.model_facts = {}
        t0 = time.perf_counter()
        if model_dir is None:
            self.served = SHAPES[shape]["served"]
            self.quant = "bf16"
            self.tokenizer = None
            self.eos_ids = set(tk.EOS_IDS)
            self.model = build_model(shape)
            ids = dict(eos_ids=(tk.EOT,), pad_id=tk.END_OF_TEXT, bos_id=tk.BEGIN_OF_TEXT)
        else:
            self.served = os.path.basename(os.path.normpath(model_dir))
            self.quant = quant
            sums, self.model_sha256 = modeldir.check(model_dir)  # never weights other than the model card's
            self.weights_sha256 = {k: v for k, v in sums.items() if k.endswith(".safetensors")}
            self.tokenizer = TrainedTokenizer(model_dir)
            self.eos_ids = set(self.tokenizer.eos_ids)
            self.model, self.model_facts = load_trained(model_dir, quant)
            ids = dict(eos_ids=(self.tokenizer.eot, self.tokenizer.end_of_text), pad_id=self.tokenizer.end_of_text, bos_id=self.tokenizer.bos)
            if sizing.cuda_graphs:
                install_graph_buckets()
                self.notes.append("graph buckets: every batch shape captured at start-up")
        torch.cuda.synchronize()
        self.build_s = time.perf_counter() - t0
        self.weights_bytes = torch.cuda.memory_allocated()
        if cap is not None:
            sizing = self._size_from_cap(cap, sizing)
        self.attn_kernel = install_torch_flash() if attn == TORCH_FLASH else attn
        self.attn_set_via = set_attention(self.model, attn)
        self._preemptions = _count_preemptions()
        captures0 = self.captures.total()
        try:
            self.manager, self.warmup_s = init_manager(self.model, sizing, **ids)
        except Exception as e:  # noqa: BLE001 - retried once without CUDA graphs
            if sizing.cuda_graphs is not None:
                raise
            self.notes.append(f"CUDA graphs off after: {type(e).__name__}: {e}"[:400])
            log.warning("CB start failed (%s); retrying without CUDA graphs", e)
            sizing = dataclasses.replace(sizing, cuda_graphs=False)
            self.manager, self.warmup_s = init_manager(self.model, sizing, **ids)
        self.startup_captures = self.captures.total() - captures0
        # What the started engine holds beyond the plan (its batch buffers, graph pools): the
        # emulated card's headroom has to hold it.
        torch.cuda.synchronize()
        self.after_start = {"after_start_allocated_bytes": torch.cuda.memory_allocated(),
                            "after_start_reserved_bytes": torch.cuda.memory_reserved(),
                            "start_peak_allocated_bytes": torch.cuda.max_memory_allocated()}
        # The scheduler's admission reserve (results/plan/margin.go, sizing.Inputs.AdmissionReserve):
        # transformers' FIFO scheduler schedules no new prefill while fewer than safety_margin of
        # the blocks are free. Read from the live scheduler where this transformers exposes it.
        reserve = scheduler_reserve(self.manager)
        if reserve is not None:
            self.after_start.update({"admission_reserve": reserve, "scheduler": "transformers' FIFO scheduler: safety_margin as started"})
        self.sizing = sizing
        self._handlers = {}
        if not hasattr(self.manager, "register_result_handler"):
            self._loop = None
            threading.Thread(target=self._route, name="cb-router", daemon=True).start()

    def _size_from_cap(self, cap, sizing):
        """_size_from_cap sizes the KV pool from the emulated card, as a real
        engine from its own: the activation reserve profiled, the memory
        outside PyTorch measured again (cuBLAS is loaded now), the allocator
        capped to the card less it, and the pool what the card's usable
        share leaves (cardcap.plan_pool)."""
        activations = profile_activations(self.model, sizing.max_batch_tokens or MAX_CONTEXT)
        _, outside, total = set_cap_fraction(cap.cap_bytes)
        self.pool = cardcap.plan_pool(cap.cap_bytes, total, outside, self.weights_bytes, activations,
                                      kv_bytes_per_token_of(self.model.config), sizing.block_size, cap.utilisation,
                                      min_tokens=MAX_CONTEXT)
        torch.cuda.set_per_process_memory_fraction(self.pool.torch_fraction)
        self.notes.append(cardcap.label(cap.cap_bytes, cap.card, device=torch.cuda.get_device_name(0)))
        log.info("memory cap: %s", json.dumps(self.pool.as_dict(cap.card)))
        # transformers checks its own memory model against the whole device's free memory times
        # max_memory_percent; under a cap the allocator's limit is the check that counts.
        return dataclasses.replace(sizing, num_blocks=self.pool.num_blocks, max_memory_percent=1.0)

    def cap_info(self):
        """cap_info is the emulated card and its KV pool (cardcap.Pool.as_dict), or None without a cap."""
        if self.pool is None:
            return None
        out = self.pool.as_dict(self.cap.card, device=torch.cuda.get_device_name(0))
        cfg = self.model.config
        out["hf_config"] = {k: getattr(cfg, k, None) for k in cardcap.HF_KEYS}
        out.update(getattr(self, "after_start", {}))
        if self.shape is not None:
            out["calculator_model"] = SHAPES[self.shape]["calculator"]
        return out

    def encode_chat(self, messages):
        """encode_chat returns the prompt ids of an OpenAI messages list: the
        trained tokenizer's chat template, or tokenizer.py for a shape."""
        if self.tokenizer is None:
            return tk.render_chat(messages)
        return self.tokenizer.encode_chat(messages)

    def decoder(self):
        """decoder returns a streaming detokenizer for one request."""
        if self.tokenizer is None:
            return extraction.StreamDecoder(tk.decode)
        return self.tokenizer.decoder()

    def graph_captures(self):
        """graph_captures is CUDA graph captures + compilations since start."""
        return self.captures.total()

    def _route(self):
        # Older managers only have a shared output queue: hand each output to its request's callback.
        while self.manager.is_running():
            out = self.manager.get_result(timeout=0.1)
            if out is None:
                continue
            cb = self._handlers.get(out.request_id)
            if cb is not None and self._loop is not None:
                self._loop.call_soon_threadsafe(cb, out)

    def alive(self):
        """alive reports whether the generation loop still runs."""
        return self.manager.is_running()

    @staticmethod
    def _finished(out):
        f = getattr(out, "is_finished", None)
        if callable(f):
            return bool(f())
        return getattr(getattr(out, "status", None), "name", "") in ("FINISHED", "FAILED")

    def _queue_time(self, rid, out):
        # Engine-side queue time: from add_request (created_time) until the
        # scheduler first took the request out of the waiting queue
        # (lifespan[0]); both are perf_counter stamps in transformers 5.17.
        # Outputs carry them; older versions only keep them on the request state.
        src = out if getattr(out, "lifespan", None) is not None else None
        if src is None:
            try:
                src = self.manager.batch_processor.scheduler.active_requests.get(rid)
            except AttributeError:
                return None
        span = getattr(src, "lifespan", None)
        created = getattr(src, "created_time", None)
        if span and created and span[0] and span[0] > 0:
            return max(0.0, span[0] - created)
        return None

    def submit(self, rid, input_ids, max_new_tokens, on_event):
        """submit queues one request; on_event(Event) runs on the caller's event loop."""
        if not self.alive():
            raise EngineDown("the continuous batching loop has stopped; see the engine log")
        acc, first = [], [True]

        def deliver(out):
            try:
                tokens = list(getattr(out, "generated_tokens", None) or [])
                # Outputs carry every token so far; a list that does not extend
                # what we have is taken as new tokens only.
                new = tokens[len(acc) :] if tokens[: len(acc)] == acc else tokens
                acc.extend(new)
                qt = None
                if first[0]:
                    first[0] = False
                    qt = self._queue_time(rid, out)
                finished = self._finished(out)
                error = getattr(out, "error", None)
            except Exception as e:  # noqa: BLE001 - never leave a client waiting
                log.exception("reading output of %s", rid)
                new, finished, error, qt = [], True, f"engine output unreadable: {e}", None
            if finished:
                self._handlers.pop(rid, None)
            on_event(Event(new, len(acc), finished, error, qt))

        if hasattr(self.manager, "register_result_handler"):
            self.manager.register_result_handler(rid, deliver)
        else:
            import asyncio

            self._loop = asyncio.get_running_loop()
            self._handlers[rid] = deliver
        self.manager.add_request(input_ids=input_ids, request_id=rid, max_new_tokens=max_new_tokens, streaming=True)

    def cancel(self, rid):
        """cancel drops a request whose client went away."""
        self._handlers.pop(rid, None)
        try:
            self.manager.cancel_request(rid)
        except Exception as e:  # noqa: BLE001 - best effort
            log.warning("cancel %s: %s", rid, e)

    def stats(self):
        """stats reads the engine's own scheduler and cache: requests running and
        waiting, and the KV usage fraction as used blocks / total blocks."""
        bp = self.manager.batch_processor
        running = len(bp.scheduler.active_requests)
        waiting = len(bp.scheduler.waiting_requests) + self.manager.input_queue.qsize()
        total = bp.cache.num_blocks
        free = bp.cache.get_num_free_blocks()
        return {
            "running": running,
            "waiting": waiting,
            "kv_usage": (total - free) / total if total else 0.0,
            "preemptions": None if self._preemptions is None else self._preemptions[0],
        }

    def memory(self):
        """memory returns PyTorch's allocator counters in bytes."""
        return {
            "max_allocated": torch.cuda.max_memory_allocated(),
            "max_reserved": torch.cuda.max_memory_reserved(),
            "allocated": torch.cuda.memory_allocated(),
            "reserved": torch.cuda.memory_reserved(),
        }

    def reset_peaks(self):
        """reset_peaks starts PyTorch's peak counters again from the current usage."""
        torch.cuda.reset_peak_memory_stats()

    def info(self):
        """info describes the engine for /version and /v1/models."""
        bp = self.manager.batch_processor
        cfg = self.model.config
        kv_per_token = kv_bytes_per_token_of(cfg)
        cbc = getattr(self.manager, "continuous_batching_config", None)
        out = {
            **versions(),
            "engine": "transformers-continuous-batching",
            "shape": self.shape,
            "served_model": self.served,
            "parameters": self.model_facts.get("parameters") or sum(p.numel() for p in self.model.parameters()),
            "weights_bytes": self.weights_bytes,
            "attn_implementation": self.model.config._attn_implementation,
            "attn_kernel": self.attn_kernel,
            "num_blocks": bp.cache.num_blocks,
            "block_size": bp.cache.block_size,
            "max_batch_tokens": getattr(bp.cache, "max_batch_tokens", None),
            "kv_bytes_per_token": kv_per_token,
            "kv_capacity_tokens": bp.cache.num_blocks * bp.cache.block_size,
            "cuda_graphs": str(getattr(cbc, "use_cuda_graph", self.sizing.cuda_graphs)),
            "async_batching": str(getattr(cbc, "use_async_batching", None)),
            "build_seconds": round(self.build_s, 2),
            "warmup_seconds": round(self.warmup_s, 2),
            "graph_captures_total": self.captures.total(),
            "graph_captures_at_startup": self.startup_captures,
            "max_context": self.max_context,
            "quantization": self.quant,
            "notes": self.notes,
        }
        if self.pool is not None:
            out["memory_cap"] = self.cap_info()
        if self.tokenizer is None:
            out.update(tokenizer=tk.NAME, chat_template=tk.CHAT_TEMPLATE, random_weights=True)
        else:
            out.update(
                model_dir=self.model_dir,
                model_sha256=self.model_sha256,
                weights_sha256=self.weights_sha256,
                tokenizer=self.tokenizer.name,
                chat_template=self.tokenizer.chat_template,
                random_weights=False,
                **{k: v for k, v in self.model_facts.items() if k != "parameters"},
            )
        return out

    def close(self):
        """close stops the generation loop, failing requests still in it."""
        kw = {"hard_stop": True} if "hard_stop" in _accepts(self.manager.stop) else {}
        self.manager.stop(block=True, timeout=10, **kw)  # the runner kills after 15 s
