"""Libraries' own progress bars off a log file or a pipe (``scanrag`` calls this first).

Kept apart from the runner so the CLI can call it before any command is chosen without
importing the runner (``scanrag --help`` stays light).
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

# Read by tqdm (``TQDM_DISABLE``, when it is imported) and huggingface_hub (transformers'
# bars follow it): a value the user set is kept.
LIBRARY_PROGRESS_OFF = {"TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}


def quiet_library_progress(stream: TextIO | None = None) -> bool:
    """When ``stream`` (stderr) is not a terminal, turn off the progress bars libraries
    draw: through the environment for those imported later, and directly in transformers and
    huggingface_hub when they are already imported. Returns whether it did."""
    stream = stream or sys.stderr
    try:
        if stream.isatty():
            return False
    except (AttributeError, ValueError):  # a closed or odd stream: not a terminal
        pass
    for name, value in LIBRARY_PROGRESS_OFF.items():
        os.environ.setdefault(name, value)
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    return True
