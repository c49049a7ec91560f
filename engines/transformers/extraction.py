"""The extraction task as the trained model sees it, in plain Python (no torch):
the protocol's prompt, the chat layout, the answer the model is trained to
give, and a scorer that applies extractbench's rules (MEASUREMENT.md section 7,
eval/parse.go and eval/fields.go) so evaluate.py and train.py can judge
answers in process.

The chat layout is Llama 3's. CHAT_TEMPLATE is its Jinja form, saved in the
model's tokenizer_config.json; render_chat is the same function in Python, and
a test checks that the two agree, so the prompts train.py trains on are the
prompts server.py builds with tokenizer.apply_chat_template.
"""

import json
from decimal import Decimal, InvalidOperation

# The protocols' prompt (pipeline/protocol/default-protocol.yaml, protocol-*.yaml), verbatim.
SYSTEM = "You extract fields from business documents. Answer with JSON only."
USER = (
    "Extract date (issue date, YYYY-MM-DD), amount (total due, a JSON number) and category (one of: utilities, telecom, software, "
    "office_supplies, travel, meals, rent, professional_services, taxes, healthcare). Use null for a field the document lacks. "
    "Answer with one JSON object with the keys date, amount and category.\n\n{{document}}"
)

CATEGORIES = (
    "utilities",
    "telecom",
    "software",
    "office_supplies",
    "travel",
    "meals",
    "rent",
    "professional_services",
    "taxes",
    "healthcare",
)

BOS = "<|begin_of_text|>"
EOS_TEXT = "<|end_of_text|>"  # also the padding token
START_HEADER = "<|start_header_id|>"
END_HEADER = "<|end_header_id|>"
EOT = "<|eot_id|>"  # end of turn: what the model emits after its answer
SPECIAL_TOKENS = [BOS, EOS_TEXT, START_HEADER, END_HEADER, EOT]

# CHAT_TEMPLATE renders messages exactly as render_chat does.
CHAT_TEMPLATE = (
    "<|begin_of_text|>"
    "{% for message in messages %}"
    "<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n{{ message['content'] }}<|eot_id|>"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"
)


# COLLAPSE_PASSES: each replace('  ', ' ') halves a run of spaces (rounding up),
# so ten bring any run of up to 1,024 spaces to one.
COLLAPSE_PASSES = 10

# CHAT_TEMPLATE_COLLAPSE is the retrained model's template (bpe_train.py's
# "llamacpp" tokenizer, which has no normalizer): each message's content with
# its tabs made spaces and its runs of spaces collapsed to one, in the
# template, where transformers' apply_chat_template, cpu_reference.py and
# llama.cpp (the GGUF carries the template) all run it the same way.
# render_chat(collapse=True) is the same in Python.
CHAT_TEMPLATE_COLLAPSE = CHAT_TEMPLATE.replace(
    "{{ message['content'] }}",
    "{{ message['content'] | replace('\t', ' ')" + " | replace('  ', ' ')" * COLLAPSE_PASSES + " }}",
)


def collapse_spaces(text):
    """collapse_spaces is CHAT_TEMPLATE_COLLAPSE's filter chain in Python."""
    text = text.replace("\t", " ")
    for _ in range(COLLAPSE_PASSES):
        text = text.replace("  ", " ")
    return text


def template_collapses(template):
    """template_collapses says whether a model's chat template is
    CHAT_TEMPLATE_COLLAPSE (True) or CHAT_TEMPLATE (False); any other
    template is an error, since render_chat could not reproduce it."""
    if template == CHAT_TEMPLATE_COLLAPSE:
        return True
    if template == CHAT_TEMPLATE:
        return False
    raise ValueError(f"chat template {template!r} is neither extraction.CHAT_TEMPLATE nor CHAT_TEMPLATE_COLLAPSE")


def content_text(content):
    """content_text flattens an OpenAI message content (a string, or a list of
    {"type": "text", "text": ...} parts) to a string."""
    if content is None:
        return ""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def flat_messages(messages):
    """flat_messages returns messages as {"role", "content"} dicts with string content."""
    return [{"role": str(m.get("role", "user")), "content": content_text(m.get("content"))} for m in messages]


