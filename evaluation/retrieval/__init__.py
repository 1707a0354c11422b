"""Page retrieval against gold pages: the metrics (:mod:`~evaluation.retrieval.metrics`), the
``retrieval`` scorer of a run's ``retrieve`` steps (:mod:`~evaluation.retrieval.scorer`) and
the standalone evaluation of retrievers on a dataset behind ``scanrag retrieve eval``
(:mod:`~evaluation.retrieval.evaluate`)."""
