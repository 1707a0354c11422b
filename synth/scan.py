"""Planted inconsistencies for scan-style (ScholScan) documents.

Two errors go into every scan document, each spread over two sections far apart:

* ``DHP`` (data handling & preprocessing): the methods section and the results section give
  different counts for the same set of participant records retained after quality control.
* ``CF`` (computation & formulae): a table's Total row does not equal the sum of its rows,
  while a later summary paragraph states the correct sum.

:func:`plan_errors` returns the blocks to schedule in the body flow and a function that, once
the document is laid out, turns what was drawn into :class:`PlantedError` records.
"""

from __future__ import annotations

from collections.abc import Callable

from scanrag.synth.builder import Block, DocumentBuilder
from scanrag.synth.model import PlacedRegion, PlantedError

Scheduled = list[tuple[float, str, Block]]


def plan_errors(b: DocumentBuilder) -> tuple[Scheduled, Callable[[], list[PlantedError]]]:
    """Blocks (with flow thresholds and section titles) and the error-record factory."""
    rng = b.rng
    placed: dict[str, PlacedRegion] = {}

    def keep(key: str) -> Callable[[PlacedRegion], None]:
        return lambda region: placed.__setitem__(key, region)

    # --- DHP: one count, two different numbers.
    while True:
        n1 = rng.randint(420, 1800)
        n2 = n1 + rng.choice((-1, 1)) * rng.randint(12, 90)
        # --- CF: a table total that does not add up.
        counts = [rng.randint(150, 900) for _ in range(4)]
        total = sum(counts)
        wrong = total + rng.choice((-1, 1)) * rng.randint(10, 60)
        printed = {f"{v:,}" for v in (n1, n2, *counts, total, wrong)}
        if len(printed) == 8 and not printed & b.used_values:
            break
    b.used_values |= printed
    dhp1 = (
        f"After quality control, {b.main} retained {n1:,} participant records for the final "
        "analysis."
    )
    dhp2 = (
        f"All results reported in this section are based on the {n2:,} participant records "
        "retained after quality control."
    )
    sites = [b.new_entity() for _ in counts]
    rows = [[s.label, f"{c:,}"] for s, c in zip(sites, counts, strict=True)]
    rows.append(["Total", f"{wrong:,}"])
    cf_text = (
        f"Across its four specimen collection sites, {b.main} gathered {total:,} specimens "
        "in total."
    )
    anchors: dict[str, str] = {}

    def text_block(key: str, sentence: str) -> Block:
        sentences = b.filler(2)
        sentences.insert(1, sentence)
        return b.paragraph(sentences, on_drawn=keep(key))

    def table_drawn(anchor: str, whole: PlacedRegion, _rows: list[PlacedRegion]) -> None:
        anchors["cf_table"] = anchor
        placed["cf_table"] = whole

    table = b.table(
        f"Specimens collected per {b.topic.unit_kind}",
        [b.topic.unit_kind.capitalize(), "Specimens"],
        rows,
        [],
        on_drawn=table_drawn,
    )
    scheduled: Scheduled = [
        (0.08, "Methods and Data Collection", text_block("dhp1", dhp1)),
        (0.3, "Specimen Collection by Site", table),
        (0.5, "Summary of Collected Material", text_block("cf_text", cf_text)),
        (0.7, "Results", text_block("dhp2", dhp2)),
    ]

    def finalize() -> list[PlantedError]:
        a, c = placed["dhp1"], placed["dhp2"]
        t, s = placed["cf_table"], placed["cf_text"]
        anchor = anchors["cf_table"]
        dhp_desc = (
            f"The number of participant records retained after quality control is {n1:,} in "
            f"the methods section (page {a.page}) but {n2:,} in the results section "
            f"(page {c.page})."
        )
        listed = ", ".join(f"{v:,}" for v in counts[:-1]) + f" and {counts[-1]:,}"
        cf_desc = (
            f"The Total row of {anchor} (page {t.page}) reports {wrong:,} specimens, but the "
            f"per-site counts add up to {total:,}, the total the summary on page {s.page} gives."
        )
        return [
            PlantedError(
                family="DHP",
                description=dhp_desc,
                question=(
                    f"Check how {b.main} counts its participant records across the sections of "
                    "this report and report any inconsistency, with its location."
                ),
                answer=dhp_desc,
                locations=[a, c],
                facts=[(0, dhp1), (1, dhp2)],
                reasoning_steps=[
                    f"The methods section (page {a.page}) says {n1:,} participant records were "
                    "retained after quality control.",
                    f"The results section (page {c.page}) says its analyses use {n2:,} records "
                    "retained after quality control.",
                    f"Both describe the same retained sample, yet {n1:,} differs from {n2:,}, "
                    "so the counts are inconsistent.",
                ],
                values=[f"{n1:,}", f"{n2:,}"],
            ),
            PlantedError(
                family="CF",
                description=cf_desc,
                question=(
                    f"Check how {b.main} computes the total of the specimens collected per "
                    "site, and report each computational error with its location."
                ),
                answer=cf_desc,
                locations=[t, s],
                facts=[(0, f"{anchor} reports a total of {wrong:,} specimens."), (1, cf_text)],
                reasoning_steps=[
                    f"{anchor} (page {t.page}) lists {listed} specimens for the four sites.",
                    f"These per-site counts sum to {total:,}.",
                    f"The Total row of {anchor} reports {wrong:,}, which does not equal {total:,}.",
                    f"The summary on page {s.page} states {total:,} specimens in total, "
                    "confirming that the table's total is miscomputed.",
                ],
                values=[f"{wrong:,}", f"{total:,}"],
            ),
        ]

    return scheduled, finalize
