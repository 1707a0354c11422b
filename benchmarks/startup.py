"""Start-up time and memory of the ``scanrag`` command.

    python benchmarks/startup.py [--runs 15] [--importtime]

Runs ``scanrag --help``, ``scanrag --version`` and, beside them, a bare interpreter
(``python -c pass``: what no command can beat) as fresh processes, interleaved, ``--runs``
times each, and prints per command the best and median wall seconds, the median CPU seconds and
the peak RSS (each child's ``ru_maxrss``, from ``wait4``). Targets (issue 33): ``scanrag --help``
within 0.3 s and 100 MB on an idle core; the load average is printed beside the figures, since a
busy machine stretches wall time (CPU time much less). ``--importtime`` adds the ten slowest
imports of ``scanrag --help`` (``python -X importtime``, cumulative), to see what to make lazy.
The last lines are ``key=value`` figures.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

SCANRAG = Path(sys.executable).with_name("scanrag")
COMMANDS = {
    "python": [sys.executable, "-c", "pass"],
    "help": [str(SCANRAG), "--help"],
    "version": [str(SCANRAG), "--version"],
}


def run_once(command: list[str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MiB) of one run of ``command``."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited with {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def slowest_imports(count: int = 10) -> list[tuple[float, str]]:
    """The ``count`` imports of ``scanrag --help`` with the largest cumulative time (ms)."""
    code = "import sys; from scanrag.cli import main; sys.exit(main(['--help']))"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True
    )
    found = []
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \|\s*(\S+)", line)
        if match:
            found.append((int(match.group(1)) / 1000, match.group(2)))
    return sorted(found, reverse=True)[:count]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--importtime", action="store_true")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    for command in COMMANDS.values():  # warm the file cache
        run_once(command)
    figures: dict[str, list[tuple[float, float, float]]] = {name: [] for name in COMMANDS}
    for _ in range(args.runs):
        for name, command in COMMANDS.items():
            figures[name].append(run_once(command))
    load = " ".join(f"{v:.2f}" for v in (*load_before, *os.getloadavg()))
    print(f"load before/after: {load} ({os.cpu_count()} CPUs); {args.runs} runs each")
    print(f"{'command':22s} {'best s':>8s} {'median s':>9s} {'CPU s':>7s} {'peak RSS MiB':>13s}")
    summary = {}
    for name, runs in figures.items():
        walls, cpus, rss = zip(*runs, strict=True)
        summary[name] = (min(walls), statistics.median(walls), statistics.median(cpus), max(rss))
        label = " ".join(COMMANDS[name][-1:] if name != "python" else ["python -c pass"])
        label = f"scanrag {label}" if name != "python" else label
        best, median, cpu, peak = summary[name]
        print(f"{label:22s} {best:8.3f} {median:9.3f} {cpu:7.3f} {peak:13.1f}")
    if args.importtime:
        print("slowest imports of scanrag --help (cumulative ms):")
        for ms, module in slowest_imports():
            print(f"  {ms:8.1f}  {module}")
    for name, (best, median, cpu, peak) in summary.items():
        print(f"{name}_best_s={best:.4f}")
        print(f"{name}_median_s={median:.4f}")
        print(f"{name}_cpu_s={cpu:.4f}")
        print(f"{name}_peak_rss_mib={peak:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
