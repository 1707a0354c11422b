"""The judge prompts' hashes, pinned: every judgment records its prompt's hash, so a change of
wording, or a move that changed a text, shows here (update a pin only with a new version tag)."""

from __future__ import annotations

from scanrag.evaluation.docscope import answer_prompt as docscope_answer
from scanrag.evaluation.docscope import fact_prompt as docscope_fact
from scanrag.evaluation.docscope import region_prompt as docscope_region
from scanrag.evaluation.docscope.official import fact_prompt as docscope_fact_official
from scanrag.evaluation.faithfulness import prompt as faithfulness
from scanrag.evaluation.mmlongbench import prompt as mmlongbench_extract
from scanrag.evaluation.scholscan import prompt as scholscan
from scanrag.evaluation.sinbench import prompt as sinbench


def test_judge_prompt_hashes_are_pinned() -> None:
    assert {
        "docscope.answer": docscope_answer.PROMPT_HASH,
        "docscope.fact": docscope_fact.PROMPT_HASH,
        "docscope.fact.official": docscope_fact_official.PROMPT_HASH,
        "docscope.region": docscope_region.PROMPT_HASH,
        "faithfulness": faithfulness.PROMPT_HASH,
        "mmlongbench.extract": mmlongbench_extract.PROMPT_HASH,
        "mmlongbench.extract.free_text": mmlongbench_extract.FREE_TEXT_HASH,
        "scholscan": scholscan.PROMPT_HASH,
        "sinbench.match": sinbench.MATCH_PROMPT_HASH,
        "sinbench.answer": sinbench.ANSWER_PROMPT_HASH,
    } == {
        "docscope.answer": "99af8a2521b968c1",
        "docscope.fact": "63fcce80db4b27aa",
        "docscope.fact.official": "cc6a41b44acb18dc",
        "docscope.region": "04832e4995651a5c",
        "faithfulness": "7429f3fb5030ba67",
        "mmlongbench.extract": "bcbb3e0254970e6a",
        "mmlongbench.extract.free_text": "91763be1661677e0",
        "scholscan": "8addfebb8e33c4a1",
        "sinbench.match": "5023fcde2afcf0af",
        "sinbench.answer": "a17b7830afb8928f",
    }
