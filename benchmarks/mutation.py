"""Seeded AST mutation testing of the scoring and parsing core (not part of CI).

For every module in :data:`MODULES` the script makes small edits to its syntax tree, one at a
time, and runs only the tests that cover that module (``-x -q -p no:cacheprovider``). A mutant
whose tests fail (or hang past the time limit) is *killed*; one whose tests pass *survived*:
no test notices the change. The figure per module is the share of non-equivalent mutants
killed. Equivalent mutants (edits that cannot change behavior) are listed by id in
:data:`EQUIVALENT`, each with a one-line reason, after review; never to reach a target.

Mutation operators (one mutant per site and replacement):

* arithmetic ``+ - * / // % **`` (also in ``x op= y``): ``+``↔``-``, ``*``↔``/``,
  ``//``→``/``, ``%``→``//``, ``**``→``*``; unary minus removed;
* comparisons: ``<``→``<=``, ``<=``→``<``, ``>``→``>=``, ``>=``→``>``, ``==``↔``!=``,
  ``is``↔``is not``, ``in``↔``not in``;
* constants: a number ``n`` → ``n + 1`` and → ``0`` (``0`` → ``1``), ``True``↔``False``,
  a non-empty string → ``""``;
* boolean operators: ``and``↔``or``; ``not x`` → ``x``;
* returns: ``return <expr>`` → ``return None``.

Left alone, as they carry no behavior: docstrings, type annotations, ``TypeVar``/``Literal``
arguments, the text of exception messages and of log calls, ``__all__``, and
``if TYPE_CHECKING:`` / ``if __name__ == "__main__":`` blocks.

How a mutant runs. The source files are never edited: each mutant runs in a forked child of
this process, where an import hook compiles the mutated tree in place of the module's file
(the child checks that the hook was used, else the mapping is wrong and the run stops). The
parent imports the third-party libraries once; every child drops the project's own modules
from ``sys.modules`` before running pytest, so they (and the tests' ``from x import y``
names) are loaded afresh with the mutant. At the end the script checks that no source file
changed (hash before and after).

Usage::

    nice -n 10 python benchmarks/mutation.py                       # every module, every mutant
    nice -n 10 python benchmarks/mutation.py --module scanrag.evaluation.stats \
        --max-per-module 80 --seed 1
    python benchmarks/mutation.py --list --module scanrag.evaluation.stats  # ids, edits; no run
    python benchmarks/mutation.py --show 'scanrag.evaluation.stats:mean:42:11:Add->Sub'
    python benchmarks/mutation.py --json out.json --survivors      # survivors, with their edits

Modules that are not on this branch yet (``MODULES`` entries whose file is absent) are
reported as ``absent`` and skipped.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import random
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PROJECT_PACKAGES = (
    "scanrag",
    "indexes",
    "retrievers",
    "agents",
    "graphs",
    "evaluation",
    "loaders",
    "synth",
    "tests",
    "conftest",
)

# Module → the test files that cover it (run with -x; keep the list to the tests that
# exercise the module, so that a run stays short).
MODULES: dict[str, list[str]] = {
    "scanrag.evaluation.stats": [
        "tests/evaluation/test_stats.py",
        "tests/evaluation/test_stats_bootstrap.py",
    ],
    "scanrag.evaluation.stats_agreement": [
        "tests/evaluation/test_stats.py",
        "tests/evaluation/test_stats_agreement.py",
    ],
    "scanrag.evaluation.scholscan.formula": [
        "tests/evaluation/scholscan/test_formula.py",
        "tests/evaluation/scholscan/test_scorer.py",
    ],
    "scanrag.evaluation.docscope.region": [
        "tests/evaluation/docscope/test_region.py",
        "tests/evaluation/docscope/test_region_aggregate.py",
        "tests/evaluation/docscope/test_official_profile.py",
    ],
    "scanrag.evaluation.docscope.region_geometry": [
        "tests/evaluation/docscope/test_region_geometry.py"
    ],
    "scanrag.evaluation.docscope.geometry": ["tests/evaluation/docscope/test_geometry.py"],
    "scanrag.agents.citations": [
        "tests/agents/test_citations.py",
        "tests/agents/test_citations_abbreviations.py",
        "tests/agents/test_citations_edges.py",
    ],
    "scanrag.evaluation.docscope.answer_rules": [
        "tests/evaluation/docscope/test_answer_rules.py",
        "tests/evaluation/docscope/test_answer_rules_edges.py",
    ],
    "scanrag.evaluation.sinbench.metrics": [
        "tests/evaluation/sinbench/test_metrics.py",
        "tests/evaluation/sinbench/test_anchor_keys.py",
        "tests/evaluation/sinbench/test_scorer.py",
    ],
    "scanrag.evaluation.docscope.pages": [
        "tests/evaluation/docscope/test_pages.py",
        "tests/evaluation/docscope/test_pages_rows.py",
    ],
    "scanrag.evaluation.docscope.completeness": [
        "tests/evaluation/docscope/test_completeness_layout.py",
        "tests/evaluation/docscope/test_completeness.py",
    ],
    "scanrag.evaluation.faithfulness.meta": [
        "tests/evaluation/faithfulness/test_meta.py",
        "tests/evaluation/faithfulness/test_scorer.py",
    ],
    "scanrag.evaluation.docscope.official.parser": [
        "tests/evaluation/docscope/official/test_parser.py",
        "tests/evaluation/docscope/official/test_parser_edges.py",
    ],
    "scanrag.evaluation.docscope.official.summary": [
        "tests/evaluation/docscope/official/test_summary.py",
        "tests/evaluation/docscope/test_official_profile.py",
    ],
    "scanrag.evaluation.docscope.profiles": [
        "tests/evaluation/docscope/test_profiles.py",
        "tests/evaluation/docscope/test_official_profile.py",
    ],
    "scanrag.evaluation.docscope.official.view": [
        "tests/evaluation/docscope/official/test_view.py",
        "tests/evaluation/docscope/test_official_profile.py",
    ],
    "scanrag.evaluation.docscope.profiled": [
        "tests/evaluation/docscope/test_profiles.py",
        "tests/evaluation/docscope/test_official_profile.py",
        "tests/evaluation/docscope/test_official_pages.py",
    ],
    "scanrag.evaluation.docscope.gold": [
        "tests/evaluation/docscope/test_official_edge.py",
        "tests/evaluation/docscope/test_official_fact.py",
        "tests/loaders/test_docscope_profile.py",
    ],
    "scanrag.evaluation.docscope.reading": [
        "tests/evaluation/docscope/test_official_region.py",
        "tests/evaluation/docscope/test_region_geometry.py",
    ],
    "scanrag.evaluation.docscope.labelling": [
        "tests/evaluation/docscope/test_official_fact.py",
        "tests/evaluation/docscope/test_official_region.py",
        "tests/evaluation/docscope/test_fact.py",
        "tests/evaluation/docscope/test_region.py",
    ],
    "scanrag.evaluation.docscope.region_page": [
        "tests/evaluation/docscope/test_official_region.py",
        "tests/evaluation/docscope/test_region_aggregate.py",
        "tests/evaluation/docscope/test_judge_prompts.py",
    ],
    "scanrag.evaluation.docscope.fact": [
        "tests/evaluation/docscope/test_fact.py",
        "tests/evaluation/docscope/test_official_fact.py",
        "tests/evaluation/docscope/test_judge_prompts.py",
    ],
    "scanrag.evaluation.docscope.answer": [
        "tests/evaluation/docscope/test_answer.py",
        "tests/evaluation/docscope/test_official_answer.py",
        "tests/evaluation/docscope/test_judge_prompts.py",
    ],
    "scanrag.evaluation.docscope.importer": [
        "tests/evaluation/docscope/test_importer.py",
        "tests/evaluation/docscope/test_official_run.py",
        "tests/evaluation/docscope/official/test_view.py",
        "tests/evaluation/docscope/test_official_profile.py",
    ],
    # Shared reply parsing (JSON objects in replies, verdict words): each module of the package.
    "scanrag.parsing": ["tests/scanrag/parsing"],
    # MMLongBench-Doc official mode: a package entry stands for each of its modules.
    "scanrag.evaluation.mmlongbench": [
        "tests/evaluation/mmlongbench/test_official.py",
        "tests/evaluation/mmlongbench/test_metrics.py",
        "tests/evaluation/mmlongbench/test_scorer.py",
        "tests/evaluation/mmlongbench/test_profiles.py",
        "tests/evaluation/mmlongbench/test_expressions.py",
    ],
}

_BY_NAME = "the field name is an alias choice and populate_by_name accepts it too: either suffices"

_CENTER = "cell centers lie strictly between two consecutive distinct edges, never on a box edge"
_NO_CELL = (
    "a zero-width, zero-height or inverted box never contains a cell center"
    ", so keeping it only adds edges (finer cells, same area)"
)

_HYPHEN = (
    "of the three labels only not_covered has a separator, and 'notcovered' is an alias of it; "
    "any other word fails the label validation either way"
)

_ONE_NUMBER = "setting years aside from a single number keeps it (the `or found` fallback)"

_PASSED = "model default never used: parse_official passes this field for every object it makes"
_ANCHORED = "the pattern is anchored at ^ without MULTILINE: it matches at most once"
_COVERED = (
    "unreachable: the sentence spans cover the whole text, so every citation start lies in one "
    "and the index is always in range"
)

_FROM_BRACE = "text from a '{' decodes to an object or not at all (then the value is None, no dict)"

_AFTER_OPEN = "the closing fence is searched after an opening one: its index is never 0"
_NON_EMPTY = "a slice of the stack's end is empty exactly when the stack is"

# Reviewed equivalent mutants: id → why the edit cannot change behavior.
EQUIVALENT: dict[str, str] = {
    # scanrag.agents.citations
    "scanrag.agents.citations:<module>:40:16:const:'\"'->''": (
        "a straight quote is always in the set that ends a quoted value"
    ),
    "scanrag.agents.citations:_Reader.read:101:61:const:'\\n'->''": (
        "a newline is not skipped and starts no key, so the next check stops at the same place "
        "with the same note"
    ),
    "scanrag.agents.citations:_Reader._numbers:157:45:const:1->0": (
        "group(0) only adds the leading spaces of the number, which float() ignores"
    ),
    "scanrag.agents.citations:_answer:272:68:const:1->0": (
        "the answer group runs to the end of the match"
    ),
    # scanrag.evaluation.stats
    "scanrag.evaluation.stats:bootstrap_ratio_ci:191:59:cmp0:Gt->GtE": (
        "inner guard of the division: a zero denominator is masked to NaN by the outer where"
    ),
    "scanrag.evaluation.stats:bootstrap_ratio_ci:191:83:const:1->2": (
        "the fill value only replaces zero denominators, whose draws the outer where drops"
    ),
    "scanrag.evaluation.stats:bootstrap_ratio_ci:191:83:const:1->0": (
        "the fill value only replaces zero denominators, whose draws the outer where drops"
    ),
    # scanrag.evaluation.stats_agreement
    "scanrag.evaluation.stats_agreement:_confusion:44:39:const:True->False": (
        "zip(strict=...): every caller checked the lengths with _check_pair first"
    ),
    "scanrag.evaluation.stats_agreement:accuracy:55:57:const:True->False": (
        "zip(strict=...): the lengths were checked with _check_pair first"
    ),
    "scanrag.evaluation.stats_agreement:_confusion:45:11:boolop:And->Or": (
        "every caller passes all observed classes, so both memberships always hold"
    ),
    "scanrag.evaluation.stats_agreement:_confusion:46:42:const:1->2": (
        "doubling every cell: F1, recall, kappa and MCC are ratios of same-degree counts"
    ),
    "scanrag.evaluation.stats_agreement:kendall_tau_b:162:11:const:2->0": (
        "n < 2 has no pairs: the zero denominator returns None just the same"
    ),
    "scanrag.evaluation.stats_agreement:kendall_tau_b:165:23:const:1->0": (
        "range(n) adds an i = n - 1 step that compares against an empty slice"
    ),
    "scanrag.evaluation.stats_agreement:kendall_tau_b:173:12:binop:FloorDiv->Div": (
        "n(n-1) is even, so / and // give the same number"
    ),
    # scanrag.evaluation.mmlongbench.official
    "scanrag.evaluation.mmlongbench.official:_decimals:107:31:unary:USub->drop": (
        "str(float) holds at most one point, so split('.') has at most two parts: [1] is [-1]"
    ),
    # scanrag.parsing.jsonscan
    "scanrag.parsing.jsonscan:fenced_blocks:59:11:cmp0:Lt->LtE": _AFTER_OPEN,
    "scanrag.parsing.jsonscan:fenced_blocks:59:19:const:0->1": _AFTER_OPEN,
    "scanrag.parsing.jsonscan:_scan:77:26:const:False->True": (
        "the cut flag is read only when no closing index was found"
    ),
    "scanrag.parsing.jsonscan:_decode:127:24:const:False->True": (
        "the lenient flag is read only when ok"
    ),
    "scanrag.parsing.jsonscan:_first_in:172:15:boolop:And->Or": _FROM_BRACE,
    "scanrag.parsing.jsonscan:_repaired:184:20:boolop:And->Or": _FROM_BRACE,
    "scanrag.parsing.jsonscan:_decoded_spans:97:26:const:1->0": (
        "the character at end is a closer, not an opener: the next step moves past it"
    ),
    "scanrag.parsing.jsonscan:_first_in:179:17:const:False->True": (
        "the repaired flag is read only when an object was found"
    ),
    "scanrag.parsing.jsonscan:close_truncated:218:20:const:'\"'->''": (
        "the substitution's own pattern ends with a quote: without one nothing is replaced"
    ),
    "scanrag.parsing.jsonscan:close_truncated:218:36:const:1->2": _NON_EMPTY,
    "scanrag.parsing.jsonscan:close_truncated:218:36:const:1->0": _NON_EMPTY,
    # scanrag.evaluation.docscope.importer
    "scanrag.evaluation.docscope.importer:_span:138:59:cmp1:Lt->LtE": (
        "start == end slices the empty string, which is what the else branch returns"
    ),
    "scanrag.evaluation.docscope.importer:import_infer:299:57:const:'json'->''": (
        "the dataset report holds only strings, numbers, lists and dicts: every dump mode gives "
        "the same JSON"
    ),
    "scanrag.evaluation.docscope.importer:import_infer:313:38:boolop:Or->And": (
        "the docscope loader always sets source to the benchmark file: both name the same file"
    ),
    # scanrag.evaluation.scholscan.formula
    "scanrag.evaluation.scholscan.formula:LocationCounts:47:47:const:True->False": _BY_NAME,
    "scanrag.evaluation.scholscan.formula:LocationCounts:49:63:const:'gold'->''": _BY_NAME,
    "scanrag.evaluation.scholscan.formula:LocationCounts:50:62:const:'hit'->''": _BY_NAME,
    "scanrag.evaluation.scholscan.formula:LocationCounts:51:64:const:'extra'->''": _BY_NAME,
    "scanrag.evaluation.scholscan.formula:ReasoningCounts:70:47:const:True->False": _BY_NAME,
    "scanrag.evaluation.scholscan.formula:ReasoningCounts:72:63:const:'gold'->''": _BY_NAME,
    "scanrag.evaluation.scholscan.formula:ReasoningCounts:73:66:const:'reached'->''": _BY_NAME,
    "scanrag.evaluation.scholscan.formula:ScholScanCounts:90:47:const:True->False": _BY_NAME,
    "scanrag.evaluation.scholscan.formula:ScholScanCounts:93:50:const:'existence'->''": _BY_NAME,
    # scanrag.evaluation.sinbench.metrics
    "scanrag.evaluation.sinbench.metrics:anchor_keys:110:11:const:'fig'->''": (
        "a key of empty kind (':2') normalizes to the figure key, as 'fig' does"
    ),
    "scanrag.evaluation.sinbench.metrics:anchor_keys:120:34:const:1->2": (
        "a key holds one colon: split(':', 1) and split(':', 2) agree"
    ),
    "scanrag.evaluation.sinbench.metrics:kendall_tau_order:173:60:const:1->0": (
        "b = a adds a comparison of a position with itself, never an inversion"
    ),
    "scanrag.evaluation.sinbench.metrics:kendall_tau_order:173:69:cmp0:Gt->GtE": (
        "the assignment is one-to-one, so no two gold positions are equal"
    ),
    "scanrag.evaluation.sinbench.metrics:chain_metrics:206:38:cmp0:GtE->Gt": (
        "a normalized grade k/3 would have to equal tau - 1e-9 exactly to tell > from >="
    ),
    # scanrag.evaluation.docscope.official.parser
    "scanrag.evaluation.docscope.official.parser:<module>:92:76:const:True->False": (
        "every alternative ends in a literal '.', and no listed word plus '.' starts another, "
        "so the alternation order never changes what is matched"
    ),
    "scanrag.evaluation.docscope.official.parser:OfficialCitation:108:20:const:'none'->''": _PASSED,
    "scanrag.evaluation.docscope.official.parser:OfficialCitation:111:22:const:0->1": _PASSED,
    "scanrag.evaluation.docscope.official.parser:OfficialCitation:112:20:const:0->1": _PASSED,
    "scanrag.evaluation.docscope.official.parser:OfficialCitation:113:26:const:True->False": (
        _PASSED
    ),
    "scanrag.evaluation.docscope.official.parser:OfficialParse:124:27:const:False->True": _PASSED,
    "scanrag.evaluation.docscope.official.parser:_citation_meta:157:69:const:'none'->''": (
        "an empty doc_page falls through to the `.strip() or 'none'` of the returned value"
    ),
    "scanrag.evaluation.docscope.official.parser:_clean:208:52:const:1->2": _ANCHORED,
    "scanrag.evaluation.docscope.official.parser:_clean:208:52:const:1->0": _ANCHORED,
    "scanrag.evaluation.docscope.official.parser:_clean:209:48:const:1->2": _ANCHORED,
    "scanrag.evaluation.docscope.official.parser:_clean:209:48:const:1->0": _ANCHORED,
    "scanrag.evaluation.docscope.official.parser:_citations:229:86:const:True->False": (
        "zip(strict=...): the masked text has the length of the text"
    ),
    "scanrag.evaluation.docscope.official.parser:_citations:237:20:binop:Sub->Add": _COVERED,
    "scanrag.evaluation.docscope.official.parser:_citations:237:37:const:1->2": _COVERED,
    "scanrag.evaluation.docscope.official.parser:_citations:237:37:const:1->0": _COVERED,
    "scanrag.evaluation.docscope.official.parser:_citations:242:41:cmp1:Lt->LtE": _COVERED,
    # scanrag.evaluation.docscope.official.view
    "scanrag.evaluation.docscope.official.view:reply_object:224:7:cmp1:Lt->LtE": (
        "find('{') and rfind('}') never return the same index"
    ),
    # scanrag.evaluation.docscope.profiles
    "scanrag.evaluation.docscope.profiles:official_twin:115:8:const:'__qualname__'->''": (
        "type(name, ...) sets __qualname__ to the name by itself; an extra '' attribute is unused"
    ),
    # scanrag.evaluation.docscope.completeness
    "scanrag.evaluation.docscope.completeness:page_check:77:57:const:1->2": (
        "any non-zero default for a missing fn gives False"
    ),
    "scanrag.evaluation.docscope.completeness:combination:111:90:const:True->False": (
        "zip(strict=...): 'PBF' and (p, b, f) both have 3"
    ),
    "scanrag.evaluation.docscope.completeness:_answerable:190:8:return:return->return None": (
        "the result is only read through `not`, where None and False agree"
    ),
    # scanrag.evaluation.docscope.answer_rules
    "scanrag.evaluation.docscope.answer_rules:Number.candidates:107:25:const:1.0->2.0": (
        "a scale of 1 adds value * 1, already in the set; no scale word is worth 2"
    ),
    "scanrag.evaluation.docscope.answer_rules:Number.candidates:107:25:const:1.0->0": (
        "a scale of 1 adds value * 1, already in the set; no scale is 0"
    ),
    "scanrag.evaluation.docscope.answer_rules:read_number:141:7:cmp0:Gt->GtE": _ONE_NUMBER,
    "scanrag.evaluation.docscope.answer_rules:read_number:141:20:const:1->0": _ONE_NUMBER,
    "scanrag.evaluation.docscope.answer_rules:levenshtein:163:7:cmp0:Lt->LtE": (
        "swapping two strings of equal length: the distance is symmetric"
    ),
    "scanrag.evaluation.docscope.answer_rules:match_scalar:228:44:const:'Str'->''": (
        "any format other than Int/Float takes the ANLS branch, which names its method Str"
    ),
    "scanrag.evaluation.docscope.answer_rules:_perfect_matching:241:35:const:0->1": (
        "no rows: all() over no row is True whatever the column count"
    ),
    "scanrag.evaluation.docscope.answer_rules:_perfect_matching.assign:252:8:return:return->return None": (  # noqa: E501
        "None and False are both falsy where the result is read (or, all)"
    ),
    # scanrag.evaluation.docscope.geometry
    "scanrag.evaluation.docscope.geometry:union_area:34:53:boolop:And->Or": _NO_CELL,
    "scanrag.evaluation.docscope.geometry:union_area:34:53:cmp0:Gt->GtE": _NO_CELL,
    "scanrag.evaluation.docscope.geometry:union_area:34:69:cmp0:Gt->GtE": _NO_CELL,
    "scanrag.evaluation.docscope.geometry:union_area:42:38:cmp0:LtE->Lt": _CENTER,
    "scanrag.evaluation.docscope.geometry:union_area:42:38:cmp1:LtE->Lt": _CENTER,
    "scanrag.evaluation.docscope.geometry:union_area:47:19:cmp0:LtE->Lt": _CENTER,
    "scanrag.evaluation.docscope.geometry:union_area:47:19:cmp1:LtE->Lt": _CENTER,
    "scanrag.evaluation.docscope.geometry:gold_vs_union:91:29:cmp0:Gt->GtE": (
        "the gold area is positive here, so the union (>= gold area) is too"
    ),
    "scanrag.evaluation.docscope.geometry:gold_vs_union:91:44:const:0.0->1.0": (
        "unreachable: the gold area is positive here, so the union (>= gold area) is too"
    ),
    # scanrag.evaluation.docscope.region_geometry
    "scanrag.evaluation.docscope.region_geometry:measure_boxes:63:15:boolop:Or->And": (
        "gold_vs_union returns the three scores all None (zero-area gold) or none None"
    ),
    # scanrag.evaluation.docscope.region
    "scanrag.evaluation.docscope.region:normalize_label:83:51:const:'_'->''": _HYPHEN,
    "scanrag.evaluation.docscope.region:normalize_label:83:69:const:'_'->''": _HYPHEN,
    "scanrag.evaluation.docscope.region:gold_index:107:27:const:1->0": (
        "the pattern is one group spanning the whole match: group(0) == group(1)"
    ),
    "scanrag.evaluation.docscope.region:labels_from:116:59:const:True->False": (
        "zip(strict=...): indices is built from the same items"
    ),
    "scanrag.evaluation.docscope.region:_PageOutcome:154:18:const:0->1": (
        "default never used: every _PageOutcome is built with its n_pred"
    ),
    "scanrag.evaluation.docscope.region:RegionScorer._row:296:79:const:True->False": (
        "zip(strict=...): labels_from and the gate give one label per gold box"
    ),
    "scanrag.evaluation.scholscan.formula:location_score:113:33:const:1->2": (
        "max(pred, 2) differs only at pred = 1 with an extra, where hit = 0, Dice = 0 and Loc "
        "clips to 0 for any lambda >= 0"
    ),
    "scanrag.evaluation.scholscan.formula:unrelated_penalty:128:7:cmp0:LtE->Lt": (
        "at n = 2 both branches give mu^2 (exp(-gamma * 0^q) = 1)"
    ),
}

# Calls whose string arguments are messages, not behavior.
_MESSAGE_CALLS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical"})
_SKIP_CALL_STRINGS = frozenset({"TypeVar", "Literal", "NewType"})


# --------------------------------------------------------------------------- mutants


@dataclass(frozen=True)
class Mutant:
    id: str
    module: str
    line: int
    col: int
    kind: str
    before: str
    after: str


_SWAP_BINOP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
}
_SWAP_CMP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_SWAP_BOOL: dict[type[ast.boolop], type[ast.boolop]] = {ast.And: ast.Or, ast.Or: ast.And}


def _name(node: ast.AST) -> str:
    return type(node).__name__


def _const_replacements(value: object) -> list[object]:
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int | float):
        out: list[object] = [value + 1]
        out.append(0 if value != 0 else 1)
        return list(dict.fromkeys(out))
    if isinstance(value, str) and value:
        return [""]
    return []


class _Sites(ast.NodeVisitor):
    """Collects (node path, kind, before, after, apply) for every mutation site."""

    def __init__(self) -> None:
        self.sites: list[tuple[ast.AST, str, str, str, str]] = []
        self.scope: list[str] = []
        self.skip: set[int] = set()

    # -- what is left alone
    def _skip_tree(self, node: ast.AST | None) -> None:
        if node is None:
            return
        for sub in ast.walk(node):
            self.skip.add(id(sub))

    def _docstring(self, body: list[ast.stmt]) -> None:
        first = body[0] if body else None
        value = first.value if isinstance(first, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            self._skip_tree(first)

    def visit_Module(self, node: ast.Module) -> None:
        self._docstring(node.body)
        self.generic_visit(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._docstring(node.body)
        self._skip_tree(node.returns)
        for arg in [*node.args.args, *node.args.posonlyargs, *node.args.kwonlyargs]:
            self._skip_tree(arg.annotation)
        for extra in (node.args.vararg, node.args.kwarg):
            if extra is not None:
                self._skip_tree(extra.annotation)
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = _function  # noqa: N815 - the NodeVisitor method names
    visit_AsyncFunctionDef = _function  # noqa: N815

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._docstring(node.body)
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._skip_tree(node.annotation)
        if isinstance(node.target, ast.Name) and node.target.id == "__all__":
            self._skip_tree(node)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            self._skip_tree(node)
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        src = ast.unparse(node.test)
        if src in ("TYPE_CHECKING", "typing.TYPE_CHECKING", "__name__ == '__main__'"):
            self._skip_tree(node)
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:
        if isinstance(node.exc, ast.Call):
            for arg in [*node.exc.args, *(k.value for k in node.exc.keywords)]:
                self._skip_strings(arg)
        self.generic_visit(node)

    def _skip_strings(self, node: ast.AST) -> None:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                self.skip.add(id(sub))

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called in _SKIP_CALL_STRINGS:
            self._skip_tree(node)
        elif isinstance(func, ast.Attribute) and called in _MESSAGE_CALLS:
            for arg in node.args:
                self._skip_strings(arg)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if getattr(node.value, "id", getattr(node.value, "attr", "")) == "Literal":
            self._skip_tree(node)
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        # The literal parts of an f-string are left alone; its expressions are mutated.
        for value in node.values:
            if isinstance(value, ast.Constant):
                self.skip.add(id(value))
        self.generic_visit(node)

    # -- mutation sites
    def _add(self, node: ast.AST, kind: str, before: str, after: str) -> None:
        if id(node) not in self.skip:
            self.sites.append((node, kind, before, after, ".".join(self.scope) or "<module>"))

    def visit_BinOp(self, node: ast.BinOp) -> None:
        new = _SWAP_BINOP.get(type(node.op))
        if new is not None:
            self._add(node, "binop", _name(node.op), new.__name__)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        new = _SWAP_BINOP.get(type(node.op))
        if new is not None:
            self._add(node, "augop", _name(node.op), new.__name__)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not | ast.USub):
            self._add(node, "unary", _name(node.op), "drop")
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for index, op in enumerate(node.ops):
            new = _SWAP_CMP.get(type(op))
            if new is not None:
                self._add(node, f"cmp{index}", _name(op), new.__name__)
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        self._add(node, "boolop", _name(node.op), _SWAP_BOOL[type(node.op)].__name__)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        for value in _const_replacements(node.value):
            self._add(node, "const", repr(node.value)[:40], repr(value))

    def visit_Return(self, node: ast.Return) -> None:
        value = node.value
        if value is not None and not (isinstance(value, ast.Constant) and value.value is None):
            self._add(node, "return", "return", "return None")
        self.generic_visit(node)


def _apply(node: ast.AST, kind: str, after: str) -> None:
    if kind in ("binop", "augop"):
        node.op = getattr(ast, after)()  # type: ignore[attr-defined]
    elif kind.startswith("cmp"):
        node.ops[int(kind[3:])] = getattr(ast, after)()  # type: ignore[attr-defined]
    elif kind == "boolop":
        node.op = getattr(ast, after)()  # type: ignore[attr-defined]
    elif kind == "return":
        node.value = ast.Constant(value=None)  # type: ignore[attr-defined]
    else:
        raise AssertionError(kind)


class _Replace(ast.NodeTransformer):
    """Replaces one node (found by identity) in a copied tree."""

    def __init__(self, target: ast.AST, kind: str, after: str) -> None:
        self.target = target
        self.kind = kind
        self.after = after

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            if self.kind == "unary":
                assert isinstance(node, ast.UnaryOp)
                return super().generic_visit(node.operand)
            if self.kind == "const":
                return ast.copy_location(ast.Constant(value=ast.literal_eval(self.after)), node)
            _apply(node, self.kind, self.after)
        return super().generic_visit(node)


def module_file(module: str) -> Path | None:
    """The file of a project module by its installed name: ``scanrag.agents.citations`` is
    agents/citations.py (pyproject.toml maps the card's top-level folders under scanrag)."""
    parts = module.split(".")
    if parts[0] == "scanrag" and len(parts) > 1 and (REPO / parts[1] / "__init__.py").is_file():
        parts = parts[1:]
    base = REPO / Path(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def expand(module: str) -> list[str]:
    """A package entry stands for each of its modules (``__init__`` only when it has code)."""
    path = module_file(module)
    if path is None or path.name != "__init__.py":
        return [module]
    subs = [f"{module}.{p.stem}" for p in sorted(path.parent.glob("*.py")) if p.stem != "__init__"]
    has_code = any(
        not isinstance(node, ast.Import | ast.ImportFrom | ast.Expr)
        for node in ast.parse(path.read_text(encoding="utf-8")).body
    )
    return ([module] if has_code or not subs else []) + subs


def mutants_of(module: str) -> tuple[ast.Module, list[tuple[Mutant, ast.AST]]]:
    path = module_file(module)
    assert path is not None, module
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    finder = _Sites()
    finder.visit(tree)
    out: list[tuple[Mutant, ast.AST]] = []
    seen: set[str] = set()
    for node, kind, before, after, scope in finder.sites:
        line, col = getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
        ident = f"{module}:{scope}:{line}:{col}:{kind}:{before}->{after}"
        if ident in seen:
            continue
        seen.add(ident)
        out.append((Mutant(ident, module, line, col, kind, before, after), node))
    return tree, out


def mutated_tree(tree: ast.Module, node: ast.AST, mutant: Mutant) -> ast.Module:
    # Deep-copy with a memo so the target node is found in the copy.
    memo: dict[int, Any] = {}
    new_tree = copy.deepcopy(tree, memo)
    target = memo[id(node)]
    replaced = _Replace(target, mutant.kind, mutant.after).visit(new_tree)
    assert isinstance(replaced, ast.Module)
    return ast.fix_missing_locations(replaced)


def show(mutant: Mutant, tree: ast.Module, node: ast.AST) -> str:
    """The mutated statement (unparsed) next to the original one."""
    statement = _enclosing_statement(tree, node)
    new = mutated_tree(tree, node, mutant)
    new_statement = _statement_at(new, statement)
    return f"{mutant.id}\n  - {_one_line(statement)}\n  + {_one_line(new_statement)}"


def _enclosing_statement(tree: ast.Module, node: ast.AST) -> ast.AST:
    best: ast.AST = node
    for sub in ast.walk(tree):
        if isinstance(sub, ast.stmt) and not isinstance(
            sub,
            ast.FunctionDef
            | ast.AsyncFunctionDef
            | ast.ClassDef
            | ast.If
            | ast.For
            | ast.While
            | ast.With
            | ast.Try,
        ):
            if any(n is node for n in ast.walk(sub)):
                best = sub
        elif isinstance(sub, ast.If | ast.While) and any(n is node for n in ast.walk(sub.test)):
            best = sub.test
        elif isinstance(sub, ast.For) and any(n is node for n in ast.walk(sub.iter)):
            best = sub.iter
    return best


def _statement_at(tree: ast.Module, like: ast.AST) -> ast.AST:
    for sub in ast.walk(tree):
        if (
            type(sub) is type(like)
            and getattr(sub, "lineno", None) == getattr(like, "lineno", None)
            and getattr(sub, "col_offset", None) == getattr(like, "col_offset", None)
        ):
            return sub
    return like


def _one_line(node: ast.AST) -> str:
    text = ast.unparse(node).replace("\n", " ⏎ ")
    return text if len(text) <= 160 else text[:157] + "..."


# --------------------------------------------------------------------------- running


class _Hook(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``module`` from a code object instead of its file."""

    def __init__(self, module: str, path: Path, code: Any) -> None:
        self.module = module
        self.path = path
        self.code = code
        self.used = False

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.module:
            return None
        is_package = self.path.name == "__init__.py"
        spec = importlib.util.spec_from_file_location(
            fullname,
            self.path,
            loader=self,
            submodule_search_locations=[str(self.path.parent)] if is_package else None,
        )
        return spec

    def create_module(self, spec: Any) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        self.used = True
        exec(self.code, module.__dict__)


def _drop_project_modules() -> None:
    for name in list(sys.modules):
        if name.split(".")[0] in PROJECT_PACKAGES or name.startswith("test_"):
            del sys.modules[name]


def _preload(tests: Sequence[str]) -> None:
    """Import pytest and the libraries the tests use, once, in the parent."""
    from importlib.metadata import entry_points

    import pytest  # noqa: F401

    for plugin in entry_points(group="pytest11"):
        with contextlib.suppress(Exception):  # preloading is only a speed-up
            plugin.load()
    for test in tests:
        for path in _test_files(test):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names = [node.module]
                for name in names:
                    with contextlib.suppress(Exception):
                        importlib.import_module(name)
    _drop_project_modules()


def _test_files(test: str) -> list[Path]:
    path = REPO / test
    if path.is_dir():
        return sorted(path.rglob("test_*.py"))
    return [path] if path.is_file() else []


EXIT_NOT_LOADED = 97
# --assert=plain: a failing assert fails the same, without rewriting (compiling) every module.
PYTEST_ARGS = ("-x", "-q", "-p", "no:cacheprovider", "--assert=plain")


def _run_child(module: str, code: Any, tests: Sequence[str], log: Path) -> int:
    """In a forked child: serve the mutant, run pytest, exit with its code."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.chdir(REPO)
    _drop_project_modules()
    hook = None
    if code is not None:
        path = module_file(module)
        assert path is not None
        hook = _Hook(module, path, code)
        sys.meta_path.insert(0, hook)
    import pytest

    status = int(pytest.main([*PYTEST_ARGS, *tests]))
    if hook is not None and not hook.used:
        return EXIT_NOT_LOADED
    return status


def run_once(
    module: str, code: Any, tests: Sequence[str], timeout: float, log: Path
) -> tuple[str, float]:
    """Run the tests against ``code`` (None: the module as it is) in a forked child.

    Returns (outcome, seconds): ``passed`` / ``failed`` / ``timeout`` / ``error``.
    """
    start = time.monotonic()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # child
        status = 1
        try:
            os.setpgid(0, 0)
            status = _run_child(module, code, tests, log)
        except BaseException:
            status = 3
        finally:
            os._exit(status)
    deadline = start + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout", time.monotonic() - start
        time.sleep(0.02)
    seconds = time.monotonic() - start
    code_ = os.waitstatus_to_exitcode(status)
    if code_ == 0:
        return "passed", seconds
    if code_ == EXIT_NOT_LOADED:
        return "not_loaded", seconds
    if code_ in (1, 3):  # tests failed / crashed under the mutant
        return "failed", seconds
    return "error", seconds


@dataclass
class ModuleResult:
    module: str
    status: str = "ok"
    generated: int = 0
    sampled: int = 0
    killed: int = 0
    survived: int = 0
    equivalent: int = 0
    timeouts: int = 0
    seconds: float = 0.0
    survivors: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float | None:
        judged = self.killed + self.survived
        return self.killed / judged if judged else None


def _source_hashes() -> dict[str, str]:
    out: dict[str, str] = {}
    for module in [sub for entry in MODULES for sub in expand(entry)]:
        path = module_file(module)
        if path is not None:
            out[module] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def run_module(
    module: str,
    tests: Sequence[str],
    max_mutants: int | None,
    seed: int,
    logs: Path,
    verbose: bool,
    only: set[str] | None = None,
) -> tuple[ModuleResult, list[str]]:
    result = ModuleResult(module)
    path = module_file(module)
    present = [t for t in tests if _test_files(t)]
    if path is None:
        result.status = "absent"
        return result, []
    if not present:
        result.status = "no tests"
        return result, []
    tree, mutants = mutants_of(module)
    result.generated = len(mutants)
    chosen = mutants
    if only is not None:
        chosen = [(m, n) for m, n in mutants if m.id in only]
    if max_mutants is not None and len(chosen) > max_mutants:
        chosen = random.Random(f"{seed}:{module}").sample(chosen, max_mutants)
        chosen.sort(key=lambda pair: (pair[0].line, pair[0].col, pair[0].id))
    result.sampled = len(chosen)
    _preload(present)
    log = logs / f"{module}.baseline.log"
    outcome, base_seconds = run_once(module, None, present, 600, log)
    if outcome != "passed":
        result.status = f"baseline {outcome} (see {log})"
        return result, []
    timeout = max(20.0, 4 * base_seconds)
    details: list[str] = []
    start = time.monotonic()
    for index, (mutant, node) in enumerate(chosen, 1):
        if mutant.id in EQUIVALENT:
            result.equivalent += 1
            continue
        try:
            code = compile(mutated_tree(tree, node, mutant), str(path), "exec")
        except (SyntaxError, ValueError, TypeError):
            result.killed += 1  # does not even compile
            continue
        log = logs / "last.log"
        outcome, seconds = run_once(module, code, present, timeout, log)
        if outcome == "not_loaded":
            result.status = f"the tests never imported {module}: fix MODULES"
            return result, details
        if outcome == "passed":
            result.survived += 1
            result.survivors.append(mutant.id)
            details.append(show(mutant, tree, node))
        else:
            result.killed += 1
            result.timeouts += outcome == "timeout"
        if verbose:
            print(f"  [{index}/{len(chosen)}] {outcome:8s} {seconds:5.1f}s {mutant.id}", flush=True)
    result.seconds = time.monotonic() - start
    return result, details


def _table(results: Sequence[ModuleResult]) -> str:
    names = ("gen", "run", "killed", "surv", "equiv", "rate")
    widths = (5, 5, 6, 5, 5, 7)
    head = f"{'module':40s} " + " ".join(f"{n:>{w}s}" for n, w in zip(names, widths, strict=True))
    lines = [head, "-" * len(head)]
    for r in results:
        if r.status != "ok":
            lines.append(f"{r.module:40s} {r.status}")
            continue
        rate = "-" if r.rate is None else f"{100 * r.rate:6.1f}%"
        lines.append(
            f"{r.module:40s} {r.generated:5d} {r.sampled:5d} {r.killed:6d} "
            f"{r.survived:5d} {r.equivalent:5d} {rate:>7s}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", action="append", help="module(s) to mutate (default: all)")
    parser.add_argument("--max-per-module", type=int, default=None, help="seeded sample size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--list", action="store_true", help="print the mutants, run nothing")
    parser.add_argument("--show", action="append", help="print one mutant's edit")
    parser.add_argument("--only", action="append", help="run only these mutant ids")
    parser.add_argument(
        "--only-from",
        type=Path,
        help="run only the mutant ids listed in this file (an earlier run's --survivors output)",
    )
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--logs", type=Path, default=None, help="pytest logs (default: a temp dir)")
    parser.add_argument("--survivors", action="store_true", help="print each survivor's edit")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)

    chosen = args.module or list(MODULES)
    unknown = [m for m in chosen if m not in MODULES]
    if unknown:
        parser.error(f"unknown module(s) {unknown}; known: {', '.join(MODULES)}")
    tests_of = {sub: MODULES[m] for m in chosen for sub in expand(m)}
    modules = list(tests_of)
    if args.show:
        for wanted in args.show:
            module = wanted.split(":")[0]
            tree, mutants = mutants_of(module)
            matches = [(m, n) for m, n in mutants if m.id == wanted]
            print(show(*matches[0][:1], tree, matches[0][1]) if matches else f"no mutant {wanted}")
        return 0
    if args.list:
        for module in modules:
            if module_file(module) is None:
                print(f"{module}: absent")
                continue
            tree, mutants = mutants_of(module)
            for mutant, node in mutants:
                mark = "  [equivalent]" if mutant.id in EQUIVALENT else ""
                print(show(mutant, tree, node) + mark)
        return 0

    import tempfile

    logs = args.logs or Path(tempfile.mkdtemp(prefix="mutation-"))
    logs.mkdir(parents=True, exist_ok=True)
    stale = [k for k in EQUIVALENT if k.split(":")[0] in MODULES and module_file(k.split(":")[0])]
    known_ids = {
        m.id for module in {k.split(":")[0] for k in stale} for m, _ in mutants_of(module)[1]
    }
    for key in stale:
        if key not in known_ids:
            print(f"warning: equivalent id no longer generated (source moved?): {key}")
    before = _source_hashes()
    results: list[ModuleResult] = []
    survivors: dict[str, list[str]] = {}
    try:
        for module in modules:
            print(f"== {module}", flush=True)
            only = set(args.only) if args.only else None
            if args.only_from:
                listed = args.only_from.read_text(encoding="utf-8").splitlines()
                only = (only or set()) | {
                    line.strip() for line in listed if line.startswith(module + ":")
                }
            result, details = run_module(
                module, tests_of[module], args.max_per_module, args.seed, logs, args.verbose, only
            )
            results.append(result)
            survivors[module] = details
            if args.survivors:
                for text in details:
                    print(text)
            print(_table([result]).splitlines()[-1], f"({result.seconds:.0f}s)", flush=True)
    finally:
        after = _source_hashes()
        changed = [m for m in before if before[m] != after.get(m)]
        if changed:
            print(f"error: source changed during the run: {changed}", file=sys.stderr)
    print()
    print(_table(results))
    if args.json:
        payload = [
            {**asdict(r), "rate": r.rate, "survivor_edits": survivors.get(r.module, [])}
            for r in results
        ]
        args.json.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
