package hostile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Modes that do what a real llama.cpp llama-server (build b1-de3ff81,
// engines/llamacpp/testdata/) does to a client.
const (
	// LlamaCppCloseAfterStream answers every chat request with a complete,
	// well-formed stream in llama.cpp's shape (role chunk, content, finish,
	// usage-only chunk, [DONE]) that says Keep-Alive, and then does not keep
	// the connection: llama-server closes it after every streamed answer
	// (its chunked content provider returns false after done(), which
	// cpp-httplib takes for a cancelled write). Here the close waits for the
	// client's next request on that connection and drops it unanswered, the
	// losing side of the race a real server wins or loses by microseconds,
	// so a client that reuses the connection fails every second request
	// instead of a few in a hundred.
	LlamaCppCloseAfterStream Mode = "llamacpp-close-after-stream"
	// LlamaCppKVExhausted streams a role chunk and the start of an answer,
	// then llama.cpp's in-stream error when the slots' shared KV cells run
	// out (--kv-unified): data: {"error":{"code":500,"message":"Context size
	// has been exceeded.","type":"server_error"}} and the end of the body,
	// no [DONE]. The prompt fitted its slot; the engine ran out of memory.
	LlamaCppKVExhausted Mode = "llamacpp-kv-exhausted"
)

// llamaCppFingerprint is the system_fingerprint of the captured build.
const llamaCppFingerprint = "b1-de3ff81"

// LlamaCppKVExhaustedError is the error event LlamaCppKVExhausted ends with.
const LlamaCppKVExhaustedError = `data: {"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}` + "\n\n"

func init() {
	register(LlamaCppCloseAfterStream, func(s *Server, o Options) http.Handler {
		return Base(s, o, llamacppCloseAfterStream)
	})
	register(LlamaCppKVExhausted, func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			SSEHeaders(w)
			fmt.Fprint(w, llamaCppChunk(map[string]any{"role": "assistant", "content": nil}, nil))
			fmt.Fprint(w, llamaCppChunk(map[string]any{"content": `{"date": "`}, nil))
			Flush(w)
			fmt.Fprint(w, LlamaCppKVExhaustedError)
		})
	})
}

// llamaCppChunk is one chat.completion.chunk event as llama-server writes it.
func llamaCppChunk(delta map[string]any, finish any) string {
	b, _ := json.Marshal(map[string]any{
		"choices": []any{map[string]any{"finish_reason": finish, "index": 0, "delta": delta}},
		"created": 1, "id": "chatcmpl-hostile", "model": Model,
		"system_fingerprint": llamaCppFingerprint, "object": "chat.completion.chunk",
	})
	return "data: " + string(b) + "\n\n"
}

// llamaCppStream is a whole answer's events in llama-server's order.
func llamaCppStream(answer string) []string {
	usage, _ := json.Marshal(map[string]any{
		"choices": []any{}, "created": 1, "id": "chatcmpl-hostile", "model": Model,
		"system_fingerprint": llamaCppFingerprint, "object": "chat.completion.chunk",
		"usage":   map[string]any{"completion_tokens": 12, "prompt_tokens": 10, "total_tokens": 22},
		"timings": map[string]any{"prompt_n": 10, "predicted_n": 12},
	})
	return []string{
		llamaCppChunk(map[string]any{"role": "assistant", "content": nil}, nil),
		llamaCppChunk(map[string]any{"content": answer}, nil),
		llamaCppChunk(map[string]any{}, "stop"),
		"data: " + string(usage) + "\n\n",
		Done,
	}
}

// llamacppCloseAfterStream writes the response itself on the hijacked connection
// (chunked, with llama-server's headers), then closes the connection once
// the client has sent its next request on it, or gone.
func llamacppCloseAfterStream(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body) // nothing of this request may be read as the next one
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "hostile: no hijacking", http.StatusInternalServerError)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	writeLlamaCppStream(buf.Writer, llamaCppStream(Answer))
	if buf.Flush() != nil {
		return
	}
	// The bound keeps a client that neither reuses nor closes the
	// connection from holding this goroutine past its test.
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	buf.Reader.ReadByte()
}

func writeLlamaCppStream(w *bufio.Writer, events []string) {
	w.WriteString("HTTP/1.1 200 OK\r\nServer: llama.cpp\r\nAccess-Control-Allow-Origin: \r\nX-Accel-Buffering: no\r\n" +
		"Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nKeep-Alive: timeout=5, max=100\r\n\r\n")
	for _, ev := range events {
		fmt.Fprintf(w, "%x\r\n%s\r\n", len(ev), ev)
	}
	w.WriteString("0\r\n\r\n")
}
