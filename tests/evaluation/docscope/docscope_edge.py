"""An edge-item DocScope benchmark, its ``infer.jsonl`` and a scripted judge, shared by the
official-pipeline test and the harness that labels it with DocScope's released code
(``benchmarks/docscope_official_agreement.py``).

Everything is deterministic: :func:`write_edge_run` writes ``benchmark.json``, the PDFs
(generated with PyMuPDF; one document is missing on purpose), ``infer.jsonl`` as DocScope's
``run_infer.py`` writes it (its ``parsed`` blocks made by our reimplementation of the released
parser) and three judge prompt files in DocScope's template format (our own wording). The
judge (:func:`judge_reply`) answers from the prompt text alone, so the released scorers and
ours get the same reply for the same prompt, and a prompt that differs by one character gets
other labels.

Edge items: a float evidence page (``2.0``) and a non-integral one (``3.5``), an evidence
page past the end of its PDF, gold boxes past the right and bottom page edges, an evidence
without a box, one without a ``local_id``, facts without ids or naming unknown evidence, an
answer block whose ``answer_text`` is empty (the released code shows the whole block),
unanswerable items with and without evidence, a document whose PDF is missing (one record
``ok``, one ``error: PDF not found``), a question id repeated twice and three times, question
ids missing from the benchmark, a record without ``question_id``, a record without a
``parsed`` block, model boxes in pixels and without the ``is_normalized`` flag, citations of
pages past the PDF, inference errors and a torn line.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any

from scanrag.evaluation.docscope.official.parser import parse_official

PAGES = {
    "urnuuidA": (4, 612.0, 792.0),
    "urnuuidB": (3, 400.0, 600.0),
    "urnuuidD": (2, 595.0, 842.0),
}
MISSING = "urnuuidC"  # its PDF is never written
MODEL = "edge-model"
STAGES = ("pages", "bbox", "facts", "answer")

ANSWER_PROMPT = """[answer judge]
Question: {question}
Gold answer: {gold_answer}
Model answer: {model_answer}
Reply with JSON: {{"consistent": true or false, "reason": "..."}}
"""

FACT_PROMPT = """[fact judge]
Question: {question}
Page: {gt_page}
Facts of this page:
{gold_facts_block}
Facts of other pages: {sibling_facts}
Model reply:
{model_raw}
Reply with JSON: {{"items": [{{"id": "...", "label": "consistent" or "not_consistent"}}]}}
"""

REGION_PROMPT = """[region judge]
Question: {question}
Gold answer: {gold_answer}
Page: {gt_page} with {gold_total_on_page} gold boxes
{gold_facts_block}
Red boxes ({n_pred}): {pred_bboxes_norm}
Reply with JSON: {{"items": [{{"id": "g1", "label": "covered" or "imprecise" or "not_covered"}}]}}
"""

# DocScope's own file names for its judge prompts (the files themselves are never shipped).
PROMPT_FILES = {
    "answer": ("answer_verification.txt", ANSWER_PROMPT),
    "fact": ("factucal_consistency.txt", FACT_PROMPT),
    "region": ("evidence_grounding.txt", REGION_PROMPT),
}


# --------------------------------------------------------------------------- the judge


def _number(text: str, salt: str = "") -> int:
    return int(hashlib.sha256((salt + "\x00" + text).encode()).hexdigest()[:12], 16)


def prompt_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def judge_reply(text: str) -> str:
    """The scripted judge: a reply decided by the prompt text alone."""
    role = text.split("\n", 1)[0]
    if role == "[answer judge]":
        pick = _number(text) % 8
        if pick == 0:
            return "I believe they agree."  # no JSON at all
        if pick == 1:
            return '{"consistent": "true", "reason": "a string, not a boolean"}'
        if pick == 2:
            return 'Verdict:\n```json\n{"consistent": true, "reason": "fenced"}\n```'
        return json.dumps({"consistent": pick in (3, 4, 5), "reason": f"pick {pick}"})
    if role in ("[fact judge]", "[region judge]"):
        ids = re.findall(r"^id=(\S+) :: ", text, flags=re.MULTILINE)
        if _number(text, "whole") % 13 == 0:
            return "[]"  # JSON but no object: every item unusable
        items = []
        for ident in ids:
            pick = _number(text, ident) % 10
            if pick == 0:
                continue  # this id left out
            if role == "[fact judge]":
                label = (
                    "inconsistent" if pick == 1 else "consistent" if pick < 7 else "not_consistent"
                )
            else:
                label = (
                    ("Covered", "covered", "covered", "covered", "covered", "imprecise")[pick - 1]
                    if pick < 7
                    else ("imprecise", "not_covered", "not_covered")[pick - 7]
                )
            items.append({"id": ident, "label": label, "reason": f"pick {pick}"})
        return json.dumps({"items": items})
    raise ValueError(f"not a judge prompt of the edge run: {role!r}")


# --------------------------------------------------------------------------- the benchmark


def _ev(local_id: str | None, page: Any, bbox: Any, kind: str = "text") -> dict[str, Any]:
    out: dict[str, Any] = {"page": page, "bbox": bbox, "element_type": kind}
    if local_id is not None:
        out["local_id"] = local_id
    return out


def _fact(local_id: str | None, evidence: str, text: str) -> dict[str, Any]:
    out = {"evidence_local_id": evidence, "text_description": text}
    if local_id is not None:
        out["local_id"] = local_id
    return out


def _item(
    ident: str,
    doc: str,
    question: str,
    answer: str,
    evidences: list[dict[str, Any]],
    facts: list[dict[str, Any]],
    answerable: bool = True,
) -> dict[str, Any]:
    return {
        "id": ident,
        "split": "test",
        "pdf": {"doc_id_str": doc},
        "question": question,
        "answer": {"answer_text": answer, "is_answerable": answerable},
        "evidences": evidences,
        "facts": facts,
        "extract_class": "class1",
    }


def benchmark() -> list[dict[str, Any]]:
    a, b, c, d = "urnuuidA", "urnuuidB", MISSING, "urnuuidD"
    items = [
        _item(
            f"{a}::q1",
            a,
            "What was the 2020 revenue and its main driver?",
            "12 million, driven by exports",
            [_ev("e1", 2, [100, 200, 600, 400]), _ev("e2", 4, [120, 300, 1100, 700], "table")],
            [
                _fact("f1", "e1", "Revenue in 2020 was 12 million."),
                _fact("f2", "e2", "Exports made up 60% of sales."),
                _fact("f3", "e2", "Exports grew 8% in 2020."),
            ],
        ),
        _item(  # a float page
            f"{a}::q2",
            a,
            "How many plants does the company run?",
            "7",
            [_ev("e1", 2.0, [50, 50, 400, 300])],
            [_fact("f1", "e1", "The company runs 7 plants.")],
        ),
        _item(  # a gold box 2.1% past the right edge (1250 > 1224 px)
            f"{a}::q3",
            a,
            "Which region had the highest margin?",
            "Asia",
            [_ev("e1", 3, [900, 100, 1250, 300], "chart")],
            [_fact("f1", "e1", "Asia had the highest margin.")],
        ),
        _item(  # an evidence page past the 4-page PDF
            f"{a}::q4",
            a,
            "Who signed the report?",
            "The chair, J. Doe",
            [_ev("e1", 9, [100, 100, 300, 300]), _ev("e2", 1, [80, 1300, 700, 1500])],
            [
                _fact("f1", "e1", "The report was signed by J. Doe."),
                _fact("f2", "e2", "J. Doe is the chair."),
            ],
        ),
        _item(
            f"{a}::q5", a, "What is the CEO's favourite colour?", "Not answerable", [], [], False
        ),
        _item(  # unanswerable, with the page the annotator checked
            f"{a}::q6",
            a,
            "How much was paid in 2031?",
            "",
            [_ev("e1", 1, [60, 60, 1100, 500], "list")],
            [],
            False,
        ),
        _item(  # a non-integral float page: gold page 3, but no box sits on page 3.0
            f"{a}::q7",
            a,
            "What does the footnote on page 3 say?",
            "Figures are unaudited",
            [_ev("e1", 3.5, [100, 1400, 900, 1500]), _ev("e2", 3, [100, 600, 900, 700])],
            [
                _fact("f1", "e1", "The footnote says figures are unaudited."),
                _fact("f2", "e2", "The table covers 2019 and 2020."),
            ],
        ),
        _item(  # an empty answer_text: the released code shows the whole answer block
            f"{a}::q8",
            a,
            "What is the company's ticker?",
            "",
            [_ev("e1", 1, [100, 100, 500, 200])],
            [_fact("f1", "e1", "The ticker is ACME.")],
        ),
        _item(  # no box; a fact without id; a fact naming unknown evidence
            f"{a}::q9",
            a,
            "What is on page 2?",
            "The income statement",
            [_ev("e1", 2, None, "page")],
            [
                _fact(None, "e1", "Page 2 holds the income statement."),
                _fact("f9", "e9", "A fact of an evidence that does not exist."),
            ],
        ),
        _item(  # an evidence without local_id: facts cannot name it
            f"{a}::q10",
            a,
            "How many employees are there?",
            "1,200",
            [_ev(None, 4, [100, 100, 600, 250]), _ev("e2", 4, [100, 800, 600, 900])],
            [_fact("f1", "e1", "There are 1,200 employees."), _fact("f2", "e2", "Staff grew.")],
        ),
        _item(  # three boxes on one page
            f"{b}::q11",
            b,
            "List the three product lines.",
            "Alpha, Beta, Gamma",
            [
                _ev("e1", 1, [40, 60, 760, 200]),
                _ev("e2", 2, [40, 100, 380, 300]),
                _ev("e3", 2, [400, 100, 760, 300]),
                _ev("e4", 2, [40, 700, 760, 900], "table"),
            ],
            [
                _fact("f1", "e1", "Alpha is a product line."),
                _fact("f2", "e2", "Beta is a product line."),
                _fact("f3", "e3", "Gamma is a product line."),
                _fact("f4", "e4", "The lines are listed in a table."),
            ],
        ),
        _item(  # a gold box 2.5% past the bottom edge (1230 > 1200 px)
            f"{b}::q12",
            b,
            "What is the last line of the appendix?",
            "End of report",
            [_ev("e1", 3, [100, 1100, 700, 1230])],
            [_fact("f1", "e1", "The appendix ends with 'End of report'.")],
        ),
        _item(
            f"{b}::q13",
            b,
            "When was the company founded?",
            "1987",
            [_ev("e1", 1, [40, 400, 700, 500])],
            [_fact("f1", "e1", "The company was founded in 1987.")],
        ),
        _item(  # the PDF is missing: its region judgments cannot be rendered
            f"{c}::q14",
            c,
            "What is the headline figure?",
            "42%",
            [_ev("e1", 1, [100, 100, 900, 400]), _ev("e2", 2, [100, 100, 900, 400])],
            [_fact("f1", "e1", "The headline figure is 42%."), _fact("f2", "e2", "It rose.")],
        ),
        _item(
            f"{c}::q15",
            c,
            "Who is the auditor?",
            "KPMG",
            [_ev("e1", 2, [100, 100, 900, 400])],
            [_fact("f1", "e1", "KPMG is the auditor.")],
        ),
        _item(
            f"{d}::q16",
            d,
            "What is the dividend per share?",
            "0.42",
            [_ev("e1", 1, [100, 900, 1000, 1100], "table")],
            [_fact("f1", "e1", "The dividend per share is 0.42.")],
        ),
        _item(f"{d}::q17", d, "What will revenue be in 2040?", "Not answerable", [], [], False),
        _item(
            f"{b}::q18",
            b,
            "What is the tax rate?",
            "21%",
            [_ev("e1", 2, [40, 400, 760, 500])],
            [_fact("f1", "e1", "The tax rate is 21%.")],
        ),
        _item(
            f"{d}::q19",
            d,
            "Where is the headquarters?",
            "Zurich",
            [_ev("e1", 2, [100, 100, 900, 300])],
            [_fact("f1", "e1", "The headquarters are in Zurich.")],
        ),
        _item(
            f"{d}::q20",
            d,
            "What is the share count?",
            "3.1 million",
            [_ev("e1", 1, [100, 300, 1000, 500]), _ev("e2", 2, [100, 300, 1000, 500])],
            [_fact("f1", "e1", "There are 3.1 million shares."), _fact("f2", "e2", "Shares.")],
        ),
        _item(  # never inferred: in no block
            f"{a}::q21",
            a,
            "Is this question ever asked?",
            "No",
            [_ev("e1", 1, [0, 0, 100, 100])],
            [],
        ),
    ]
    return items


# --------------------------------------------------------------------------- infer.jsonl


def _cite(page: int, box: list[float]) -> str:
    return f'[page={page}, doc_page="{page}", bbox=[{", ".join(str(v) for v in box)}]]'


def _reply(rng: random.Random, cites: list[tuple[int, list[float]]], answer: str | None) -> str:
    parts = ["Let me check the document."]
    for i, (page, box) in enumerate(cites):
        parts.append(f"Statement {i + 1} about the question {_cite(page, box)}.")
        if rng.random() < 0.3:
            parts.append("This follows from the above.")
    if answer is not None:
        parts.append(f"<answer> {answer} </answer>")
    return " ".join(parts)


def _record(qid: Any, reply: str | None, status: str = "ok", parsed: Any = "parse") -> dict:
    out: dict[str, Any] = {"question_id": qid, "model": MODEL}
    if status != "ok":
        out["status"] = status
        return out
    out |= {"model_raw": reply, "thinking": "", "infer_usage": {"prompt_tokens": 900}}
    out["parsed"] = parse_official(reply or "").model_dump() if parsed == "parse" else parsed
    out["status"] = "ok"
    return out


def infer_lines() -> list[str]:
    """The lines of ``infer.jsonl``, in the order ``run_infer.py`` might have written them."""
    rng = random.Random(19)
    a, b, c, d = "urnuuidA", "urnuuidB", MISSING, "urnuuidD"
    n = [0.1, 0.1, 0.5, 0.3]
    records = [
        _record(f"{a}::q1", _reply(rng, [(2, [0.08, 0.12, 0.5, 0.27]), (3, n)], "12 million")),
        _record(f"{a}::q2", _reply(rng, [(2, [0.04, 0.03, 0.33, 0.19]), (2, n)], "7 plants")),
        _record(f"{a}::q3", _reply(rng, [(3, [0.7, 0.05, 1.02, 0.2]), (1, n)], "Asia")),
        _record(f"{a}::q4", _reply(rng, [(9, n), (1, [0.05, 0.8, 0.6, 0.95]), (12, n)], "J. Doe")),
        _record(f"{a}::q5", _reply(rng, [(1, n)], "Unanswerable")),
        _record(f"{a}::q6", _reply(rng, [(1, [0.0, 0.0, 0.9, 0.3])], "Not answerable")),
        _record(f"{a}::q7", _reply(rng, [(3, [0.1, 0.38, 0.75, 0.45])], "unaudited")),
        _record(f"{a}::q8", _reply(rng, [(1, [0.1, 0.05, 0.4, 0.13])], "ACME")),
        _record(f"{a}::q9", _reply(rng, [(2, [0.0, 0.0, 1.0, 1.0])], None)),  # no answer tag
        _record(
            f"{a}::q10",
            _reply(rng, [(4, [0.1, 0.05, 0.5, 0.16]), (4, [0.1, 0.05, 0.5, 0.16])], "1200"),
        ),
        _record(
            f"{b}::q11",
            _reply(
                rng,
                [
                    (1, [0.05, 0.05, 0.95, 0.17]),
                    (2, [0.05, 0.08, 0.95, 0.25]),
                    (2, [1.2, 1.3, 1.4, 1.45]),
                    (2, [0.05, 0.6, 0.95, 0.75]),
                ],
                "Alpha, Beta, Gamma",
            ),
        ),
        _record(f"{b}::q12", _reply(rng, [(3, [0.1, 0.9, 0.9, 1.01])], "End of report")),
        _record(f"{b}::q13", _reply(rng, [(1, [0.05, 0.33, 0.9, 0.42])], "1987")),
        _record(f"{c}::q14", _reply(rng, [(1, n), (2, n)], "42%")),
        _record(f"{c}::q15", None, status=f"error: PDF not found for {c}"),
        _record(f"{d}::q16", _reply(rng, [(1, [0.1, 0.5, 0.85, 0.65])], "0.42")),
        _record(f"{d}::q17", _reply(rng, [(2, n)], "About 9 billion")),
        _record(f"{b}::q18", None, status="error: upstream 529 overloaded"),
        _record(f"{d}::q19", _reply(rng, [(2, [0.08, 0.05, 0.8, 0.2])], "Zurich"), parsed=None),
        _record(f"{b}::q13", _reply(rng, [(1, n), (3, n)], "1988")),  # q13 again
        _record(f"{d}::q16", _reply(rng, [(1, [0.1, 0.5, 0.85, 0.65])], "42 cents")),  # again
        _record("ghost::q1", _reply(rng, [(1, n)], "something")),  # not in the benchmark
        _record("ghost::q2", None, status="error: timeout"),
        _record(None, _reply(rng, [(2, n)], "no id")),  # no question id at all
        _record(f"{d}::q16", _reply(rng, [(2, n)], "0.42")),  # a third time
    ]
    # q20: boxes in pixels, and the flag missing from one citation (written by hand)
    raw = _reply(rng, [(1, [120, 260, 980, 480]), (2, [0.1, 0.3, 0.9, 0.5])], "3.1 million")
    q20 = _record(f"{d}::q20", raw)
    del q20["parsed"]["citations"][1]["is_normalized"]
    records.insert(20, q20)
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    lines.insert(7, '{"question_id": "torn::q", "model": "edge-m')  # a torn line
    return lines


def write_pdf(path: Path, pages: int, width: float, height: float) -> None:
    import pymupdf

    doc = pymupdf.open()
    for number in range(1, pages + 1):
        page = doc.new_page(width=width, height=height)
        page.insert_text((40, 60), f"Edge benchmark page {number}", fontsize=12)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path)
    doc.close()


def write_edge_run(folder: Path) -> dict[str, Path]:
    """Write the benchmark, PDFs (``folder/pdfs``), ``infer.jsonl`` and the prompt files
    (``folder/prompts``); returns their paths by name."""
    folder.mkdir(parents=True, exist_ok=True)
    bench = folder / "benchmark.json"
    bench.write_text(json.dumps(benchmark(), indent=1, ensure_ascii=False), encoding="utf-8")
    for doc, (pages, width, height) in PAGES.items():
        write_pdf(folder / "pdfs" / f"{doc}.pdf", pages, width, height)
    infer = folder / "infer.jsonl"
    infer.write_text("\n".join(infer_lines()) + "\n", encoding="utf-8")
    out = {"benchmark": bench, "infer": infer, "pdfs": folder / "pdfs"}
    for role, (name, text) in PROMPT_FILES.items():
        path = folder / "prompts" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        out[role] = path
    return out


# --------------------------------------------------------------------------- comparing


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def our_rows(run: Path) -> dict[str, list[list[Any]]]:
    """Our score rows reduced to what the released score files hold and the summary reads:
    pages (question id, status, TP, FP, FN, P, R, F1), bbox and facts (question id, page,
    item id, status, label of an ok item), answer (question id, status, verdict, tag)."""
    from scanrag.rundir import RunDir

    samples = {s.id: s for s in RunDir(run).samples()[0]}

    def qid(sample_id: str) -> str:
        sample = samples.get(sample_id)
        return str(sample.metadata.get("repeat_of") or sample_id) if sample else sample_id

    out: dict[str, list[list[Any]]] = {stage: [] for stage in STAGES}
    for row in _jsonl(run / "scores.jsonl"):
        if row["status"] == "skipped":
            continue
        q = qid(row["sample_id"])
        if row["scorer"] == "pages":
            m, c = row["metrics"], row["counts"]
            counts = [int(c[k]) for k in ("tp", "fp", "fn")]
            out["pages"].append([q, "ok", *counts, m["precision"], m["recall"], m["f1"]])
        elif row["scorer"] in ("region", "fact"):
            key, name = ("bbox", "gold_id") if row["scorer"] == "region" else ("facts", "fact_id")
            for u in row["details"]["units"]:
                label = u.get("label") if u["status"] == "ok" else None
                out[key].append([q, u["page"], u[name], u["status"], label])
        elif row["scorer"] == "answer":
            correct = row["metrics"].get("correct")
            verdict = None if correct is None else correct == 1.0
            tag = bool(row["details"].get("has_answer_tag"))
            out["answer"].append([q, row["status"], verdict, tag])
    return {k: sorted(v, key=repr) for k, v in out.items()}


def compare(golden: Any, mine: Any, path: str = "") -> tuple[int, list[str]]:
    """(numbers compared, differences) of two summaries; floats equal to 1e-12 (relative)."""
    if isinstance(golden, dict) and isinstance(mine, dict):
        total, diffs = 0, []
        for key in sorted(set(golden) | set(mine)):
            n, found = compare(golden.get(key), mine.get(key), f"{path}.{key}")
            total, diffs = total + n, diffs + found
        return total, diffs
    same = golden == mine
    if isinstance(golden, float) and isinstance(mine, int | float):
        same = abs(golden - mine) <= 1e-12 * max(1.0, abs(golden))
    return 1, [] if same else [f"{path}: released {golden!r}, ours {mine!r}"]
