package extractbench

// The canonical metric names: what the telemetry table's metric column holds,
// whatever engine family the figure was read from (each family of
// pipeline/family maps its names onto them). They are vLLM's names, which
// telemetry stored before it read other engines, so older results stay
// readable; the transformers engine's torch_cuda_* names and nvidia-smi's
// memory figure are ours.
const (
	MetricRunning      = "vllm:num_requests_running"
	MetricWaiting      = "vllm:num_requests_waiting"
	MetricKVUsage      = "vllm:kv_cache_usage_perc" // fraction 0-1
	MetricKVTokens     = "kv_cache_used_tokens"     // no vLLM equivalent
	MetricPreemptions  = "vllm:num_preemptions_total"
	MetricTorchAlloc   = "torch_cuda_max_memory_allocated_bytes"
	MetricTorchReserve = "torch_cuda_max_memory_reserved_bytes"
	MetricQueueTime    = "vllm:request_queue_time_seconds"
	MetricTTFT         = "vllm:time_to_first_token_seconds"
	MetricE2E          = "vllm:e2e_request_latency_seconds"
	MetricGPUMemUsed   = "gpu_memory_used_bytes"
	// MetricEngineVRAM and MetricEngineMemory are what an engine says it
	// holds for its loaded models, on the device and in all, where it says
	// so instead of printing Prometheus names (Ollama's /api/ps).
	MetricEngineVRAM   = "engine_vram_bytes"
	MetricEngineMemory = "engine_memory_bytes"
	// MetricCaptures counts the CUDA graphs an engine captured and the
	// kernels it compiled since it started (our transformers engine exports
	// it): a pass during which it grew was not in steady state.
	MetricCaptures = "engine_graph_captures_total"
)
