"""An offline tokenizer for the random-weight fixture engine.

No tokenizer files can be downloaded, so this one is built from rules. It
cuts text exactly where corpus.ApproxTokens (corpus/tokens.go) counts a
token: a run of letters costs one piece per started 4 letters, a run of
digits one per started 3, a run of line breaks one, a run of one repeated
symbol one per started 8, spaces and tabs glue to the next piece, and every
other rune is a piece of its own. The server's
prompt token counts therefore equal the project's own estimate, which the
corpus generator used to make its long documents 5,500 to 7,500 tokens: the
engine sees the sequence lengths the protocol means to measure.

Each piece maps to an id by CRC-32, so different documents give different
ids (no accidental prefix sharing in the KV cache) and the mapping is the
same on every machine. Decoding cannot invert a hash; it spells every id as
a fixed pseudo-word instead. The model's weights are random, so its answers
are meaningless either way.

The chat layout is Llama 3's, with Llama 3's special-token ids.
"""

import re
import unicodedata
import zlib

VOCAB_SIZE = 128256  # Llama 3 vocabulary, specials included
TEXT_VOCAB = 128000  # ids below this are ordinary text pieces

BEGIN_OF_TEXT = 128000
END_OF_TEXT = 128001
START_HEADER = 128006
END_HEADER = 128007
EOT = 128009  # end of turn: the chat model's end-of-sequence token

EOS_IDS = (EOT, END_OF_TEXT)

LETTERS_PER_TOKEN = 4  # corpus/tokens.go lettersPerToken
DIGITS_PER_TOKEN = 3  # corpus/tokens.go digitsPerToken
SYMBOLS_PER_TOKEN = 8  # corpus/tokens.go symbolsPerToken

NAME = "extractbench-approx-v1"

# CHAT_TEMPLATE is the Jinja form of render_chat, reported to clients so the
# run manifest can pin it.
CHAT_TEMPLATE = (
    "<|begin_of_text|>{% for m in messages %}<|start_header_id|>{{ m['role'] }}"
    "<|end_header_id|>\n\n{{ m['content'] }}<|eot_id|>{% endfor %}"
    "<|start_header_id|>assistant<|end_header_id|>\n\n"
)

_CONSONANTS = "bcdfghjklmnprstv"
_VOWELS = "aeiou"


# _RUN_RE cuts text into runs that are cheap to classify; any rune it does not
# know (other scripts, symbols, combining marks) comes alone and goes through
# _kind, so the result equals a rune-by-rune scan at a fraction of the cost.
_RUN_RE = re.compile(r"[A-Za-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u024F]+|[0-9]+|[\n\r]+|[ \t]+|.", re.S)
_GO_NOT_SPACE = "\x1c\x1d\x1e\x1f"  # Python calls these spaces, Go's unicode.IsSpace does not


def _kind(ch):
    """_kind classifies one rune as corpus/tokens.go does: L letter, D digit,
    N line break, S space, W a wide letter, O a symbol."""
    if ch in "\n\r":
        return "N"
    if "0" <= ch <= "9":
        return "D"
    if ch.isalpha():
        return "W" if ord(ch) >= 0x2E80 else "L"  # Han, kana, Hangul: a token a character
    if unicodedata.category(ch) == "Mn":
        return "L"  # combining marks stay inside the word
    if ch.isspace() and ch not in _GO_NOT_SPACE:
        return "S"
    return "O"


def pieces(text):
    """pieces splits text into the token pieces corpus.ApproxTokens counts."""
    out = []
    run, run_kind = [], None  # the current letter or digit run
    pending = ""  # spaces waiting to glue onto the next piece
    newline = False
    punct, prun = None, 0  # the previous symbol and its run length, for runs like "....."

    def flush():
        nonlocal run, run_kind, pending
        if run:
            size = LETTERS_PER_TOKEN if run_kind == "L" else DIGITS_PER_TOKEN
            s = "".join(run)
            for i in range(0, len(s), size):
                out.append(pending + s[i : i + size])
                pending = ""
        run, run_kind = [], None

    for m in _RUN_RE.finditer(text):
        seg = m.group()
        c = seg[0]
        if len(seg) > 1 or c.isascii() or "\u00C0" <= c <= "\u024F" and c not in "\u00D7\u00F7":
            k = "N" if c in "\n\r" else "D" if "0" <= c <= "9" else "S" if c in " \t" else "L" if c.isalpha() else _kind(c)
        else:
            k = _kind(c)
        if k == "O":
            flush()
            if seg == punct and prun % SYMBOLS_PER_TOKEN != 0:
                out[-1] += seg  # a run of one repeated symbol is a token per 8
                prun += 1
                continue
            if seg != punct:
                prun = 0
            punct, prun = seg, prun + 1
            out.append(pending + seg)
            pending = ""
            newline = False
            continue
        punct, prun = None, 0
        if k == "L" or k == "D":
            if run_kind != k:
                flush()
                run_kind = k
            run.append(seg)
            newline = False
        elif k == "N":
            flush()
            if newline:
                out[-1] += seg
            else:
                out.append(pending + seg)
                pending = ""
            newline = True
        elif k == "S":
            flush()
            pending += seg
            newline = False
        else:  # W
            flush()
            out.append(pending + seg)
            pending = ""
            newline = False
    flush()
    return out


def piece_id(piece):
    """piece_id is the token id of one piece: its CRC-32 folded into the text vocabulary."""
    return zlib.crc32(piece.encode("utf-8")) % TEXT_VOCAB


def encode(text):
    """encode returns the token ids of text (no special tokens)."""
    return [piece_id(p) for p in pieces(text)]


def count(text):
    """count returns len(encode(text)) without hashing."""
    return len(pieces(text))


def spell(token_id):
    """spell is the text of one generated token: a pseudo-word fixed by its id, empty for specials."""
    if token_id < 0 or token_id >= TEXT_VOCAB:
        return ""
    n = token_id
    c1, n = _CONSONANTS[n % 16], n // 16
    v1, n = _VOWELS[n % 5], n // 5
    c2, n = _CONSONANTS[n % 16], n // 16
    v2, n = _VOWELS[n % 5], n // 5
    lead = "" if n % 5 == 0 else " "  # most pieces start a word, as in English text
    return lead + c1 + v1 + c2 + v2[: 1 + n % 2]


def decode(ids):
    """decode returns the text of ids, dropping special tokens."""
    return "".join(spell(i) for i in ids)


def render_chat(messages):
    """render_chat returns the prompt ids of an OpenAI messages list in Llama 3's chat layout.

    Content may be a string or a list of {"type": "text", "text": ...} parts.
    """
    ids = [BEGIN_OF_TEXT]
    for m in messages:
        content = m.get("content") or ""
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        ids.append(START_HEADER)
        ids.extend(encode(str(m.get("role", "user"))))
        ids.append(END_HEADER)
        ids.extend(encode("\n\n" + content))
        ids.append(EOT)
    ids.append(START_HEADER)
    ids.extend(encode("assistant"))
    ids.append(END_HEADER)
    ids.extend(encode("\n\n"))
    return ids
