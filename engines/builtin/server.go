package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Name is how the engine names itself in GET /version: its version is
// "extractbench-builtin <Config.Version>", and the answer says it is
// simulated, so that a run that reaches it by URL (a start: that runs
// `extractbench engine serve`) records it as simulated because it says so.
const Name = "extractbench-builtin"

// DefaultVersion is the version GET /version reports after Name when
// Config.Version is empty.
const DefaultVersion = "dev"

// VersionInfo is the answer of GET /version: the engine's name and version,
// that it is simulated, and the model and card it models.
type VersionInfo struct {
	Version   string     `json:"version"` // Name, a space, Config.Version
	Engine    string     `json:"engine"`  // Name
	Simulated bool       `json:"simulated"`
	Model     string     `json:"model"`
	GPU       VersionGPU `json:"gpu"`
}

// VersionGPU is the card a built-in engine models.
type VersionGPU struct {
	Name             string `json:"name"`
	MemoryTotalBytes int64  `json:"memory_total_bytes"`
}

// Config configures a built-in engine.
type Config struct {
	Profile Profile  // the model and GPU modelled; see LookupProfile
	Models  []string // the names served; empty means Profile.Name
	// Version is extractbench's version, reported by GET /version after
	// Name; empty means DefaultVersion.
	Version string
	Seed    int64 // seeds fault draws (sampling uses the request's seed)
	// Variant names the weight format whose perturbations the answers carry
	// ("bf16", "int8", "int4"); empty means Profile.Dtype.
	Variant string
	// FaultRates injects each fault into that share of documents, drawn per
	// (Seed, document); FaultRules inject a fault into matching documents.
	FaultRates map[Fault]float64
	FaultRules []FaultRule
	// Clock, when set, is the engine clock its modelled time runs on
	// (lockstep.go): every answer then carries its instants on it.
	Clock ModelClock
}

// Server is a built-in engine: an http.Handler over one scheduler goroutine.
// Close stops the scheduler; the owner must call it.
type Server struct {
	cfg     Config
	p       Profile
	variant string
	models  map[string]bool
	mux     *http.ServeMux
	sched   *scheduler
	metrics *metrics
	cancel  context.CancelFunc
	done    chan struct{}
	nextID  atomic.Uint64
	closing sync.Once

	// The protocol sends the same documents dozens of times: reading each
	// once keeps the extractor's CPU off the machine the client shares. A
	// cached answer still costs the time its reading took (cachedRead), so
	// that a document's latency does not depend on whether the engine has
	// seen it: the engine is in steady state from its first request, as the
	// client's steady-state check (eval/steady.go) requires of it.
	cacheMu   sync.Mutex
	cache     map[string]cachedRead
	declCache map[string]cachedDeclared // keyed by the schema's key and the document's hash
	schemas   map[string]*declared      // the declared field sets parsed, by their schema's text
}

// cachedDeclared is one document's reading for a declared field set and
// how long it took.
type cachedDeclared struct {
	rd   reading
	took time.Duration
}

// readDeclared reads doc for the field set d, or returns what an earlier
// request read, after waiting as long as its reading took (as extract).
func (s *Server) readDeclared(doc, hash string, d *declared) reading {
	key := d.key + "/" + hash
	s.cacheMu.Lock()
	c, ok := s.declCache[key]
	s.cacheMu.Unlock()
	if ok {
		time.Sleep(c.took)
		return c.rd
	}
	start := time.Now()
	rd := readDeclared(doc, d)
	took := time.Since(start)
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if s.declCache == nil || len(s.declCache) >= maxCached {
		s.declCache = map[string]cachedDeclared{}
	}
	s.declCache[key] = cachedDeclared{rd, took}
	return rd
}

// cachedRead is one document's extraction and how long it took.
type cachedRead struct {
	ex   Extraction
	took time.Duration
}

// maxCached bounds the extraction cache; it is emptied when full.
const maxCached = 8192

// extract reads doc, or returns what an earlier request read in it.
// A cached document waits as long as its reading took, off the CPU.
func (s *Server) extract(doc, hash string) Extraction {
	s.cacheMu.Lock()
	c, ok := s.cache[hash]
	s.cacheMu.Unlock()
	if ok {
		time.Sleep(c.took)
		return c.ex
	}
	start := time.Now()
	ex := extractDoc(doc)
	took := time.Since(start)
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if s.cache == nil || len(s.cache) >= maxCached {
		s.cache = map[string]cachedRead{}
	}
	s.cache[hash] = cachedRead{ex, took}
	return ex
}

