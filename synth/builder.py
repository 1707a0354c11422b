"""Lays out one synthetic document page by page and records where every value landed.

The body is a flow of blocks (section headings, paragraphs, tables, bar and line charts); a
block that does not fit on the current page opens the next one, and the document ends when a
block would need a page past the target count. Front matter (title, contents, preface) is
drawn last, once the contents know which page each section starts on. Front-matter pages carry
lower-case roman numerals, body pages arabic numbers from 1, so printed labels differ from
physical page numbers.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import pymupdf

from scanrag.synth import pdfdraw as d
from scanrag.synth.model import PlacedRegion, PlantedFact
from scanrag.synth.vocab import Metric, NameForge, Topic, filler_sentences

# Fixed dates so the same seed gives byte-identical files.
PDF_DATE = "D:20240101000000Z"
GAP = 10.0  # vertical space between blocks
# Sub-entities per body page: enough that each name shows up on only a few pages.
ENTITIES_PER_PAGE = 4.0


class GenerationError(RuntimeError):
    """The requested layout could not be produced (e.g. too few pages for planted errors)."""


@dataclass
class Block:
    height: float
    draw: Callable[[d.Canvas, float], None]
    keep_with_next: float = 0.0  # room the following block needs on the same page
    title: str | None = None  # set for section headings


@dataclass(eq=False)
class Entity:
    name: str
    display: str  # "the Orvane division"
    label: str  # "Orvane division"


class DocumentBuilder:
    """Lays out one PDF: call :meth:`build_body` once, then
    :func:`scanrag.synth.finish.finish_document`."""

    def __init__(
        self,
        *,
        index: int,
        rng: random.Random,
        forge: NameForge,
        topic: Topic,
        n_pages: int,
        set_labels: bool,
        file_name: str,
    ) -> None:
        self.index, self.rng, self.forge, self.topic = index, rng, forge, topic
        self.n_pages, self.set_labels, self.file_name = n_pages, set_labels, file_name
        self.n_front = rng.randint(2, 4) if n_pages >= 12 else 2
        self.body_target = n_pages - self.n_front
        self.main_name = forge.name()
        self.main = topic.main_pattern.format(name=self.main_name)
        self.year = rng.randint(2021, 2024)
        self.years = list(range(self.year - 8, self.year))
        self.title = f"{self.main} {topic.doc_type} {self.year}"
        n_entities = max(12, int(self.body_target * ENTITIES_PER_PAGE))
        self.entities = [self.new_entity() for _ in range(n_entities)]
        self.others = [self.new_entity().display for _ in range(4)]
        self.used_cells: set[tuple[str, str, int]] = set()
        self.used_pairs: set[tuple[str, str]] = set()
        self.available = {m.key: list(self.entities) for m in topic.metrics}
        self.used_values: set[str] = set()
        self.facts: list[PlantedFact] = []
        self.sections: list[tuple[str, int]] = []  # (numbered title, physical page)
        self.n_tables = self.n_figures = 0
        self.doc = pymupdf.open()
        self.canvas: d.Canvas | None = None
        self.y = d.TOP
        self.body_pages = 0

    # ----------------------------------------------------------------- names and values

    def new_entity(self) -> Entity:
        name = self.forge.name()
        label = f"{name} {self.topic.unit_kind}"
        return Entity(name=name, display=f"the {label}", label=label)

    def unique_value(self, metric: Metric) -> tuple[float, str]:
        """A value for ``metric`` printed nowhere else in the document, while the metric's
        range has unused values left (very long documents may exhaust small ranges; repeats
        are then allowed, and multi-page questions never compare equal values)."""
        for _ in range(30):
            value = metric.draw(self.rng)
            text = metric.fmt(value)
            if text not in self.used_values:
                self.used_values.add(text)
                return value, text
        return value, text

    def filler(self, n: int) -> list[str]:
        """``n`` filler sentences (no digits in any of them)."""
        return filler_sentences(self.rng, n, self.main, self.others, self.topic.nouns)

    # ----------------------------------------------------------------- flow layout

    @property
    def page_no(self) -> int:
        return self.n_front + self.body_pages

    def _new_page(self) -> None:
        if self.canvas is not None:
            self.canvas.flush()
        page = self.doc.new_page(width=d.PAGE_W, height=d.PAGE_H)
        self.canvas = d.Canvas(page)
        self.body_pages += 1
        self.y = d.TOP
        header = f"{self.main} - {self.topic.doc_type} {self.year}"
        self.canvas.text(d.LEFT, 44.0, header, 8.0, color=d.GREY)

    def place(self, block: Block) -> bool:
        """Draw ``block`` at the cursor, opening a page if needed; False when out of pages."""
        need = block.height + block.keep_with_next
        if self.canvas is None or self.y + need > d.BOTTOM:
            if self.body_pages >= self.body_target:
                return False
            self._new_page()
        if self.y + block.height > d.BOTTOM:
            raise GenerationError(f"block of {block.height:.0f} pt is taller than a page")
        assert self.canvas is not None
        block.draw(self.canvas, self.y)
        if block.title is not None:
            self.sections.append((block.title, self.page_no))
        self.y += block.height + GAP
        return True

    @property
    def progress(self) -> float:
        return max(0, self.body_pages - 1) / self.body_target

    # ----------------------------------------------------------------- blocks

    def heading(self, title: str) -> Block:
        numbered = f"{len(self.sections) + 1}. {title}"
        size = 13.0

        def draw(canvas: d.Canvas, top: float) -> None:
            canvas.text(d.LEFT, top + 4.0, numbered, size, d.BOLD)

        height = 4.0 + d.line_box_height(size, d.BOLD)
        return Block(height=height, draw=draw, keep_with_next=90.0, title=numbered)

    def paragraph(
        self,
        sentences: list[str],
        facts: list[PlantedFact] | None = None,
        on_drawn: Callable[[PlacedRegion], None] | None = None,
    ) -> Block:
        text = " ".join(sentences)
        lines = d.wrap(text, d.TEXT_W, d.BODY_SIZE)

        def draw(canvas: d.Canvas, top: float) -> None:
            rect = canvas.lines(d.LEFT, top, lines)
            region = PlacedRegion(self.page_no, rect, "text", text)
            self._record(facts or [], region)
            if on_drawn is not None:
                on_drawn(region)

        return Block(height=d.block_height(len(lines), d.BODY_SIZE), draw=draw)

    def _record(self, facts: list[PlantedFact], where: PlacedRegion) -> None:
        for fact in facts:
            fact.where = where
            self.facts.append(fact)

    def free_cells(self, metric: Metric, k: int) -> list[Entity]:
        """Up to ``k`` entities not yet reported for ``metric`` anywhere in the document.

        Each (entity, metric) pair is printed in one block only, so a question naming both
        points at a single page.
        """
        pool = self.available[metric.key]
        return self.rng.sample(pool, min(k, len(pool)))

    def new_fact(self, kind: str, entity: Entity, metric: Metric, year: int) -> PlantedFact:
        if (entity.name, metric.key) not in self.used_pairs:
            self.used_pairs.add((entity.name, metric.key))
            self.available[metric.key].remove(entity)
        self.used_cells.add((entity.name, metric.key, year))
        value, text = self.unique_value(metric)
        sentence = metric.sentence.format(year=year, ent=entity.display, value=text)
        placeholder = PlacedRegion(0, (0.0, 0.0, 0.0, 0.0), kind, "")
        return PlantedFact(
            key=f"f{len(self.used_cells)}",
            kind=kind,
            entity=entity.display,
            entity_label=entity.label,
            name=entity.name,
            metric=metric.key,
            year=year,
            value=value,
            value_text=text,
            sentence=sentence,
            where=placeholder,
        )

    @staticmethod
    def _anchor_facts(facts: list[PlantedFact], anchor: str, title: str) -> None:
        """Tie facts to the table/figure they were drawn in (numbered when drawn)."""
        for fact in facts:
            fact.anchor, fact.anchor_title = anchor, title
            fact.sentence = f"{anchor} shows that {fact.sentence[0].lower()}{fact.sentence[1:]}"

    def text_block(self) -> Block:
        sentences = self.filler(self.rng.randint(2, 5))
        if self.rng.random() < 0.75:
            metric = self.rng.choice(self.topic.metrics)
            year = self.rng.choice(self.years)
            entities = self.free_cells(metric, 1)
            if entities:
                fact = self.new_fact("text", entities[0], metric, year)
                sentences.insert(self.rng.randint(0, len(sentences)), fact.sentence)
                return self.paragraph(sentences, [fact])
        return self.paragraph(sentences)

    def table_block(self) -> Block | None:
        metric = self.rng.choice(self.topic.metrics)
        start = self.rng.randint(0, len(self.years) - 3)
        years = self.years[start : start + 3]
        entities = self.free_cells(metric, self.rng.randint(4, 7))
        if len(entities) < 3:
            return None
        facts = [[self.new_fact("table_row", e, metric, y) for y in years] for e in entities]
        rows = [
            [e.label] + [f.value_text for f in fs] for e, fs in zip(entities, facts, strict=True)
        ]
        header = [self.topic.unit_kind.capitalize(), *(str(y) for y in years)]
        tail = f"{metric.label} by {self.topic.unit_kind}, {years[0]} to {years[-1]}"
        return self.table(tail, header, rows, facts)

    def table(
        self,
        title_tail: str,
        header: list[str],
        rows: list[list[str]],
        facts: list[list[PlantedFact]],
        on_drawn: Callable[[str, PlacedRegion, list[PlacedRegion]], None] | None = None,
    ) -> Block:
        """A titled table; it is numbered ("Table N: <title_tail>") when drawn."""
        title_h = d.line_box_height(9.0, d.BOLD)
        height = title_h + 4.0 + 18.0 + 16.0 * len(rows)

        def draw(canvas: d.Canvas, top: float) -> None:
            self.n_tables += 1
            anchor = f"Table {self.n_tables}"
            title = f"{anchor}: {title_tail}"
            title_rect = canvas.text(d.LEFT, top, title, 9.0, d.BOLD)
            grid, row_rects = canvas.table(d.LEFT, top + title_h + 4.0, d.TEXT_W, header, rows)
            row_regions = [
                PlacedRegion(self.page_no, rect, "table_row", " ".join(row))
                for rect, row in zip(row_rects, rows, strict=True)
            ]
            for region, row_facts in zip(row_regions, facts, strict=False):
                self._anchor_facts(row_facts, anchor, title)
                self._record(row_facts, region)
            if on_drawn is not None:
                whole = d.union([title_rect, grid])
                table_text = " ".join([title, " ".join(header), *(" ".join(r) for r in rows)])
                region = PlacedRegion(self.page_no, whole, "table", table_text)
                on_drawn(anchor, region, row_regions)

        return Block(height=height, draw=draw)

    def chart_block(self) -> Block | None:
        metric = self.rng.choice(self.topic.metrics)
        is_line = self.rng.random() < 0.4
        if is_line:
            n = self.rng.randint(5, 7)
            start = self.rng.randint(0, len(self.years) - n)
            years = self.years[start : start + n]
            entities = self.free_cells(metric, 1)
            if not entities:
                return None
            pairs = [(entities[0], y) for y in years]
            tail = f"{metric.label} of {entities[0].display}, {years[0]} to {years[-1]}."
        else:
            year = self.rng.choice(self.years)
            entities = self.free_cells(metric, self.rng.randint(3, 6))
            if len(entities) < 3:
                return None
            pairs = [(e, year) for e in entities]
            tail = f"{metric.label} by {self.topic.unit_kind} in {year}."
        facts = [self.new_fact("figure", e, metric, y) for e, y in pairs]
        width, chart_h = 360.0, 170.0
        # Measured with a wide placeholder number; the real caption is never wider.
        n_lines = len(d.wrap(f"Figure 0000: {tail}", width, 9.0, d.ITALIC))
        height = chart_h + 6.0 + d.block_height(n_lines, 9.0, d.ITALIC)
        values = [f.value for f in facts]
        texts = [f.value_text for f in facts]
        labels = [str(y) for _, y in pairs] if is_line else [e.name for e, _ in pairs]

        def draw(canvas: d.Canvas, top: float) -> None:
            self.n_figures += 1
            anchor = f"Figure {self.n_figures}"
            caption = f"{anchor}: {tail}"
            x = d.LEFT + (d.TEXT_W - width) / 2
            if is_line:
                chart, _ = canvas.line_chart(x, top, width, chart_h, labels, values, texts)
            else:
                chart, _ = canvas.bar_chart(
                    x, top, width, chart_h, labels, values, texts, self.n_figures
                )
            lines = d.wrap(caption, width, 9.0, d.ITALIC)
            cap = canvas.lines(x, top + chart_h + 6.0, lines, 9.0, d.ITALIC)
            region = PlacedRegion(self.page_no, d.union([chart, cap]), "figure", caption)
            self._anchor_facts(facts, anchor, caption)
            self._record(facts, region)

        return Block(height=height, draw=draw)

    def next_block(self) -> Block:
        roll = self.rng.random()
        block = None
        if roll < 0.18:
            block = self.table_block()
        elif roll < 0.36:
            block = self.chart_block()
        return block or self.text_block()

    # ----------------------------------------------------------------- the document

    def build_body(self, scheduled: list[tuple[float, str, Block]]) -> None:
        """Fill the body pages; ``scheduled`` blocks (threshold, section title, block) are
        placed, each under its own heading, once the flow has passed ``threshold`` of the body."""
        for _ in range(self.n_front):
            self.doc.new_page(width=d.PAGE_W, height=d.PAGE_H)
        per_page = 5.0
        mean_blocks = per_page * max(2.0, self.body_target / 20.0)
        titles = list(self.topic.sections)
        left_in_section = 0
        pending = list(scheduled)
        while True:
            late = self.body_pages >= self.body_target - 1
            if pending and (pending[0][0] <= self.progress or late):
                _, title, block = pending.pop(0)
                head = self.heading(title)
                head.keep_with_next = max(head.keep_with_next, block.height)
                if not (self.place(head) and self.place(block)):
                    raise GenerationError(
                        f"{self.file_name}: no room for the block under {title!r}"
                    )
                left_in_section = 0
                continue
            if left_in_section <= 0:
                title = titles.pop(0) if titles else self._entity_section_title()
                if not self.place(self.heading(title)):
                    break
                left_in_section = self.rng.randint(int(0.6 * mean_blocks), int(1.4 * mean_blocks))
            if not self.place(self.next_block()):
                break
            left_in_section -= 1
        if pending:
            raise GenerationError(f"{self.file_name}: too few pages for the planted blocks")

    def _entity_section_title(self) -> str:
        taken = {t.split(". ", 1)[-1] for t, _ in self.sections}
        title = ""
        for _ in range(20):
            entity = self.rng.choice(self.entities)
            word = self.rng.choice(("Notes on", "Review of", "Activities of", "Profile of"))
            title = f"{word} {entity.display}"
            if title not in taken:
                break
        return title
