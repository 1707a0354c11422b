"""``scanrag ingest`` prints one line per file and keeps going past bad files."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pymupdf
import pytest

from scanrag.cli import main
from scanrag.documents import load_document


@pytest.fixture
def two_pdfs(tmp_path: Path) -> list[Path]:
    paths = []
    for name, pages in (("alpha.pdf", 2), ("beta.pdf", 3)):
        pdf = pymupdf.open()
        for n in range(pages):
            pdf.new_page().insert_text((72, 72), f"{name} page {n + 1}")
        pdf.save(tmp_path / name)
        paths.append(tmp_path / name)
    return paths


def test_summary_line_per_file(two_pdfs: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", *map(str, two_pdfs), "--ocr", "never"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    assert re.fullmatch(r"alpha\.pdf: 2 pages, 0 OCR pages, \d+\.\d\d s", lines[0])
    assert re.fullmatch(r"beta\.pdf: 3 pages, 0 OCR pages, \d+\.\d\d s", lines[1])


def test_bad_file_reported_others_processed(
    two_pdfs: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "junk.pdf"
    junk.write_text("not a pdf")
    code = main(["ingest", str(two_pdfs[0]), str(junk), str(two_pdfs[1])])
    captured = capsys.readouterr()
    lines = captured.out.strip().splitlines()
    assert code == 1
    assert lines[0].startswith("alpha.pdf: 2 pages")
    assert lines[1].startswith("junk.pdf: FAILED NotAPDFError:") and "junk.pdf" in lines[1]
    assert lines[2].startswith("beta.pdf: 3 pages")
    assert "1 of 3 files failed" in captured.err


def test_out_and_render(two_pdfs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["ingest", str(two_pdfs[1]), "--out", str(out), "--render", "--dpi", "30"]) == 0
    doc = load_document(out / "beta.pdf.json")
    assert doc.num_pages == 3 and "beta.pdf page 2" in doc.page(2).text
    pngs = sorted((out / "pages" / doc.sha256[:16]).glob("*.png"))
    assert [p.name for p in pngs] == ["p0001_30.png", "p0002_30.png", "p0003_30.png"]


def test_dpi_alone_renders_at_that_resolution(two_pdfs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["ingest", str(two_pdfs[0]), "--out", str(out), "--dpi", "36"]) == 0
    doc = load_document(out / "alpha.pdf.json")
    pngs = sorted((out / "pages" / doc.sha256[:16]).glob("*.png"))
    assert [p.name for p in pngs] == ["p0001_36.png", "p0002_36.png"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--render"], "needs --out"),
        (["--dpi", "72"], "needs --out"),
        (["--dpi", "0", "--out", "x"], "--dpi must be positive"),
    ],
)
def test_bad_render_arguments(
    two_pdfs: list[Path], capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["ingest", str(two_pdfs[0]), *args]) == 2
    assert message in capsys.readouterr().err


def test_unreadable_input_and_unexpected_errors_do_not_stop_the_batch(
    two_pdfs: list[Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import scanrag.documents as documents

    real = documents.ingest_pdf

    def flaky(path, **kw):
        if Path(path).name == "alpha.pdf":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, **kw)

    monkeypatch.setattr(documents, "ingest_pdf", flaky)
    code = main(["ingest", *map(str, two_pdfs), "--ocr", "never"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 1
    assert lines[0].startswith("alpha.pdf: FAILED cannot read: PermissionError:")
    assert lines[1].startswith("beta.pdf: 3 pages")


def test_progress_lines_without_a_terminal(
    two_pdfs: list[Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from scanrag.commands import ingest

    slow = ingest._ingest_one

    def one(*args: object) -> str:
        time.sleep(0.1)
        return slow(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(ingest, "_ingest_one", one)
    assert main(["ingest", *map(str, two_pdfs), "--progress-every", "0.02"]) == 0
    err = capsys.readouterr().err
    assert "progress ingest" in err and "/2 (" in err and "errors 0" in err
    assert "ingest   2/2 in " in err
