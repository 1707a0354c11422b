"""Agreement of our MMLongBench-Doc scoring with the benchmark's released ``eval_score``.

    .venv/bin/python benchmarks/mmlongbench_agreement.py                # report only
    .venv/bin/python benchmarks/mmlongbench_agreement.py --oracle PATH  # rebuild + label

Predictions are built from the real gold answers of ``shared/data/mmlb-dev/questions.jsonl``
and ``shared/data/formats/mmlongbench-doc_samples_sample.json``: exact copies, formatting
variants, near misses, lists, refusals, wrong answers and empty ones (:func:`variants`).
With ``--oracle`` (a copy of the benchmark's ``eval/eval_score.py`` you fetched yourself;
it is imported from that path and never stored in this repository) every triple is labelled
with what the official code returns (0.0 where it raises) and the golden files under
``tests/evaluation/mmlongbench/golden/`` are rewritten: ``agreement.jsonl`` (real golds) and
``rules.jsonl`` (hand-made cases of each rule, :data:`RULE_CASES`).

Then it prints, per file and per variant kind, how often ``official_score`` returns exactly
the official score, and how often the lenient ``answer_rules`` gives the same pass/fail
(official pass: a score above 0) and the same score.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scanrag.evaluation.docscope.answer_rules import match_answer  # noqa: E402
from scanrag.evaluation.mmlongbench.official import clean_answer, official_score  # noqa: E402

GOLDEN = REPO / "tests" / "evaluation" / "mmlongbench" / "golden"
Variant = tuple[str, str]  # (kind, prediction)

NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
NUMBER_WORDS += ["ten", "eleven", "twelve", "thirteen"]
REFUSALS = [
    "Not answerable",
    "not answerable",
    "Not answerable.",
    "Unanswerable",
    "Fail to answer",
    "The document does not say.",
    "None",
    "N/A",
]

# Hand-made cases of each official rule (gold, prediction, format): URLs, e-mails, dates,
# times, code files, page references, phone numbers, Python-literal lists, quirks.
RULE_CASES: list[tuple[str, str, str]] = [
    ("https://example.org/a", "https://example.org/a", "Str"),
    ("https://example.org/a", "https://example.org/b", "Str"),
    ("https://example.org/a", "HTTPS://EXAMPLE.ORG/A", "Str"),
    ("www.example.org", "www.example.com", "Str"),
    ("info@example.org", "info@example.org", "Str"),
    ("info@example.org", "info@example.com", "Str"),
    ("2024-05-01", "2024-05-01", "Str"),
    ("2024-05-01", "2024-05-02", "Str"),
    ("2024 05 01", "2024 05 01", "Str"),
    ("2015-2016", "2015-2017", "Str"),
    ("2015-2016", "2015-2016", "Str"),
    ("2019-03", "2019-04", "Str"),
    ("555 1234", "555 1235", "Str"),
    ("555 1234", "555 1234", "Str"),
    ("555-123-4567", "555-123-4568", "Str"),
    ("10:30 a.m.", "10:30 am", "Str"),
    ("10:30 a.m.", "10:30 a.m.", "Str"),
    ("7 p.m.", "8 p.m.", "Str"),
    ("train.py", "train.py", "Str"),
    ("train.py", "tran.py", "Str"),
    ("demo.ipynb", "demo.ipynb", "Str"),
    ("demo.ipynb", "demos.ipynb", "Str"),
    ("Page 12", "page 12", "Str"),
    ("Page 12", "page 13", "Str"),
    ("42", "42", "Str"),
    ("42", "43", "Str"),
    ("abcd", "abcx", "Str"),
    ("abcd", "abxx", "Str"),
    ("abcdef", "abcxxx", "Str"),
    ("abcdefgh", "abcdexxx", "Str"),
    ("straße", "strasse", "Str"),
    ("ß", "s", "Str"),
    ("Paris (France)", "paris", "Str"),
    ("Paris", "Paris (the capital)", "Str"),
    ("'Paris'", "Paris", "Str"),
    ('"Paris"', "Paris", "Str"),
    ("$5 million", "5 million", "Str"),
    ("Rome", "", "Str"),
    ("", "", "Str"),
    ("", "x", "Str"),
    ("Not answerable", "Not applicable", "None"),
    ("Not answerable", "unanswerable", "None"),
    ("Not answerable", "(none)", "None"),
    ("", "abc", "Int"),
    ("", "", "Int"),
    ("12", "12.9", "Int"),
    ("12", "1.2e1", "Int"),
    ("12", "1_2", "Int"),
    ("1_2", "12", "Int"),
    ("-3", "-3.7", "Int"),
    ("0", "-0.5", "Int"),
    ("12", "inf", "Int"),
    ("12", "nan", "Int"),
    ("12", "12%", "Int"),
    ("12.0", "12", "Int"),
    ("1.5", "1.5", "Float"),
    ("1.5", "150", "Float"),
    ("1.5", "0.015", "Float"),
    ("1.5", "1.51", "Float"),
    ("1.5", "1.52", "Float"),
    ("0.001", "0.0014", "Float"),
    ("0.001", "0.0016", "Float"),
    ("1e-05", "0.00001", "Float"),
    ("100", "1e4", "Float"),
    ("$1,200", "1200", "Float"),
    ("3.14159", "3.14", "Float"),
    ("3.14159", "3.1416", "Float"),
    ("0", "0", "Float"),
    ("0", "0.001", "Float"),
    ("0", "0.009", "Float"),
    ("inf", "inf", "Float"),
    ("nan", "nan", "Float"),
    ("12 (est.)", "12", "Float"),
    ("12", "(12)", "Float"),
    ("['a', 'b']", "['b', 'a']", "List"),
    ("['a', 'b']", '["A", "B"]', "List"),
    ("['a', 'b']", "['a']", "List"),
    ("['a', 'b']", "a, b", "List"),
    ("['a', 'b']", "[a, b]", "List"),
    ("['a', 'b']", "['a', 'b'", "List"),
    ("['alpha', 'beta']", "['alpha', 'betx']", "List"),
    ("['alpha', 'beta']", "['alpha (1)', 'beta']", "List"),
    ("['1', '2']", "[1, 2]", "List"),
    ("['1', '2']", "[2.0, 1.0]", "List"),
    ("['1-2', '3']", "['1', '2-3']", "List"),
    ("['https://a.org', 'b']", "['https://a.org', 'c']", "List"),
    ("['x', 'y']", "[['x'], ['y']]", "List"),
    ("[]", "[]", "List"),
    ("[]", "", "List"),
    ("['a']", "a", "List"),
    ("['a']", "[1], [2]", "List"),
    ("['(a)', 'b']", "['', 'b']", "List"),
    ("single", "single", "List"),
    ("single", "['single']", "List"),
    ("['a', 'b']", "['a', 'b']", "Unknown"),
    ("['a', 'b']", "['a', 'b']", ""),
    ("abc", "abc", "str"),
]


# --------------------------------------------------------------------------- gold answers


def load_golds(shared: Path) -> list[dict[str, str]]:
    """Every (id, gold, format) of the two real-gold files, first occurrence kept."""
    rows: list[dict[str, str]] = []
    path = shared / "data" / "mmlb-dev" / "questions.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            rows.append({"id": item["id"], "gold": item["answer"], "format": item["answer_format"]})
    sample = shared / "data" / "formats" / "mmlongbench-doc_samples_sample.json"
    for k, item in enumerate(json.loads(sample.read_text(encoding="utf-8"))):
        rows.append({"id": f"formats/{k}", "gold": item["answer"], "format": item["answer_format"]})
    seen: set[tuple[str, str]] = set()
    unique = []
    for row in rows:
        if (row["gold"], row["format"]) not in seen:
            seen.add((row["gold"], row["format"]))
            unique.append(row)
    return unique


# --------------------------------------------------------------------------- variants


def _typo(text: str, at: float, char: str = "x") -> str:
    """``text`` with the character at relative position ``at`` replaced."""
    if not text:
        return char
    i = min(int(len(text) * at), len(text) - 1)
    return text[:i] + (char if text[i] != char else "y") + text[i + 1 :]


def _masked(text: str, count: int) -> str:
    """``text`` with its first ``count`` characters replaced by ``#`` (edit distance
    ``count`` on the cleaned text)."""
    return "#" * count + text[count:]


def text_variants(gold: str) -> Iterator[Variant]:
    core = gold.strip()
    clean = clean_answer(gold)
    words = core.split()
    yield "exact", gold
    yield "exact", core
    yield "format", core.upper()
    yield "format", core.lower()
    yield "format", core.title()
    yield "format", f"  {core}  "
    yield "format", f'"{core}"'
    yield "format", f"'{core}'"
    yield "format", f"{core}."
    yield "format", f"{core} (see page 3)"
    yield "format", f"(page 3) {core}"
    yield "format", "  ".join(words)
    yield "format", f"${core}"
    yield "format", f"{core}%"
    yield "near", _typo(core, 0.5)
    yield "near", _typo(_typo(core, 0.2), 0.8)
    yield "near", core[:-1]
    yield "near", core[1:]
    yield "near", core[: max(1, len(core) // 2)]
    yield "near", f"The answer is {core}"
    yield "near", f"{core} and more"
    if len(words) > 1:
        yield "near", " ".join(words[:-1])
        yield "near", " ".join(reversed(words))
    if len(clean) >= 2:
        half = len(clean) // 2
        yield "anls_edge", _masked(clean, half)
        yield "anls_edge", _masked(clean, max(half - 1, 0))
        yield "anls_edge", _masked(clean, half + 1)
    yield "list", f"['{core}']"


def _number(text: str) -> float | None:
    try:
        return float(clean_answer(text))
    except ValueError:
        return None


def int_variants(gold: str) -> Iterator[Variant]:
    yield "exact", gold
    try:
        n = int(gold)
    except ValueError:  # a real Int gold that is no integer ("21%")
        yield from text_variants(gold)
        return
    yield "format", f" {n} "
    yield "format", f"{n}.0"
    yield "format", f"+{n}"
    yield "format", f"{n:,}"
    yield "format", f"{n:,}.00"
    yield "format", f"{n}%"
    yield "format", f"${n}"
    yield "format", f"{n} items"
    yield "format", f"0{n}"
    yield "format", f"{float(n):e}"
    yield "format", f"[{n}]"
    yield "format", f"'{n}'"
    yield "format", f"{n} (approx.)"
    if 0 <= n < len(NUMBER_WORDS):
        yield "format", NUMBER_WORDS[n]
        yield "format", NUMBER_WORDS[n].title()
    yield "near", f"{n}.4"
    yield "near", f"{n}.99"
    yield "near", f"{n - 1}.99"
    yield "near", str(n + 1)
    yield "near", str(n - 1)
    yield "near", str(n * 10)
    yield "near", str(-n)
    yield "near", f"{n}/{n + 1}"
    yield "near", f"About {n}"
    yield "near", f"{n / 100}"


def float_variants(gold: str) -> Iterator[Variant]:
    yield "exact", gold
    v = _number(gold)
    if v is None:
        yield from text_variants(gold)
        return
    yield "format", str(v)
    yield "format", f"{v}%"
    yield "format", f" {gold} "
    yield "format", f"${v}"
    yield "format", f"{v} percent"
    yield "format", f"{v:.4f}"
    yield "format", f"'{gold}'"
    yield "format", f"{gold} (approx.)"
    yield "format", f"{v:e}"
    yield "format", str(v).replace(".", ",")
    yield "scale", f"{v / 100}"
    yield "scale", f"{v * 100}"
    yield "scale", f"{v / 1000}"
    yield "scale", f"{v * 1000}"
    for digits in (0, 1, 2, 3):
        yield "rounding", f"{v:.{digits}f}"
    for factor in (1.004, 1.009, 1.011, 1.02, 0.995, 0.99, 0.98, 1.1):
        yield "near", f"{v * factor:.6g}"
    yield "near", f"{v + 0.01:.6g}"
    yield "near", f"{v + 0.001:.6g}"
    yield "near", f"About {gold}"
    yield "near", str(-v)


def list_variants(gold: str) -> Iterator[Variant]:
    import ast

    items = [str(x) for x in ast.literal_eval(gold)]
    yield "exact", gold
    yield "format", str(items[::-1])
    yield "format", json.dumps(items)
    yield "format", str([x.strip() for x in items])
    yield "format", str([x.upper() for x in items])
    yield "format", str([x.lower() for x in items])
    yield "format", str([f"{x} (p. 2)" for x in items])
    yield "format", str([f"'{x}'" for x in items])
    yield "format", " " + gold
    yield "format", gold.replace("'", "’")
    yield "format", ", ".join(items)
    yield "format", str(tuple(items))
    yield "format", "[" + ", ".join(items) + "]"
    yield "near", str(items[:-1])
    yield "near", str([*items, "Other"])
    yield "near", str([_typo(items[0], 0.5), *items[1:]])
    yield "near", str([*items[:-1], _typo(items[-1], 0.3)])
    yield "near", str([_typo(x, 0.5) for x in items])
    yield "near", str([x[: max(1, len(x) // 2)] for x in items])
    yield "near", str([x + "s" for x in items])
    yield "near", gold[:-1]
    yield "near", str([items])
    yield "near", str(items) + ", ['extra']"
    numbers = [_number(x) for x in items]
    if all(n is not None for n in numbers):
        yield "format", str(numbers)
        yield "near", str([round(n or 0.0, 1) for n in numbers])
        yield "near", str([(n or 0.0) / 100 for n in numbers])


FORMATS: dict[str, Callable[[str], Iterator[Variant]]] = {
    "Int": int_variants,
    "Float": float_variants,
    "Str": text_variants,
    "List": list_variants,
}


def none_variants(golds: list[str]) -> Iterator[Variant]:
    yield "exact", "Not answerable"
    for text in ["NOT ANSWERABLE", "Not Answerable", "'Not answerable'", "Not answerable "]:
        yield "format", text
    for text in ["Not answerable (no data)", "Not answerable.", "not-answerable"]:
        yield "format", text
    for text in ["Unanswerable", "unanswerable", "Not applicable", "Not available"]:
        yield "refusal", text
    for text in ["Cannot be answered", "The question is not answerable", "No answer", "N/A"]:
        yield "refusal", text
    for text in ["None", "Fail to answer", "Failed to extract", "Not mentioned", "unknown"]:
        yield "refusal", text
    for text in ["Not answerabl", "Nt answerable", "answerable", "Not answered"]:
        yield "near", text
    for gold in golds:
        yield "wrong", gold


def triples(shared: Path) -> list[dict[str, Any]]:
    """Every (gold, pred, format) of the agreement set, with its variant kind and source."""
    golds = load_golds(shared)
    by_format: dict[str, list[str]] = defaultdict(list)
    for row in golds:
        by_format[row["format"]].append(row["gold"])
    answerable = [g["gold"] for g in golds if g["format"] != "None"]
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()

    def add(source: str, gold: str, fmt: str, kind: str, pred: str) -> None:
        if (gold, pred, fmt) not in seen:
            seen.add((gold, pred, fmt))
            out.append({"gold": gold, "pred": pred, "format": fmt, "kind": kind, "id": source})

    for row in golds:
        gold, fmt, source = row["gold"], row["format"], row["id"]
        if fmt == "None":
            for kind, pred in none_variants(answerable):
                add(source, gold, fmt, kind, pred)
            continue
        for kind, pred in FORMATS[fmt](gold):
            add(source, gold, fmt, kind, pred)
        for kind, pred in [("empty", ""), ("empty", "   ")]:
            add(source, gold, fmt, kind, pred)
        for pred in REFUSALS[::2]:
            add(source, gold, fmt, "refusal", pred)
        others = [g for g in by_format[fmt] if g != gold]
        for pred in others[:: max(1, len(others) // 3)][:3]:
            add(source, gold, fmt, "wrong", pred)
    return out


# --------------------------------------------------------------------------- labels, report


def load_oracle(path: Path) -> Callable[[str, str, str], tuple[float, bool]]:
    """``eval_score`` of the official file at ``path``: (score, raised)."""
    spec = importlib.util.spec_from_file_location("mmlb_official_eval_score", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def oracle(gold: str, pred: str, fmt: str) -> tuple[float, bool]:
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                return float(module.eval_score(gold, pred, fmt)), False
            except Exception:
                return 0.0, True

    return oracle


def label(
    rows: list[dict[str, Any]], oracle: Callable[[str, str, str], tuple[float, bool]]
) -> list[dict[str, Any]]:
    for row in rows:
        row["expected"], raised = oracle(row["gold"], row["pred"], row["format"])
        if raised:
            row["official_raises"] = True
    return rows


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    path.write_text(text, encoding="utf-8")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def lenient(row: dict[str, Any]) -> tuple[bool, float]:
    fmt = row["format"]
    result = match_answer(row["gold"], row["pred"], fmt, answerable=fmt != "None")
    return result.correct, result.score


def report(name: str, rows: list[dict[str, Any]]) -> None:
    kinds: Counter[str] = Counter()
    ours: Counter[str] = Counter()
    same_pass: Counter[str] = Counter()
    same_score: Counter[str] = Counter()
    misses = []
    for row in rows:
        kind = row.get("kind", "rule")
        for key in (kind, "all"):
            kinds[key] += 1
        expected = row["expected"]
        mine = official_score(row["gold"], row["pred"], row["format"])
        correct, score = lenient(row)
        for key in (kind, "all"):
            ours[key] += mine == expected
            same_pass[key] += correct == (expected > 0)
            same_score[key] += abs(score - expected) < 1e-9
        if mine != expected:
            misses.append(row)
    print(f"\n{name}: {kinds['all']} triples")
    print(
        f"{'kind':<10} {'n':>5} {'official_score':>15} {'rules pass/fail':>16} {'rules score':>12}"
    )
    for kind in sorted(kinds, key=lambda k: (k == "all", k)):
        n = kinds[kind]
        print(
            f"{kind:<10} {n:>5} {ours[kind] / n:>15.2%} {same_pass[kind] / n:>16.2%} "
            f"{same_score[kind] / n:>12.2%}"
        )
    for row in misses:
        print("  differs:", json.dumps(row, ensure_ascii=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    parser.add_argument("--oracle", type=Path, help="the benchmark's eval/eval_score.py")
    parser.add_argument("--golden", type=Path, default=GOLDEN)
    args = parser.parse_args()
    if args.oracle is not None:
        oracle = load_oracle(args.oracle)
        write_jsonl(args.golden / "agreement.jsonl", label(triples(args.shared), oracle))
        rules = [{"gold": g, "pred": p, "format": f} for g, p, f in RULE_CASES]
        write_jsonl(args.golden / "rules.jsonl", label(rules, oracle))
    for name in ("agreement", "rules"):
        report(name, read_jsonl(args.golden / f"{name}.jsonl"))


if __name__ == "__main__":
    main()
