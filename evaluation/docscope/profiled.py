"""What every DocScope scorer shares: its profile, the opening of an item, the aggregate.

* :class:`ProfiledScorer` takes ``profile`` (``paper``, ``official``, ``lenient``) or, without
  one, scores each sample with its dataset's profile (else ``paper``). The profile is stored
  as the ``profile`` attribute only when given, so rows scored before profiles existed keep
  their bases.
* :meth:`ProfiledScorer.open_item` is the one opening of every item: the view of the
  trajectory, the population rules of the profile (failed inference, repeated records,
  unanswerable items), the gold the metric needs and the judge it calls. It returns either
  an :class:`Opening` or the ``skipped`` row saying why the item is out.
* :meth:`ProfiledScorer.aggregate` summarizes rows with the profile they were scored with
  (:func:`~scanrag.evaluation.docscope.profiles.rows_of_profile`) and labels the result.
* :class:`JudgingScorer` is a profiled scorer that calls a judge: it takes ``call_shape``
  (``json`` or ``official``, see :mod:`scanrag.evaluation.docscope.profiles`), which shapes
  the judge request of official-profile items; ``official`` with the paper profile is refused
  (an explicit ``profile: paper``) or makes the item a ``skipped`` row saying why (a paper
  dataset under a scorer without a profile), never ignored.
* :class:`ProfileBinding` is the registry factory behind ``<scorer>_official``: the same
  class with the official profile fixed, under its own name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from scanrag.evaluation.base import RowGroup, Scorer, StatsOptions
from scanrag.evaluation.docscope.common import doc_scope
from scanrag.evaluation.docscope.gold import ItemGold, official_gold, paper_gold
from scanrag.evaluation.docscope.profiles import (
    CALL_SHAPES,
    PAPER,
    REPEAT_KEY,
    Profile,
    get_profile,
    rows_of_profile,
    sample_profile,
)
from scanrag.evaluation.docscope.reading import ItemView, read_view
from scanrag.evaluation.judging import JudgeContext
from scanrag.evaluation.schemas import AggregateResult, ScoreRow
from scanrag.schemas import Sample, Trajectory


@dataclass
class Opening:
    """An item in the population of a metric: its profile, view, gold and row details."""

    profile: Profile
    view: ItemView
    gold: ItemGold
    details: dict[str, Any]

    def p_hat(self) -> list[int]:
        """P̂: the gold pages the system cited (the pages region and fact judges look at)."""
        return sorted(set(self.gold.pages) & set(self.view.pages))


class ProfiledScorer(Scorer):
    """A DocScope scorer reading a :class:`~scanrag.evaluation.docscope.profiles.Profile`."""

    stage: ClassVar[str] = ""  # "page", "region", "fact", "answer": the skip reasons' word
    profile: str | None = None  # set on the instance only when a profile was asked for
    _fixed: Profile | None = None

    def __init__(self, profile: str | None = None) -> None:
        if profile is not None:
            self.profile = get_profile(profile).name

    def bind(self, profile: Profile, name: str) -> None:
        """Fix ``profile`` and the registry ``name`` (see :class:`ProfileBinding`)."""
        self._fixed = profile
        self.name = name

    @property
    def chosen(self) -> Profile | None:
        """The profile fixed or asked for (``None``: each sample's dataset decides)."""
        if self._fixed is not None:
            return self._fixed
        return get_profile(self.profile) if self.profile is not None else None

    def profile_for(self, sample: Sample) -> Profile:
        return self.chosen or sample_profile(sample.metadata) or PAPER

    def open_item(
        self,
        trajectory: Trajectory,
        sample: Sample,
        judge: JudgeContext | None,
        *,
        has_gold: Callable[[ItemGold], bool] | None = None,
        role: str | None = None,
        stage_metric: bool = True,
    ) -> Opening | ScoreRow:
        """The item's opening, or the ``skipped`` row of an item outside the population."""
        profile = self.profile_for(sample)
        view = read_view(profile, trajectory, sample, judge)
        details: dict[str, Any] = {"profile": profile.name}
        if profile.reads_reply:
            details["view"] = view.source
        if profile.skips_failed_inference and not view.ok:
            reason = f"inference status {view.status!r}: left out under the {profile.name} profile"
            return self.skip(trajectory, sample, reason, details=details)
        repeat = sample.metadata.get(REPEAT_KEY)
        if repeat is not None and not profile.scores_repeats:
            reason = f"a repeated record of {repeat!r}: scored under the official profile only"
            return self.skip(trajectory, sample, reason, details=details)
        if stage_metric and profile.answerable_only and not sample.answerable:
            reason = f"unanswerable question: no {self.stage} metric"
            return self.skip(trajectory, sample, reason, details=details)
        if profile.gold_as_released:
            gold = official_gold(sample)
        else:
            gold = paper_gold(sample, doc_scope(trajectory, sample, judge))
        if has_gold is not None and not has_gold(gold):
            return self.skip(trajectory, sample, f"no gold {self.stage}s", details=details)
        if role is not None and (judge is None or judge.model_for(role) is None):
            reason = judge.why_not(role) if judge is not None else "no judge context"
            return self.skip(trajectory, sample, reason, details=details)
        return self.opened(Opening(profile, view, gold, details), trajectory, sample)

    def opened(
        self, opening: Opening, trajectory: Trajectory, sample: Sample
    ) -> Opening | ScoreRow:
        """A hook on an item in the population: the opening, or a row that ends it."""
        return opening

    def aggregate(
        self, rows: Sequence[ScoreRow], group: RowGroup, stats: StatsOptions
    ) -> AggregateResult:
        chosen = self.chosen
        name, kept, other = rows_of_profile(rows, chosen.name if chosen else None)
        profile = get_profile(name)
        result = self.summarize(kept, stats, profile)
        result.tables["profile"] = profile.name
        result.tables["profile_label"] = profile.label
        if other:
            result.tables["rows_of_other_profile"] = other
        return result

    def summarize(
        self, rows: Sequence[ScoreRow], stats: StatsOptions, profile: Profile
    ) -> AggregateResult:
        raise NotImplementedError


class JudgingScorer(ProfiledScorer):
    """A DocScope scorer that calls a judge, with the ``call_shape`` of its official-profile
    items (set on the instance only when asked for, so existing rows keep their bases)."""

    call_shape: str | None = None

    def __init__(self, profile: str | None = None, call_shape: str | None = None) -> None:
        super().__init__(profile)
        if call_shape is None:
            return
        if call_shape not in CALL_SHAPES:
            raise ValueError(
                f"call_shape must be one of {', '.join(CALL_SHAPES)}, got {call_shape!r}"
            )
        chosen = self.chosen
        if call_shape == "official" and chosen is not None and not chosen.exact_replies:
            raise ValueError(
                f"call_shape official reads judge replies as the released code does: it needs "
                f"the official profile, not {chosen.name!r} (profile: official, or the "
                f"{self.name}_official scorer)"
            )
        self.call_shape = call_shape

    def profile_for(self, sample: Sample) -> Profile:
        profile = super().profile_for(sample)
        if self.call_shape == "official" and profile.exact_replies:
            return dataclasses.replace(profile, call_shape="official")
        return profile

    def opened(
        self, opening: Opening, trajectory: Trajectory, sample: Sample
    ) -> Opening | ScoreRow:
        """The call shape on official-profile rows; an item of the paper profile under
        ``call_shape: official`` is skipped, saying why."""
        if opening.profile.exact_replies:
            opening.details["call_shape"] = opening.profile.call_shape
        elif self.call_shape == "official":
            reason = (
                f"call_shape official applies to the official profile; this item's profile is "
                f"{opening.profile.name!r} (its dataset's)"
            )
            return self.skip(trajectory, sample, reason, details=opening.details)
        return opening


class ProfileBinding:
    """A registry factory: ``cls`` with ``profile`` fixed, registered as ``name``.

    Calling it builds the scorer (``profile`` may be repeated but not changed); its
    ``item_level`` and ``depends_on`` are what the summary looks up before building one.
    """

    opt_in = True  # run only when named

    def __init__(
        self,
        cls: type[ProfiledScorer],
        profile: Profile,
        name: str,
        depends_on: tuple[str, ...] | None = None,
    ) -> None:
        self.cls, self.profile, self.name = cls, profile, name
        self.item_level = cls.item_level
        self.depends_on = cls.depends_on if depends_on is None else depends_on
        self.__doc__ = f"``{cls.name}`` with the {profile.name} profile, under its own name."

    def __call__(self, **params: Any) -> ProfiledScorer:
        asked = params.pop("profile", None)
        if asked is not None and get_profile(asked) != self.profile:
            base = self.name.removesuffix(f"_{self.profile.name}")
            raise ValueError(
                f"scorer {self.name!r} always uses the {self.profile.name} profile; "
                f"use {base!r} with profile: {get_profile(asked).name} instead"
            )
        scorer = self.cls(**params)
        scorer.bind(self.profile, self.name)
        return scorer
