"""ScholScan's scoring (spec §3): the S score of a paper's reported issues against the gold
ones (:mod:`~scanrag.evaluation.scholscan.formula`) and the ``scholscan`` scorer that matches them
through an extractor judge (:mod:`~scanrag.evaluation.scholscan.scorer`)."""
