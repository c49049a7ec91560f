#!/usr/bin/env python3
"""prompt_tokens_agree.py compares the prompt_tokens two engines reported per
document (the requests tables of two results.db, e.g. the transformers sweep
and the llama.cpp sweep of the same model): for every document both measured,
one count in each and the same in both. Plain Python (sqlite3).

    python3 engines/llamacpp/prompt_tokens_agree.py A/results.db B/results.db

Exit status 1 when a document's counts differ or vary within one run."""

import sqlite3
import sys


def counts(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT doc_id, prompt_tokens FROM requests WHERE prompt_tokens IS NOT NULL").fetchall()
    finally:
        con.close()
    out = {}
    for doc, n in rows:
        out.setdefault(doc, set()).add(n)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: prompt_tokens_agree.py A/results.db B/results.db")
    a, b = counts(sys.argv[1]), counts(sys.argv[2])
    both = sorted(set(a) & set(b))
    varies = [d for d in both if len(a[d]) > 1 or len(b[d]) > 1]
    differ = [d for d in both if a[d] != b[d]]
    print(f"{len(both)} documents in both: {len(both) - len(differ)} with the same prompt_tokens, {len(differ)} differ, "
          f"{len(varies)} vary within a run")
    for d in differ[:10]:
        print(f"  {d}: {sorted(a[d])} vs {sorted(b[d])}")
    sys.exit(1 if differ or varies or not both else 0)


if __name__ == "__main__":
    main()
