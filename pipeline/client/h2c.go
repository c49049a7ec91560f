package client

import "strings"

// h2Frames is how net/http quotes a response that opens with an HTTP/2
// frame header (three bytes of length, the first two zero for a short
// frame): an HTTP/2-only server answering an HTTP/1.1 request.
const h2Frames = `malformed HTTP response "\x00\x00`

// h2cHint is the sentence that explains err when the engine answered in
// HTTP/2 frames, "" otherwise: extractbench speaks HTTP/1.1 to a http://
// URL, and an engine (or a proxy in front of it) that speaks only
// cleartext HTTP/2 (h2c) cannot be measured until it also speaks HTTP/1.1.
func h2cHint(err error) string {
	if err == nil || !strings.Contains(err.Error(), h2Frames) {
		return ""
	}
	return " (the engine answered with HTTP/2 frames: it speaks only cleartext HTTP/2 (h2c), and extractbench speaks HTTP/1.1; enable HTTP/1.1 on the engine or the proxy in front of it)"
}