// NewServer validates cfg, starts the scheduler and returns the engine.
func NewServer(cfg Config) (*Server, error) {
	p := cfg.Profile
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("new built-in engine: %w", err)
	}
	for f := range cfg.FaultRates {
		if !validFault(f) {
			return nil, fmt.Errorf("new built-in engine: unknown fault %q", f)
		}
	}
	if len(cfg.Models) == 0 {
		cfg.Models = []string{p.Name}
	}
	variant := cfg.Variant
	if variant == "" {
		variant = p.Dtype
	}
	if _, ok := variantRates[variant]; !ok {
		return nil, fmt.Errorf("new built-in engine: unknown variant %q: want bf16, int8 or int4", variant)
	}
	s := &Server{cfg: cfg, p: p, variant: variant, models: map[string]bool{}, metrics: newMetrics(p), done: make(chan struct{})}
	for _, m := range cfg.Models {
		s.models[m] = true
	}
	s.sched = newScheduler(p, s.metrics, cfg.Clock)
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() {
		defer close(s.done)
		s.sched.run(ctx)
	}()
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	s.mux.HandleFunc("POST /v1/completions", s.handleCompletions)
	s.mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	s.mux.HandleFunc("GET /v1/models", s.handleModels)
	s.mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.VersionInfo())
	})
	s.mux.HandleFunc("GET /metrics", s.handleMetrics)
	s.mux.HandleFunc("POST /reset_peaks", func(w http.ResponseWriter, r *http.Request) {
		s.metrics.resetPeaks()
		w.WriteHeader(http.StatusOK)
	})
	s.mux.HandleFunc("POST "+CacheResetPath, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, cacheResetAnswer)
	})
	return s, nil
}

// CacheResetPath is where the engine is asked to empty its prompt cache
// before a measured pass, as vLLM's /reset_prefix_cache and SGLang's
// /flush_cache are (pipeline/client's cacheResets names it too).
const CacheResetPath = "/reset_prompt_cache"

// cacheResetAnswer is CacheResetPath's answer: the engine computes each
// answer afresh and keeps no prompt cache, so nothing was cached and a
// pass's latency never depends on the one before; the endpoint exists so
// that the reset is exercised end to end.
var cacheResetAnswer = map[string]any{"reset": true, "cached_tokens": 0,
	"detail": "the built-in engine keeps no prompt cache: nothing was cached"}

// ServeHTTP serves the OpenAI-compatible API, /health, /metrics,
// /reset_peaks and CacheResetPath.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// VersionInfo is what GET /version answers.
func (s *Server) VersionInfo() VersionInfo {
	v := s.cfg.Version
	if v == "" {
		v = DefaultVersion
	}
	return VersionInfo{Version: Name + " " + v, Engine: Name, Simulated: true, Model: s.cfg.Models[0],
		GPU: VersionGPU{Name: s.p.GPUName, MemoryTotalBytes: s.p.GPUMemoryBytes}}
}

// Profile returns the profile the engine models.
func (s *Server) Profile() Profile { return s.p }

// Stats returns the scheduler's counters now.
func (s *Server) Stats() Stats { return s.metrics.snapshot() }

// Close stops the scheduler, failing the sequences still in it, and waits for it.
func (s *Server) Close() error {
	s.closing.Do(s.cancel)
	<-s.done
	return nil
}

// ListenAndServe serves on addr (e.g. "127.0.0.1:8000") until ctx is done,
// then shuts down gracefully and closes the scheduler.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return s.serve(ctx, ln)
}

// Serve serves on ln, which the caller opened (so that it can say where
// the engine listens once it does), until ctx is done.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error { return s.serve(ctx, ln) }

func (s *Server) serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.Close()
		return fmt.Errorf("serve built-in engine: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := hs.Shutdown(shutdown)
	s.Close()
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("shut down built-in engine: %w", err)
	}
	return nil
}

// Start runs a built-in engine in-process on a free port of 127.0.0.1 and
// returns its base URL ("http://127.0.0.1:PORT") and a stop function that
// shuts it down and waits for it. The engine also stops when ctx is done.
func Start(ctx context.Context, cfg Config) (url string, stop func() error, err error) {
	s, err := NewServer(cfg)
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.Close()
		return "", nil, fmt.Errorf("start built-in engine: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- s.serve(ctx, ln) }()
	var once sync.Once
	var stopErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			stopErr = <-errc
		})
		return stopErr
	}
	return "http://" + ln.Addr().String(), stop, nil
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	type model struct {
		ID          string  `json:"id"`
		Object      string  `json:"object"`
		Created     int64   `json:"created"`
		OwnedBy     string  `json:"owned_by"`
		Root        string  `json:"root"`
		Parent      *string `json:"parent"`
		MaxModelLen int     `json:"max_model_len"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list"}
	for _, m := range s.cfg.Models {
		list.Data = append(list.Data, model{ID: m, Object: "model", Created: time.Now().Unix(), OwnedBy: "extractbench", Root: m, MaxModelLen: s.p.ContextWindow})
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	if err := s.metrics.write(w); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// maxBody is the largest request body the engine reads: far more than any
// context window it models holds (128k tokens is well under 1 MiB of text).
const maxBody = 16 << 20

// decode reads a JSON request body of at most maxBody bytes. A larger one is
// a prompt that cannot fit the context window, and is answered as such (as
// vLLM answers a prompt over max_model_len), not as a malformed request.
func (s *Server) decode(r *http.Request, v any) *apiError {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxBody))
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return newAPIError(http.StatusBadRequest, "BadRequestError",
				"This model's maximum context length is %d tokens. However, the request body is over %d MiB, far more than fits. Please reduce the length of the messages.",
				s.p.ContextWindow, maxBody>>20)
		}
		return errBadRequest("invalid request body: %v", err)
	}
	return nil
}
