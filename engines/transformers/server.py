#!/usr/bin/env python3
"""An OpenAI-compatible server over transformers' continuous batching, the
real-GPU engine extractbench measures on an H200.

Endpoints: POST /v1/chat/completions (streaming with vLLM's final usage chunk,
or a plain JSON answer), GET /health, GET /v1/models, GET /version,
GET /metrics (Prometheus text with vLLM's metric names plus PyTorch's peak
memory counters) and POST /reset_peaks (the runner calls it at each pass).

The model is either a real architecture's shape with random weights
(--shape: timing and memory are real, the answers meaningless) or a model
trained by train.py (--model DIR, served under the directory's name, with its
own tokenizer and chat template), in bf16 or quantised (--quant fp8|int8,
quant.py). The port opens only once the model is built and the batching
manager warmed up: the runner's load time is the time until /health answers.

    python3 engines/transformers/server.py --shape 8b --port 8000
    python3 engines/transformers/server.py --model engines/transformers/model/extract-llama-15m --quant fp8 --port 8000

--cpu serves a trained model through cpu_reference.py instead (no GPU, no
transformers): float32 on the CPU, one request at a time, for its answers.
"""

import argparse
import asyncio
import json
import logging
import os
import sys
import time
import uuid

from aiohttp import web

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tokenizer as tk  # noqa: E402

log = logging.getLogger("server")

# vLLM's histogram buckets for the same metrics.
QUEUE_BUCKETS = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0]
TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0]


class Histogram:
    """Histogram is a Prometheus histogram kept in process."""

    def __init__(self, name, help_text, buckets):
        self.name, self.help, self.buckets = name, help_text, buckets
        self.counts = [0] * len(buckets)
        self.sum, self.count = 0.0, 0

    def observe(self, v):
        """observe adds one value."""
        self.sum += v
        self.count += 1
        for i, b in enumerate(self.buckets):
            if v <= b:
                self.counts[i] += 1

    def lines(self, labels):
        """lines returns the exposition lines."""
        out = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        for b, c in zip(self.buckets, self.counts):
            out.append(f'{self.name}_bucket{{{labels},le="{b}"}} {c}')
        out.append(f'{self.name}_bucket{{{labels},le="+Inf"}} {self.count}')
        out.append(f"{self.name}_sum{{{labels}}} {self.sum}")
        out.append(f"{self.name}_count{{{labels}}} {self.count}")
        return out


def context_error(prompt_tokens, max_tokens, max_context):
    """context_error is vLLM's 400 body for a request longer than the context."""
    total = prompt_tokens + max_tokens
    return {
        "object": "error",
        "message": (
            f"This model's maximum context length is {max_context} tokens. However, you requested {total} tokens "
            f"({prompt_tokens} in the messages, {max_tokens} in the completion). "
            "Please reduce the length of the messages or completion."
        ),
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }


def error_body(status, message, kind):
    """error_body is the error object vLLM answers with."""
    return {"object": "error", "message": message, "type": kind, "param": None, "code": status}


class _StatelessDecoder:
    """_StatelessDecoder decodes each delivery on its own (tokenizer.py spells
    every id as a whole word, so nothing is ever held back)."""

    def __init__(self, decode):
        self._decode = decode

    def feed(self, ids):
        return self._decode(ids)

    def flush(self):
        return ""


