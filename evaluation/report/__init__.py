"""Reports of finished runs: comparison tables, plots, a static HTML report and viewer.

``build_report([run_dir, ...], out_dir)`` reads run folders written by ``scanrag run`` and
writes ``index.html`` (open it from the file system; it needs no network), Markdown/CSV/JSON
comparison tables, matplotlib plots and one trajectory-viewer page per question. Importing
this package is light: its public names are imported on first use (PEP 562), and matplotlib,
PyMuPDF and the scorers inside the functions that use them, so a command that only registers
itself (``scanrag export``'s formats) loads none of them. The runner reaches
:func:`build_report` through the ``report`` entry of ``scanrag.registry.BACKENDS``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["ReportError", "ReportOptions", "build_report"]

if TYPE_CHECKING:
    from scanrag.evaluation.report.build import ReportOptions, build_report
    from scanrag.evaluation.report.data import ReportError


def __getattr__(name: str) -> Any:
    """``build_report``, ``ReportOptions`` and ``ReportError``, imported on first use."""
    if name == "ReportError":
        from scanrag.evaluation.report.data import ReportError

        return ReportError
    if name in __all__:
        from scanrag.evaluation.report.build import ReportOptions, build_report

        return {"ReportOptions": ReportOptions, "build_report": build_report}[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
