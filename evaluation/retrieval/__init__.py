"""Page retrieval against gold pages: the metrics (:mod:`~scanrag.evaluation.retrieval.metrics`),
the ``retrieval`` scorer of a run's ``retrieve`` steps (:mod:`~scanrag.evaluation.retrieval.scorer`)
and the standalone evaluation of retrievers on a dataset behind ``scanrag retrieve eval``
(:mod:`~scanrag.evaluation.retrieval.evaluate`)."""
