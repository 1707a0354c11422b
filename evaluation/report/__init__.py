"""Reports of finished runs: comparison tables, plots, a static HTML report and viewer.

``build_report([run_dir, ...], out_dir)`` reads run folders written by ``scanrag run`` and
writes ``index.html`` (open it from the file system; it needs no network), Markdown/CSV/JSON
comparison tables, matplotlib plots and one trajectory-viewer page per question. Importing
this package is light: matplotlib, PyMuPDF and the scorers are imported inside the functions
that use them. The runner reaches :func:`build_report` through the ``report`` entry of
``scanrag.registry.BACKENDS``.
"""

from scanrag.evaluation.report.build import ReportOptions, build_report
from scanrag.evaluation.report.data import ReportError

__all__ = ["ReportError", "ReportOptions", "build_report"]