def render_chat(messages, add_generation_prompt=True, collapse=False):
    """render_chat is CHAT_TEMPLATE in Python (collapse: CHAT_TEMPLATE_COLLAPSE):
    the prompt text of messages."""
    out = [BOS]
    for m in flat_messages(messages):
        content = collapse_spaces(m["content"]) if collapse else m["content"]
        out.append(f"{START_HEADER}{m['role']}{END_HEADER}\n\n{content}{EOT}")
    if add_generation_prompt:
        out.append(f"{START_HEADER}assistant{END_HEADER}\n\n")
    return "".join(out)


def messages_for(document, system=SYSTEM, user=USER):
    """messages_for is what extractbench sends for one document."""
    return [{"role": "system", "content": system}, {"role": "user", "content": user.replace("{{document}}", document)}]


def prompt_text(document, system=SYSTEM, user=USER, collapse=False):
    """prompt_text is the full prompt of one document, generation header included."""
    return render_chat(messages_for(document, system, user), collapse=collapse)


def render_answer(expected):
    """render_answer is the answer the model is trained to give for an
    expectation {"date": "YYYY-MM-DD"|None, "amount": "1234.56"|None,
    "category": str|None}: one JSON object, amount a JSON number written with
    the expectation's own digits, null for a missing field."""
    date, amount, category = expected.get("date"), expected.get("amount"), expected.get("category")
    if amount is not None:
        amount = str(amount)
        Decimal(amount)  # refuses anything that is not a number
        if not _json_number(amount):
            raise ValueError(f"amount {amount!r} is not a JSON number")
    parts = [
        '"date": ' + (json.dumps(date) if date is not None else "null"),
        '"amount": ' + (amount if amount is not None else "null"),
        '"category": ' + (json.dumps(category) if category is not None else "null"),
    ]
    return "{" + ", ".join(parts) + "}"


def _json_number(s):
    """_json_number checks RFC 8259's number grammar."""
    i, n = 0, len(s)
    if i < n and s[i] == "-":
        i += 1
    start = i
    while i < n and s[i].isascii() and s[i].isdigit():
        i += 1
    if i == start or (i - start > 1 and s[start] == "0"):
        return False
    if i < n and s[i] == ".":
        i += 1
        f = i
        while i < n and s[i].isascii() and s[i].isdigit():
            i += 1
        if i == f:
            return False
    if i < n and s[i] in "eE":
        i += 1
        if i < n and s[i] in "+-":
            i += 1
        e = i
        while i < n and s[i].isascii() and s[i].isdigit():
            i += 1
        if i == e:
            return False
    return i == n


class _Dup(ValueError):
    pass


def _no_duplicates(pairs):
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise _Dup(f"duplicate key {k!r}")
        seen[k] = v
    return seen


def _refuse_constant(name):
    raise ValueError(f"{name} is not JSON")


class _Num(str):
    """_Num keeps a JSON number's text (never a float)."""


