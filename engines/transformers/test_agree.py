"""Tests of agree.py: engine answers against the CPU reference's, per repetition."""

import os
import sqlite3
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agree  # noqa: E402


def cpu(output, accepted):
    return {"output": output, "score": {"accepted": accepted}}


class AgreeTest(unittest.TestCase):
    def test_agreement(self):
        engine = {(1, "a"): ('{"x": 1}', True), (1, "b"): ("{}", False), (2, "a"): (' {"x": 1}\n', True), (1, "z"): ("", False)}
        ref = {"a": cpu('{"x": 1}', True), "b": cpu('{"y": 2}', True)}
        res = agree.agreement(engine, ref)
        self.assertEqual(res[1]["documents"], 2)  # z is not in the reference
        self.assertEqual((res[1]["same_output"], res[1]["same_verdict"]), (1, 1))
        self.assertEqual([f["doc_id"] for f in res[1]["flips"]], ["b"])
        self.assertEqual((res[2]["same_output"], res[2]["same_verdict"], res[2]["flips"]), (1, 1, []))

    def test_load_engine_reads_one_level_of_one_variant(self):
        with tempfile.TemporaryDirectory() as d:
            db = os.path.join(d, "results.db")
            con = sqlite3.connect(db)
            con.execute("CREATE TABLE requests (variant TEXT, level INTEGER, repetition INTEGER, doc_id TEXT, send_ns INTEGER, output TEXT, accepted INTEGER)")
            con.executemany("INSERT INTO requests VALUES (?, ?, ?, ?, ?, ?, ?)", [
                ("bf16", 1, 1, "a", 5, "A", 1), ("bf16", 8, 1, "a", 5, "other level", 0),
                ("fp8", 1, 1, "a", 5, "other variant", 0), ("bf16", 1, 1, "b", None, "", 0)])
            con.commit()
            con.close()
            self.assertEqual(agree.load_engine(db, "bf16", 1), {(1, "a"): ("A", True)})


if __name__ == "__main__":
    unittest.main()
