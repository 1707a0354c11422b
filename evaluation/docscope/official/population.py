"""The population the official profile imports from an ``infer.jsonl``: every record, as
DocScope's released scorers score them.

A repeated question id is its own item (``<id>#2``, ``<id>#3``... with
``metadata["repeat_of"]``: the released scorers score every record); a question id missing
from the benchmark is an item with no gold boxes or facts, the record's ``gold_pages`` and
``gold_answer`` if any (the released scorers fall back to them); a record without
``question_id`` is keyed ``None``, as the released scorers key it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scanrag.evaluation.docscope.gold import NOT_IN_BENCHMARK
from scanrag.evaluation.docscope.profiles import OFFICIAL_NAME, REPEAT_KEY, SAMPLE_KEY
from scanrag.schemas import Sample


def unknown_sample(sample_id: str, qid: str, record: Mapping[str, Any]) -> Sample:
    """An item for a question id missing from the benchmark, as the released scorers score it:
    no gold boxes or facts, the record's ``gold_pages`` and ``gold_answer`` if it has them."""
    metadata: dict[str, Any] = {
        NOT_IN_BENCHMARK: True,
        SAMPLE_KEY: OFFICIAL_NAME,
        "question_id": qid,
        "record_question": record.get("question", ""),
        "record_gold_answer": record.get("gold_answer", ""),
    }
    if isinstance(record.get("gold_pages"), list):
        metadata["record_gold_pages"] = record["gold_pages"]
    question = record.get("question")
    gold = record.get("gold_answer")
    return Sample(
        id=sample_id,
        doc_ids=["not-in-benchmark.pdf"],
        question=question if isinstance(question, str) and question else "(not in the benchmark)",
        answer=gold if isinstance(gold, str) else None,
        metadata=metadata,
    )


def repeat(sample: Sample, sample_id: str, qid: str, occurrence: int) -> Sample:
    """``sample`` again, as the item of the ``occurrence``-th record of its question."""
    metadata = dict(sample.metadata) | {REPEAT_KEY: qid, "occurrence": occurrence}
    return sample.model_copy(update={"id": sample_id, "metadata": metadata})


def official_items(
    records: Sequence[tuple[int, dict[str, Any]]],
    samples: Mapping[str, Sample],
    repeated: list[str],
    unknown: list[str],
) -> list[tuple[dict[str, Any], Sample]]:
    """Every record with the sample it is scored against (see the module docstring); the
    question ids seen again and those missing from the benchmark are added to ``repeated``
    and ``unknown``."""
    seen: dict[str, int] = {}
    items = []
    for _, record in records:
        qid = str(record.get("question_id"))  # "None" without one, as the released code keys it
        seen[qid] = seen.get(qid, 0) + 1
        occurrence = seen[qid]
        sample_id = qid if occurrence == 1 else f"{qid}#{occurrence}"
        if occurrence == 2:
            repeated.append(qid)
        base = samples.get(qid)
        if base is None:
            if occurrence == 1:
                unknown.append(qid)
            sample = unknown_sample(sample_id, qid, record)
        else:
            sample = base if occurrence == 1 else repeat(base, sample_id, qid, occurrence)
        items.append((record, sample))
    return items
