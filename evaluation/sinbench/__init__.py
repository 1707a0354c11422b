"""SIN-Bench's scoring: the metrics of an evidence chain against the gold one
(:mod:`~scanrag.evaluation.sinbench.metrics`) and the ``sinbench`` scorer with its judge
(:mod:`~scanrag.evaluation.sinbench.scorer`)."""
