"""events.py: what an engine delivers to server.py for one request, shared by
the GPU engine (engine.py), the CPU reference (cpu_reference.py) and the
server's tests; no torch or transformers needed to import it."""

import dataclasses


@dataclasses.dataclass
class Event:
    """Event is one delivery from the engine for one request."""

    new_tokens: list  # token ids generated since the previous event
    total: int  # tokens generated so far
    finished: bool
    error: str | None = None
    queue_time: float | None = None  # engine-side wait before scheduling, on the first event when known
