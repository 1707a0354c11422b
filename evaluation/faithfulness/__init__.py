"""Faithfulness of an answer's sentences to the pages they cite: the ``faithfulness`` judge
scorer (:mod:`~scanrag.evaluation.faithfulness.scorer`), the sentence splitting it relies on
(:mod:`~scanrag.evaluation.faithfulness.text`) and ContextCheck's meta-evaluation of a judge against
human labels (:mod:`~scanrag.evaluation.faithfulness.meta`)."""
