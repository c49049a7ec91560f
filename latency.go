package extractbench

// The latencies of MEASUREMENT.md section 3, defined once. Each is the time
// from one instant of a request to a later one, and is undefined (ok
// false, stored as NULL, left out of a pass's percentiles) when either
// instant never happened (zero) or the later one comes first: a latency is
// never negative, and a missing instant is never read as the clock's
// origin. results' requests columns (ttft_ns, e2e_ns, e2e_sched_ns,
// client_queue_ns, tpot_ns), the pass percentiles (results.passLatencies,
// in SQL, through SpanSQL) and the report's request table are these
// definitions.

// Span is the time from instant a to instant b, in nanoseconds on the run's
// clock; ok is false when either never happened or b is before a.
func Span(a, b int64) (ns int64, ok bool) {
	if a <= 0 || b <= 0 || b < a {
		return 0, false
	}
	return b - a, true
}

// SpanSQL is Span in SQL over two requests columns: the condition a row
// must meet for the span to be defined (NULL reads as never) and the span.
func SpanSQL(a, b string) (where, value string) {
	return a + " > 0 AND " + b + " > 0 AND " + b + " >= " + a, b + " - " + a
}

// The instants' requests columns, for SpanSQL.
const (
	ColSched      = "sched_ns"
	ColSend       = "send_ns"
	ColFirstToken = "first_token_ns"
	ColLastToken  = "last_token_ns"
	ColDone       = "done_ns"
)

// TTFT is the time to first content token from the send.
func (t *Timings) TTFT() (int64, bool) { return Span(t.SendNS, t.FirstTokenNS) }

// TTFTSched is the time to first content token from the scheduled
// instant: it includes the wait in the client's queue.
func (t *Timings) TTFTSched() (int64, bool) { return Span(t.SchedNS, t.FirstTokenNS) }

// E2E is the time from the send to the last byte (or the failure).
func (t *Timings) E2E() (int64, bool) { return Span(t.SendNS, t.DoneNS) }

// E2ESched is the time from the scheduled instant to the last byte: what a
// user who asked at t_sched waited (coordinated omission included).
func (t *Timings) E2ESched() (int64, bool) { return Span(t.SchedNS, t.DoneNS) }

// ClientQueue is the time from the scheduled instant to the send: how late
// the client was.
func (t *Timings) ClientQueue() (int64, bool) { return Span(t.SchedNS, t.SendNS) }
