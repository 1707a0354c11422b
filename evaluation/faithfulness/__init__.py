"""Faithfulness of an answer's sentences to the pages they cite: the ``faithfulness`` judge
scorer (:mod:`~evaluation.faithfulness.scorer`), the sentence splitting it relies on
(:mod:`~evaluation.faithfulness.text`) and ContextCheck's meta-evaluation of a judge against
human labels (:mod:`~evaluation.faithfulness.meta`)."""