def parse_strict(output):
    """parse_strict is eval.ParseStrict: the output, less surrounding JSON
    whitespace, must be exactly one JSON object (no duplicate keys). Returns
    (object, None) or (None, reason)."""
    text = output.strip(" \t\r\n")
    try:
        obj = json.loads(text, object_pairs_hook=_no_duplicates, parse_float=_Num, parse_int=_Num, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as e:
        return None, f"not JSON: {e}"
    if not isinstance(obj, dict):
        return None, "not a JSON object"
    return obj, None


def _date_ok(s):
    """_date_ok is eval.ParseDate: exactly YYYY-MM-DD in ASCII digits and a
    real day of the proleptic Gregorian calendar (year 0000 allowed)."""
    if len(s) != 10 or s[4] != "-" or s[7] != "-":
        return False
    digits = s[:4] + s[5:7] + s[8:]
    if not (digits.isascii() and digits.isdigit()):
        return False
    y, m, d = int(s[:4]), int(s[5:7]), int(s[8:])
    if not 1 <= m <= 12:
        return False
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    days = 29 if m == 2 and leap else 28 if m == 2 else 30 if m in (4, 6, 9, 11) else 31
    return 1 <= d <= days


def score(output, expected):
    """score judges one answer as extractbench does under the strict rule.

    Returns {"parsed", "schema_ok", "fields": {"date"|"amount"|"category": bool},
    "accepted", "failure": None|"format"|"quality", "detail"}. A field is
    right when it is the expected value (date same day, amount within 0.005 as
    a decimal, sign included, category equal), or both are null."""
    fields = {"date": False, "amount": False, "category": False}
    res = {"parsed": False, "schema_ok": False, "fields": fields, "accepted": False, "failure": "format", "detail": ""}
    obj, err = parse_strict(output)
    if obj is None:
        res["detail"] = err
        return res
    res["parsed"] = True
    extra = sorted(set(obj) - {"date", "amount", "category"})
    missing = sorted({"date", "amount", "category"} - set(obj))
    problems = []
    if extra:
        problems.append(f"unexpected keys {extra}")
    if missing:
        problems.append(f"missing keys {missing}")
    date, amount, category = obj.get("date"), obj.get("amount"), obj.get("category")
    if date is not None and not (isinstance(date, str) and not isinstance(date, _Num) and _date_ok(date)):
        problems.append(f"date {date!r}")
    if amount is not None and not (isinstance(amount, _Num) and _json_number(amount)):
        problems.append(f"amount {amount!r}")
    if category is not None and not (isinstance(category, str) and not isinstance(category, _Num) and category in CATEGORIES):
        problems.append(f"category {category!r}")
    if problems:
        res["detail"] = "; ".join(problems)
        return res
    res["schema_ok"] = True
    want_date, want_amount, want_cat = expected.get("date"), expected.get("amount"), expected.get("category")
    fields["date"] = date == want_date
    if amount is None or want_amount is None:
        fields["amount"] = amount is None and want_amount is None
    else:
        try:
            fields["amount"] = abs(Decimal(str(amount)) - Decimal(str(want_amount))) <= Decimal("0.005")
        except InvalidOperation:
            fields["amount"] = False
    fields["category"] = category == want_cat
    res["accepted"] = all(fields.values())
    res["failure"] = None if res["accepted"] else "quality"
    if not res["accepted"]:
        res["detail"] = ", ".join(k for k, v in fields.items() if not v) + " wrong"
    return res


def unscored(failure, detail):
    """unscored is the score of an answer there is nothing of to judge (a
    prompt over the context, an engine error): every field wrong."""
    return {"parsed": False, "schema_ok": False, "fields": {"date": False, "amount": False, "category": False},
            "accepted": False, "failure": failure, "detail": detail}


def score_generation(output, expected, stopped):
    """score_generation is score for a generation that stopped at an end
    token or not (max_tokens): a failed answer cut by max_tokens is a
    truncation, whatever the cut text looks like."""
    sc = score(output, expected)
    if not stopped and not sc["accepted"]:
        sc["failure"] = "truncation"
    return sc


def summarize(records):
    """summarize aggregates scored records ({"class", "score"}) per length
    class and overall: documents, accepted share, per-field accuracy and
    failure counts."""
    groups = {"all": []}
    for r in records:
        groups["all"].append(r["score"])
        if r.get("class"):
            groups.setdefault(r["class"], []).append(r["score"])
    order = ("short", "usual", "long", "all")
    out = {}
    for g in sorted(groups, key=lambda k: (order.index(k) if k in order else 3, k)):
        s = groups[g]
        n = len(s)
        out[g] = {
            "documents": n,
            "accepted": sum(x["accepted"] for x in s),
            "accepted_share": round(sum(x["accepted"] for x in s) / n, 4),
            "parsed_share": round(sum(x["parsed"] for x in s) / n, 4),
            "schema_share": round(sum(x["schema_ok"] for x in s) / n, 4),
            "field_accuracy": {f: round(sum(x["fields"][f] for x in s) / n, 4) for f in ("date", "amount", "category")},
            "failures": {k: sum(1 for x in s if x["failure"] == k) for k in ("format", "quality")},
        }
    return out


def count_failures(summary, records, kinds):
    """count_failures adds to summarize's failure counts those of the given
    kinds ("truncation", "error": scored outside score), per class."""
    for k, v in summary.items():
        for kind in kinds:
            v["failures"][kind] = sum(1 for r in records if (k == "all" or r["class"] == k) and r["score"]["failure"] == kind)
    return summary


def print_table(summary, kinds):
    """print_table prints summarize's table (a row per class, then all) and
    error_kinds's counts, as evaluate.py and cpu_reference.py report them."""
    print(f"{'class':>6} {'docs':>5} {'accepted':>9} {'date':>6} {'amount':>7} {'category':>8} {'format':>6} {'quality':>7} {'trunc':>5}")
    for k, v in summary.items():
        fa, fl = v["field_accuracy"], v["failures"]
        print(f"{k:>6} {v['documents']:>5} {v['accepted_share']:>9.3f} {fa['date']:>6.3f} {fa['amount']:>7.3f} {fa['category']:>8.3f} "
              f"{fl['format']:>6} {fl['quality']:>7} {fl['truncation']:>5}")
    if kinds:
        print("   failures by kind: " + ", ".join(f"{k} {n}" for k, n in kinds.items()))


def error_kinds(records):
    """error_kinds counts what went wrong in failed records ({"output",
    "expected", "score"}), a record counted once per kind: format,
    truncation or error as scored; otherwise per field, "date where none"
    (a date for a document without one), "date missed", "date: day",
    "date: month", "date: year" (the only part wrong; "date: other" when
    more than one is), "amount where none", "amount missed", "amount:
    digits", "category". Returns {kind: count}, most frequent first."""
    counts = {}

    def add(kind):
        counts[kind] = counts.get(kind, 0) + 1

    for r in records:
        sc = r["score"]
        if sc["accepted"]:
            continue
        if sc["failure"] in ("format", "truncation", "error") or r.get("output") is None:
            add(sc["failure"] or "format")
            continue
        obj, _ = parse_strict(r["output"])
        want = r["expected"]
        if not sc["fields"]["date"]:
            got, exp = obj.get("date"), want.get("date")
            if exp is None:
                add("date where none")
            elif got is None:
                add("date missed")
            else:
                wrong = [part for part, a, b in zip(("year", "month", "day"), exp.split("-"), got.split("-")) if a != b]
                add("date: " + wrong[0] if len(wrong) == 1 else "date: other")
        if not sc["fields"]["amount"]:
            got, exp = obj.get("amount"), want.get("amount")
            add("amount where none" if exp is None else "amount missed" if got is None else "amount: digits")
        if not sc["fields"]["category"]:
            add("category")
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


class StreamDecoder:
    """StreamDecoder turns token ids arriving a few at a time into text
    pieces: it decodes everything so far and emits what is new, holding back a
    trailing incomplete UTF-8 sequence (decoded as U+FFFD) until the next
    token completes it, or the request ends (flush)."""

    def __init__(self, decode):
        self._decode, self.ids, self.sent = decode, [], ""

    def feed(self, new_ids):
        """feed adds ids and returns the new text (maybe empty)."""
        if not new_ids:
            return ""
        self.ids.extend(new_ids)
        text = self._decode(self.ids)
        if text.endswith("\ufffd"):
            return ""
        return self._advance(text)

    def flush(self):
        """flush returns whatever was held back."""
        return self._advance(self._decode(self.ids)) if self.ids else ""

    def _advance(self, text):
        if text.startswith(self.sent):
            piece = text[len(self.sent) :]
        else:  # a merge changed earlier text: send nothing twice, keep going from here
            piece = text[_common_prefix_len(text, self.sent) :]
        self.sent = text
        return piece


def _common_prefix_len(a, b):
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def load_jsonl(path):
    """load_jsonl reads a documents.jsonl."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