class Server:
    """Server holds the engine and the counters the endpoints report."""

    def __init__(self, engine):
        self.engine = engine
        # A trained model tokenizes through its own chat template; a random-weight
        # shape (and the tests' scripted engine) through tokenizer.py.
        self.encode = getattr(engine, "encode_chat", None) or tk.render_chat
        self.decoder = getattr(engine, "decoder", None) or (lambda: _StatelessDecoder(tk.decode))
        self.started = int(time.time())
        self.queue_time = Histogram("vllm:request_queue_time_seconds", "Time spent waiting in the engine's queue.", QUEUE_BUCKETS)
        self.ttft = Histogram("vllm:time_to_first_token_seconds", "Time from arrival to the first generated token.", TTFT_BUCKETS)
        self.e2e = Histogram("vllm:e2e_request_latency_seconds", "Time from arrival to the last token.", QUEUE_BUCKETS)
        self.prompt_tokens = 0
        self.generation_tokens = 0
        self.finished = {}

    def app(self):
        """app returns the aiohttp application."""
        a = web.Application(client_max_size=64 * 1024 * 1024)
        a.router.add_post("/v1/chat/completions", self.chat)
        a.router.add_get("/health", self.health)
        a.router.add_get("/v1/models", self.models)
        a.router.add_get("/version", self.version)
        a.router.add_get("/metrics", self.metrics)
        a.router.add_post("/reset_peaks", self.reset_peaks)
        return a

    async def health(self, request):
        if not self.engine.alive():
            return web.json_response(error_body(503, "generation loop stopped", "ServiceUnavailable"), status=503)
        return web.Response(text="")

    async def models(self, request):
        info = self.engine.info()
        card = {
            "id": self.engine.served,
            "object": "model",
            "created": self.started,
            "owned_by": "extractbench",
            "root": self.engine.served,
            "max_model_len": self.engine.max_context,
            "engine_version": f"transformers {info['transformers']}, torch {info['torch']}",
        }
        return web.json_response({"object": "list", "data": [card]})

    async def version(self, request):
        info = self.engine.info()
        return web.json_response({"version": f"transformers-{info['transformers']}+torch-{info['torch']}", **info})

    async def reset_peaks(self, request):
        self.engine.reset_peaks()
        return web.json_response({"reset": True, **self.engine.memory()})

    async def metrics(self, request):
        labels = f'model_name="{self.engine.served}"'
        try:
            st = self.engine.stats()
        except Exception:  # noqa: BLE001 - still serve the counters we have
            log.exception("engine stats")
            st = {}
        out = []

        def gauge(name, help_text, value, kind="gauge", lab=labels):
            sample = f"{name}{{{lab}}} {value}" if lab else f"{name} {value}"
            out.extend([f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", sample])

        if st:
            gauge("vllm:num_requests_running", "Requests in the engine's running batch.", st["running"])
            gauge("vllm:num_requests_waiting", "Requests waiting for the engine to schedule them.", st["waiting"])
            gauge("vllm:kv_cache_usage_perc", "KV cache usage, used blocks over total blocks (1 = full).", st["kv_usage"])
        if st.get("preemptions") is not None:
            gauge("vllm:num_preemptions_total", "Running requests evicted to free KV blocks.", st["preemptions"], "counter")
        gauge("vllm:prompt_tokens_total", "Prompt tokens of admitted requests.", self.prompt_tokens, "counter")
        gauge("vllm:generation_tokens_total", "Generated tokens.", self.generation_tokens, "counter")
        if self.finished:
            # One HELP and TYPE for the family, then a sample per reason: a second TYPE line
            # for a name makes Prometheus's text parser refuse the whole page.
            out.extend(["# HELP vllm:request_success_total Finished requests by reason.", "# TYPE vllm:request_success_total counter"])
            out.extend(f'vllm:request_success_total{{{labels},finished_reason="{reason}"}} {n}' for reason, n in sorted(self.finished.items()))
        for h in (self.queue_time, self.ttft, self.e2e):
            out.extend(h.lines(labels))
        captures = getattr(self.engine, "graph_captures", None)
        if captures is not None:
            gauge(
                "engine_graph_captures_total",
                "CUDA graph captures plus torch.compile compilations since the engine started (a measured pass must not add any).",
                captures(),
                "counter",
                lab="",
            )
        quant = getattr(self.engine, "quant", None)
        if quant is not None:
            gauge("engine_quantization_info", "The served weights' quantisation scheme (value always 1).", 1, lab=f'{labels},quantization="{quant}"')
        cap_info = getattr(self.engine, "cap_info", None)
        cap = cap_info() if cap_info else None
        if cap:
            # An emulated card (--memory-cap-gib): its size and the KV pool sized from it, labelled.
            card = cap["label"].replace('"', "'")
            gauge("engine_memory_cap_bytes", "The emulated card's memory (the engine's allocator is capped to it).", cap["cap_bytes"],
                  lab=f'{labels},card="{card}"')
            gauge("engine_kv_cache_blocks", "KV cache blocks the engine sized from its card.", cap["num_blocks"], lab=labels)
            gauge("engine_kv_cache_capacity_tokens", "Tokens the KV cache holds.", cap["kv_capacity_tokens"], lab=labels)
        mem = self.engine.memory()
        if mem:
            # Peaks since the last POST /reset_peaks; allocated and reserved are separate figures, never summed.
            gauge("torch_cuda_max_memory_allocated_bytes", "Peak bytes PyTorch allocated.", mem["max_allocated"], lab="")
            gauge("torch_cuda_max_memory_reserved_bytes", "Peak bytes PyTorch's allocator reserved.", mem["max_reserved"], lab="")
            gauge("torch_cuda_memory_allocated_bytes", "Bytes PyTorch has allocated now.", mem["allocated"], lab="")
            gauge("torch_cuda_memory_reserved_bytes", "Bytes PyTorch's allocator reserves now.", mem["reserved"], lab="")
        text = "\n".join(out) + "\n"
        return web.Response(text=text, content_type="text/plain", charset="utf-8")

    async def chat(self, request):
        arrival = time.perf_counter()
        try:
            body = await request.json()
            messages = body["messages"]
            if not isinstance(messages, list):
                raise TypeError("messages must be a list")
        except (ValueError, KeyError, TypeError) as e:
            return web.json_response(error_body(400, f"bad request: {e}", "BadRequestError"), status=400)
        try:
            ids = self.encode(messages)
        except Exception as e:  # noqa: BLE001 - a template error is the client's message shape
            return web.json_response(error_body(400, f"bad messages: {e}", "BadRequestError"), status=400)
        ctx = self.engine.max_context
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
        if max_tokens is None:
            max_tokens = max(ctx - len(ids), 1)  # vLLM's default: the rest of the context
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            return web.json_response(error_body(400, "max_tokens must be a positive integer", "BadRequestError"), status=400)
        if len(ids) + max_tokens > ctx:
            return web.json_response(context_error(len(ids), max_tokens, ctx), status=400)
        stream = bool(body.get("stream", False))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage", False))

        rid = f"chatcmpl-{uuid.uuid4().hex}"
        events = asyncio.Queue()
        try:
            self.engine.submit(rid, ids, max_tokens, events.put_nowait)
        except Exception as e:  # noqa: BLE001 - EngineDown and anything the manager raises
            return web.json_response(error_body(503, f"engine unavailable: {e}", "ServiceUnavailable"), status=503)
        self.prompt_tokens += len(ids)
        created = int(time.time())
        model = body.get("model") or self.engine.served

        def chunk(delta, finish=None):
            return {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            }

        resp = None
        if stream:
            resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
            await resp.prepare(request)

        async def send(obj):
            await resp.write(b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n")

        done = False
        text, total, last, error = [], 0, None, None
        first = True
        decoder = self.decoder()
        try:
            if stream:
                await send(chunk({"role": "assistant", "content": ""}))
            while not done:
                ev = await events.get()
                if first and (ev.new_tokens or ev.finished):
                    first = False
                    self.ttft.observe(time.perf_counter() - arrival)
                    if ev.queue_time is not None:
                        self.queue_time.observe(ev.queue_time)
                piece = decoder.feed(ev.new_tokens)
                if ev.finished and not ev.error:
                    piece += decoder.flush()
                if ev.new_tokens:
                    last = ev.new_tokens[-1]
                total, done, error = ev.total, ev.finished, ev.error
                self.generation_tokens += len(ev.new_tokens)
                if error:
                    break
                text.append(piece)
                if stream and piece:
                    await send(chunk({"content": piece}))
            if error:
                self.finished["abort"] = self.finished.get("abort", 0) + 1
                if stream:
                    await send({"error": error_body(500, str(error), "InternalServerError")})
                    await resp.write(b"data: [DONE]\n\n")
                    return resp
                return web.json_response(error_body(500, str(error), "InternalServerError"), status=500)
            reason = "stop" if last in self.engine.eos_ids or total < max_tokens else "length"
            self.finished[reason] = self.finished.get(reason, 0) + 1
            self.e2e.observe(time.perf_counter() - arrival)
            usage = {"prompt_tokens": len(ids), "completion_tokens": total, "total_tokens": len(ids) + total}
            if not stream:
                return web.json_response(
                    {
                        "id": rid,
                        "object": "chat.completion",
                        "created": created,
                        "model": model,
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": "".join(text)}, "logprobs": None, "finish_reason": reason}
                        ],
                        "usage": usage,
                    }
                )
            await send(chunk({}, reason))
            if include_usage:
                await send({"id": rid, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [], "usage": usage})
            await resp.write(b"data: [DONE]\n\n")
            return resp
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        finally:
            if not done:
                self.engine.cancel(rid)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shape", choices=["8b", "1b"], help="architecture whose shape a random-weight model copies (default 8b when no --model)")
    p.add_argument("--model", help="a train.py model directory (config, safetensors, tokenizer, SHA256SUMS); served under its directory name")
    p.add_argument("--quant", choices=["bf16", "fp8", "int8"], default="bf16", help="weights of the trained model's decoder linears (quant.py)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--attn", default="torch_flash_varlen", help="attention: torch_flash_varlen (PyTorch's flash kernel), sdpa or eager")
    p.add_argument("--block-size", type=int, default=256, help="KV cache block size in tokens")
    p.add_argument("--num-blocks", type=int, default=None, help="KV cache blocks (default: sized from --max-memory)")
    p.add_argument("--max-batch-tokens", type=int, default=8192, help="tokens per forward step (prefill chunk budget)")
    p.add_argument("--max-memory", type=float, default=0.9, help="fraction of GPU memory the CB manager may size itself to")
    p.add_argument("--memory-cap-gib", type=float, default=None,
                   help="emulate a card of this many GiB: PyTorch's allocator capped to it and the KV pool sized from it (cardcap.py); memory only, bandwidth and compute stay the device's")
    p.add_argument("--memory-cap-fraction", type=float, default=None, help="the same as a share of the device's memory")
    p.add_argument("--card", default=None, help="the emulated card's name in every label (default: the catalog card of that size, cardcap.CARDS)")
    p.add_argument("--utilisation", type=float, default=None,
                   help="with a cap: the share of the card the engine sizes itself to (default 0.90, vLLM's and the calculator's)")
    p.add_argument("--dry", action="store_true",
                   help="serve dryengine.py instead: a tiny random model in plain Python on the CPU with a paged KV pool sized from the cap (no torch): proves the memory-boundary scripts end to end")
    p.add_argument("--dry-weights-mib", type=float, default=None, help="with --dry: the fake model's weights in MiB (default: its shape's parameters in bf16)")
    p.add_argument("--dry-step-ms", type=float, default=None, help="with --dry: the time one engine step takes (default dryengine.DEFAULT_STEP_MS)")
    p.add_argument("--cpu", action="store_true",
                   help="serve the --model through cpu_reference.py: float32 on the CPU, one request at a time, no GPU, torch and regex only (its answers, not its speed)")
    p.add_argument("--cuda-graphs", choices=["auto", "on", "off"], default="auto",
                   help="auto: transformers' default for a random-weight shape, off for a trained model (see README: no capture inside a measured pass)")
    args = p.parse_args(argv)
    if args.model and args.shape:
        p.error("--model and --shape exclude each other")
    if not args.model and not args.shape:
        args.shape = "8b"
    if args.quant != "bf16" and not args.model:
        p.error("--quant needs --model (random-weight shapes are bf16)")
    if args.cpu and (not args.model or args.quant != "bf16"):
        p.error("--cpu needs --model and serves its bf16 weights (widened to float32)")
    if args.memory_cap_gib is not None and args.memory_cap_fraction is not None:
        p.error("--memory-cap-gib and --memory-cap-fraction exclude each other")
    if args.cpu and (args.memory_cap_gib is not None or args.memory_cap_fraction is not None):
        p.error("--cpu has no device memory to cap")
    if args.utilisation is not None and not 0 < args.utilisation <= 1:
        p.error(f"--utilisation {args.utilisation}: want a share above 0, at most 1")
    return args


def cap_of(args, device_total=None):
    """cap_of is the emulated card the flags ask for (engine.Cap's fields as
    a dict), or None."""
    import cardcap

    if args.memory_cap_fraction is not None and device_total is None:
        import torch

        device_total = torch.cuda.mem_get_info()[1]
    try:
        b = cardcap.parse_cap(args.memory_cap_gib, args.memory_cap_fraction, device_total)
    except cardcap.CapError as e:
        raise SystemExit(f"server.py: {e}")
    if b is None:
        return None
    return dict(cap_bytes=b, utilisation=args.utilisation or cardcap.DEFAULT_UTILISATION, card=args.card)


def sizing_of(args, eng):
    """sizing_of is the CB sizing the flags ask for, with a trained model's defaults."""
    graphs = {"auto": None, "on": True, "off": False}[args.cuda_graphs]
    num_blocks = args.num_blocks
    if args.model:
        if graphs is None:
            graphs = eng.TRAINED_CUDA_GRAPHS
        if num_blocks is None:
            num_blocks = eng.TRAINED_NUM_BLOCKS
    return eng.Sizing(
        block_size=args.block_size,
        num_blocks=num_blocks,
        max_batch_tokens=args.max_batch_tokens,
        max_memory_percent=args.max_memory,
        cuda_graphs=graphs,
    )


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    t0 = time.perf_counter()
    if args.dry:
        import dryengine

        engine = dryengine.DryEngine(cap_of(args, dryengine.DEVICE_TOTAL_BYTES), block_size=args.block_size,
                                     max_batch_tokens=args.max_batch_tokens, weights_mib=args.dry_weights_mib,
                                     step_ms=args.dry_step_ms, served=dryengine.served_name(args))
    elif args.cpu:
        import cpu_reference

        engine = cpu_reference.CPUEngine(args.model)
    else:
        import engine as eng

        cap = cap_of(args)
        engine = eng.CBEngine(args.shape, attn=args.attn, sizing=sizing_of(args, eng), model_dir=args.model, quant=args.quant,
                              cap=eng.Cap(**cap) if cap else None)
    info = engine.info()
    log.info("ready in %.1fs: %s", time.perf_counter() - t0, json.dumps({k: v for k, v in info.items() if k != "chat_template"}))
    app = Server(engine).app()

    async def close_engine(_app):
        engine.close()

    app.on_cleanup.append(close_engine)
    try:
        web.run_app(app, host=args.host, port=args.port, access_log=None, print=None)
    finally:
        # The manager's generation thread is not a daemon: exit even if it did not stop.
        logging.shutdown()
        os._exit(0)


if __name__ == "__main__":
    main()
