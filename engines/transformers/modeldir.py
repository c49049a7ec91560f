"""modeldir.py: a train.py model directory's SHA256SUMS, written, checked and
named, for train.py, engine.py and cpu_reference.py; plain Python (no torch).

The sha256 of SHA256SUMS itself is the model's name in every record
(/version's model_sha256, the training log's init, the CPU reference's JSON):
one hash that covers weights, tokenizer and config."""

import hashlib
import os

SUMS = "SHA256SUMS"


def file_sha256(path):
    """file_sha256 is the hex sha256 of a file."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_sums(out, exclude=(SUMS, "training-log.json")):
    """write_sums writes SHA256SUMS (sha256sum's format) for every file of
    out but those excluded, and returns its lines."""
    lines = []
    for name in sorted(os.listdir(out)):
        p = os.path.join(out, name)
        if name in exclude or not os.path.isfile(p):
            continue
        lines.append(f"{file_sha256(p)}  {name}")
    with open(os.path.join(out, SUMS), "w") as f:
        f.write("\n".join(lines) + "\n")
    return lines


def model_sha256(model_dir):
    """model_sha256 is the sha256 of model_dir's SHA256SUMS: the name of the
    weights, tokenizer and config it lists (not a check that they match)."""
    with open(os.path.join(model_dir, SUMS), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def verify(model_dir):
    """verify checks every file SHA256SUMS lists against its hash and returns
    (sums {name: sha256}, model_sha256). A mismatch raises ValueError naming
    the file; a missing SHA256SUMS or listed file raises FileNotFoundError."""
    with open(os.path.join(model_dir, SUMS), "rb") as f:
        raw = f.read()
    sums = {}
    path = os.path.join(model_dir, SUMS)
    for n, line in enumerate(raw.decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split(maxsplit=1)
        if len(parts) != 2 or len(parts[0]) != 64:
            raise ValueError(f"{path}:{n}: not a sha256sum line (want 64 hex digits, two spaces, a file name): {line[:80]!r}")
        digest, name = parts
        name = name.lstrip("*").strip()
        got = file_sha256(os.path.join(model_dir, name))
        if got != digest:
            raise ValueError(f"{name} does not match its SHA256SUMS line (sha256 {got}, listed {digest})")
        sums[name] = digest
    return sums, hashlib.sha256(raw).hexdigest()


def check(model_dir):
    """check is verify for what serves a model (engine.py, cpu_reference.py):
    a mismatch raises RuntimeError naming the directory and the file, so that
    nothing answers for weights other than the ones model_sha256 names."""
    try:
        return verify(model_dir)
    except ValueError as e:
        raise RuntimeError(f"{model_dir}: {e}") from None


def missing(model_dir):
    """missing lists the files every train.py model directory has
    (config.json, tokenizer.json, SHA256SUMS) that model_dir lacks."""
    return [n for n in ("config.json", "tokenizer.json", SUMS) if not os.path.isfile(os.path.join(model_dir, n))]
