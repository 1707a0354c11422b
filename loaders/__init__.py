"""Benchmark dataset loaders: MMLongBench-Doc, FinanceBench, DocScope, ScholScan, SIN-Bench.

Each module reads one public benchmark's own files into :class:`scanrag.datasets.Dataset`
objects through the kernel's shared helpers (``scanrag.datasets.sources``) and registers as a
``scanrag.loaders`` entry point (pyproject.toml), so ``load_dataset("docscope", path)`` and a
run config's ``loader:`` key find it. This package imports only ``scanrag``.
"""
