"""Words for the synthetic corpus: invented names, topics, metrics and filler sentences.

Every entity name is an invented, pronounceable word that is unique across a whole corpus, so a
question naming an entity points at exactly the pages that mention it (BM25 finds them) and an
unanswerable question can name an entity that occurs nowhere.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_ONSETS = _words("b br c d dr f g gr h k kr l m n p qu r s sk st t tr v w z th pl fl sp bl")
_VOWELS = _words("a e i o u ae ei ou ia y")
_CODAS = ("", "", *_words("n r l s th nd rk x m st lv rn"))


class NameForge:
    """Hands out invented capitalised names, never the same one twice."""

    def __init__(self, rng: random.Random, taken: set[str] | None = None) -> None:
        self._rng = rng
        self.issued: set[str] = set(taken or ())

    def name(self) -> str:
        for _ in range(10_000):
            parts = [
                self._rng.choice(_ONSETS) + self._rng.choice(_VOWELS) + self._rng.choice(_CODAS)
                for _ in range(self._rng.choice((2, 2, 3)))
            ]
            word = "".join(parts).capitalize()
            if 6 <= len(word) <= 11 and word.lower() not in self.issued:
                self.issued.add(word.lower())
                return word
        raise RuntimeError("name space exhausted")


@dataclass(frozen=True)
class Metric:
    """A quantity the documents report, with the wording used to state and ask it.

    Templates use ``{ent}`` (e.g. "the Orvane division"), ``{year}``, ``{value}``, ``{unit}``.
    """

    key: str
    label: str  # table column / chart axis title
    noun: str  # "revenue", "number of residents"
    unit: str
    low: int
    high: int
    decimals: int
    sentence: str
    question: str

    def fmt(self, value: float) -> str:
        if self.decimals:
            return f"{value:,.{self.decimals}f}"
        return f"{int(value):,}"

    def draw(self, rng: random.Random) -> float:
        if self.decimals:
            scale = 10**self.decimals
            return rng.randint(self.low * scale, self.high * scale) / scale
        return float(rng.randint(self.low, self.high))


@dataclass(frozen=True)
class Topic:
    kind: str
    doc_type: str  # e.g. "Annual Report"
    main_pattern: str  # "{name} Industries"
    unit_kind: str  # what sub-entities are: "division", "district"...
    metrics: tuple[Metric, ...]
    sections: tuple[str, ...]
    nouns: tuple[str, ...]  # subject matter words for filler sentences


def _metric(spec: str) -> Metric:
    """Parse ``key|noun|unit|low|high|decimals|verb`` into a :class:`Metric`."""
    key, noun, unit, low, high, dec, verb = spec.split("|")
    return Metric(
        key=key,
        label=noun[0].upper() + noun[1:] + ("" if noun == unit else f" ({unit})"),
        noun=noun,
        unit=unit,
        low=int(low),
        high=int(high),
        decimals=int(dec),
        sentence=f"In {{year}}, {{ent}} {verb} {noun} of {{value}} {unit}.",
        question=f"What was the {noun} of {{ent}} in {{year}}, in {unit}?",
    )


def _topic(kind: str, doc_type: str, pattern: str, unit: str, metrics: str, sections: str,
           nouns: str) -> Topic:  # fmt: skip
    return Topic(
        kind=kind,
        doc_type=doc_type,
        main_pattern=pattern,
        unit_kind=unit,
        metrics=tuple(_metric(line.strip()) for line in metrics.strip().splitlines()),
        sections=tuple(t.strip() for t in sections.split("|")),
        nouns=tuple(n.strip() for n in nouns.split("|")),
    )


TOPICS: tuple[Topic, ...] = (
    _topic(
        "company", "Annual Report", "{name} Industries", "division",
        """
        revenue|revenue|thousand crowns|1200|98000|0|reported
        headcount|headcount|employees|150|9800|0|reported a
        output|output|tonnes|300|64000|0|reported an
        margin|operating margin|percent|2|38|1|reached an
        orders|order intake|contracts|150|4800|0|recorded an
        """,
        "Letter from the Board|Business Overview|Market Conditions|Operations|Supply Chain|"
        "Research and Development|Workforce|Financial Position|Risk Management|Sustainability|"
        "Outlook|Governance",
        "production lines|supplier contracts|warehouses|customer accounts|maintenance schedules|"
        "capital projects|pricing agreements",
    ),
    _topic(
        "city", "Municipal Survey", "City of {name}", "district",
        """
        population|population|residents|1500|96000|0|had a
        rainfall|annual rainfall|millimetres|310|1890|0|saw an
        trips|bus ridership|thousand trips|150|8800|0|logged a
        housing|housing completion count|dwellings|150|2900|0|reported a
        parks|park area|hectares|12|480|1|maintained a
        """,
        "Introduction|Demographics|Housing|Transport|Climate and Environment|Public Spaces|"
        "Utilities|Public Safety|Education|Planning Priorities",
        "bus corridors|public libraries|street lighting|water mains|community centres|"
        "zoning plans|cycle lanes",
    ),
    _topic(
        "study", "Research Report", "{name} Field Study", "site",
        """
        enrolled|enrolment|participants|150|2400|0|recorded an
        response|mean response time|milliseconds|180|990|1|measured a
        yield|crop yield|kilograms per plot|150|940|1|produced a
        specimens|specimen count|specimens|150|5200|0|reported a
        dropout|dropout rate|percent|1|29|1|observed a
        """,
        "Background|Study Design|Instruments|Field Procedures|Data Quality|Findings|"
        "Secondary Analyses|Discussion|Limitations|Recommendations",
        "measurement protocols|field instruments|consent forms|data logs|calibration checks|"
        "sampling frames|observation sheets",
    ),
    _topic(
        "cooperative", "Cooperative Yearbook", "{name} Growers Cooperative", "farm",
        """
        harvest|harvest|tonnes|150|7400|0|brought in a
        orchard|orchard area|hectares|11|390|1|tended an
        water|water use|megalitres|150|3100|0|recorded a
        workers|seasonal workforce|workers|150|1900|0|employed a
        sales|sales|thousand crowns|1100|42000|0|achieved
        """,
        "Chair's Statement|Membership|Growing Season|Harvest Results|Water and Soil|Labour|"
        "Marketing|Finances|Equipment|Next Season",
        "irrigation channels|packing sheds|seed stocks|grading lines|cold stores|soil surveys|"
        "delivery rounds",
    ),
    _topic(
        "port", "Port Authority Review", "Port of {name}", "terminal",
        """
        teu|container throughput|TEU|1500|88000|0|handled a
        calls|vessel call count|calls|150|3900|0|logged a
        cargo|bulk cargo volume|thousand tonnes|150|9600|0|moved a
        dwell|average dwell time|hours|11|190|1|recorded an
        cranes|crane productivity|moves per hour|11|64|1|achieved a
        """,
        "Foreword|Traffic Overview|Terminal Operations|Hinterland Links|Safety|Environment|"
        "Infrastructure Works|Finance|Customers|Outlook",
        "berths|quay cranes|rail sidings|gate lanes|dredging works|storage yards|"
        "pilotage services",
    ),
)  # fmt: skip

TOPIC_BY_KIND = {t.kind: t for t in TOPICS}

# Filler sentences carry no digits, so every number in a document is a planted value or a label.
_FILLER = (
    "{main} kept its attention on {noun} throughout the period under review.",
    "Staff at {other} reviewed the state of the {noun} and proposed modest changes.",
    "Several stakeholders asked for clearer reporting on {noun}, and this section responds.",
    "The approach to {noun} remained broadly unchanged from the previous edition.",
    "Coordination between {other} and the central office improved over the year.",
    "A review panel examined how {noun} could be organised more simply.",
    "Where comparisons are drawn, they rely on the same definitions as in earlier editions.",
    "Readers will find further detail on {noun} in the appendices of this report.",
    "The team at {other} documented its procedures for {noun} in a new handbook.",
    "Feedback collected by {main} pointed to steady progress on {noun}.",
    "No major disruption affected {noun} during the reporting period.",
    "Planning for {noun} now follows a shared calendar agreed with {other}.",
    "The figures below are presented without seasonal adjustment.",
    "{main} expects the work on {noun} to continue at a similar pace.",
    "An external adviser visited {other} and commented favourably on its {noun}.",
    "Budget discussions focused on the upkeep of {noun} and on staff training.",
    "Some earlier estimates were revised after the accounts were closed.",
    "Improvements to {noun} were phased so that daily work could continue.",
    "This part of the report summarises observations rather than formal targets.",
    "The managers at {other} shared their experience with {noun} at a regional meeting.",
)


def filler_sentences(
    rng: random.Random, n: int, main: str, others: list[str], nouns: tuple[str, ...]
) -> list[str]:
    """``n`` filler sentences from distinct templates (none contains a digit)."""
    templates = rng.sample(_FILLER, min(n, len(_FILLER)))
    return [
        t.format(main=main, other=rng.choice(others), noun=rng.choice(nouns)) for t in templates
    ]


def roman(value: int) -> str:
    """Lower-case roman numeral (front-matter page labels)."""
    table = (
        (1000, "m"),
        (900, "cm"),
        (500, "d"),
        (400, "cd"),
        (100, "c"),
        (90, "xc"),
        (50, "l"),
        (40, "xl"),
        (10, "x"),
        (9, "ix"),
        (5, "v"),
        (4, "iv"),
        (1, "i"),
    )
    out = []
    for amount, symbol in table:
        while value >= amount:
            out.append(symbol)
            value -= amount
    return "".join(out)
