"""Every Triton kernel the MaxSim paths launch, compiled ahead of time on the CPU (no GPU).

A kernel that does not compile fails at a user's first search, on the GPU. Triton compiles
for a named target without a device (``triton.compile(ASTSource(...), target=GPUTarget(...))``
with the ``ptxas`` it ships), so each launch is compiled here for sm_80 (Ampere) and sm_90
(Hopper) with the arguments the paths really pass, specialized the way a launch specializes
them (Triton's own binder: pointer alignment, integers equal to 1 or divisible by 16), once
per tile its autotuner would try on that family:

* the project's kernel (``scanrag.indexes.colpali_kernel``): every ``BLOCK_ROWS`` a query
  group can take (16 to 128), every model dimension (``DIMS``), every tile of the family;
* late-interaction-kernels and flash-maxsim, when installed: their launches are captured by
  running the paths on CPU tensors with Triton's autotuner stood in for, then compiled with
  every configuration of the library's list for that family (the libraries pick the list by
  the device they find, so the lists are read from their modules).

``benchmarks/gpu_check.py --compile-only`` prints the results, one line per kernel variant
and target; ``tests/indexes/test_colpali_aot.py`` runs the same in CI.
"""

from __future__ import annotations

import importlib
import importlib.util
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from scanrag.indexes import colpali_kernel

# Opt-in shared memory per block: A100 (sm_80) 163 KB, H100/H200 (sm_90) 227 KB.
SHARED_LIMIT = {80: 166_912, 90: 232_448}


@dataclass
class Compiled:
    """One kernel variant compiled for one target."""

    kernel: str
    target: int
    variant: str
    shared: int | None = None
    seconds: float = 0.0
    error: str | None = None

    @property
    def fits(self) -> bool:
        return self.shared is not None and self.shared <= SHARED_LIMIT[self.target]

    def line(self) -> str:
        head = f"{self.kernel:28s} sm_{self.target}  {self.variant:44s}"
        if self.error is not None:
            return f"{head} FAILED {self.error}"
        room = "" if self.fits else " (over the shared-memory limit: skipped at run time)"
        return f"{head} ok  shared {self.shared:>7,} B  {self.seconds:.2f} s{room}"


@dataclass
class Launch:
    """A kernel launch to compile: the ``triton.jit`` function, its arguments and a label."""

    kernel: str
    fn: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    variant: str


def compile_launch(launch: Launch, target: int) -> Compiled:
    """Compile ``launch`` for ``sm_<target>`` as Triton's launcher would, without a device."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource, make_backend
    from triton.runtime.jit import create_function_from_signature

    start = time.perf_counter()
    result = Compiled(launch.kernel, target, launch.variant)
    try:
        gpu = GPUTarget("cuda", target, 32)
        backend = make_backend(gpu)
        fn = launch.fn
        binder = create_function_from_signature(fn.signature, fn.params, backend)
        kwargs = {"debug": False, **launch.kwargs}
        bound, specialization, options = binder(*launch.args, **kwargs)
        options, signature, constexprs, attrs = fn._pack_args(
            backend, kwargs, bound, specialization, options
        )
        source = ASTSource(fn, signature, constexprs, attrs)
        compiled = triton.compile(source, target=gpu, options=options.__dict__)
        result.shared = int(compiled.metadata.shared)
    except Exception as exc:  # reported per variant; the caller counts failures
        result.error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1][:300]}"
    result.seconds = time.perf_counter() - start
    return result


# -- the project's kernel ---------------------------------------------------------------------
def kernel_launches(family: str) -> Iterator[Launch]:
    """The project's kernel for every query-group height, dimension and tile of ``family``."""
    import torch

    rng = np.random.default_rng(0)
    fn = colpali_kernel.jit_kernel()
    for dim in colpali_kernel.DIMS:
        vectors = torch.zeros((64, dim), dtype=torch.float16)
        offsets = torch.tensor([0, 10, 40, 64], dtype=torch.int64)
        pages = torch.tensor([2, 0, 1], dtype=torch.int64)
        for rows in colpali_kernel.ROW_BLOCKS:
            queries = [rng.normal(size=(rows - 3 if rows > 16 else 5, dim)).astype(np.float32)]
            groups = colpali_kernel.stack_queries(queries, "cpu")
            assert groups.rows == rows
            _, args, meta, _ = colpali_kernel.launch_arguments(groups, vectors, offsets, pages)
            for tile in colpali_kernel.TILES[family]:
                kwargs = meta | {
                    "BLOCK_TOKENS": tile.tokens,
                    "num_warps": tile.warps,
                    "num_stages": tile.stages,
                }
                yield Launch(fn.__name__, fn, args, kwargs, f"rows={rows} dim={dim} {tile.label()}")


# -- library kernels ----------------------------------------------------------------------------
@dataclass
class LibraryKernels:
    """A fast path's library: its module, its autotune configurations per family and the
    device family name its pruning reads (``None``: it reads none)."""

    path: str
    module: str
    configs: Callable[[str], list[Any]]
    detects: str | None = None  # the module whose ``detect_gpu`` the pruning calls

    def kept(
        self, tuner: Any, family: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> list[Any]:
        """The configurations the library's own pruning keeps for this launch on ``family``."""
        configs = self.configs(family)
        if tuner.early_config_prune is None:
            return configs
        named = dict(zip(tuner.arg_names, args, strict=False))
        with _detected(self.detects, "hopper" if family == "hopper" else "a100"):
            return list(tuner.early_config_prune(configs, named, **kwargs))


@contextmanager
def _detected(module: str | None, name: str) -> Iterator[None]:
    """``module.detect_gpu()`` answers ``name`` inside the block (no GPU here to detect)."""
    if module is None:
        yield
        return
    target: Any = importlib.import_module(module)
    saved = target.detect_gpu
    target.detect_gpu = lambda: name
    try:
        yield
    finally:
        target.detect_gpu = saved


def _lik_configs(family: str) -> list[Any]:
    tune = importlib.import_module("late_interaction_kernels._autotune")
    small = tune._small_d_hopper() if family == "hopper" else tune._small_d_ampere()
    return [*tune._large_d_configs(), *small]


def _flash_configs(family: str) -> list[Any]:
    tuned = importlib.import_module("flash_maxsim.flash_maxsim")
    return list(tuned._get_configs("hopper" if family == "hopper" else "a100"))


LIBRARIES = (
    LibraryKernels(
        "lik", "late_interaction_kernels", _lik_configs, "late_interaction_kernels._autotune"
    ),
    LibraryKernels("flash", "flash_maxsim", _flash_configs),
)


@contextmanager
def captured_autotuned_launches() -> Iterator[list[tuple[Any, tuple[Any, ...], dict[str, Any]]]]:
    """Autotuned launches recorded (autotuner, arguments, keywords) instead of run."""
    from triton.runtime.autotuner import Autotuner

    calls: list[tuple[Any, tuple[Any, ...], dict[str, Any]]] = []
    original = Autotuner.run

    def record(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
        calls.append((self, args, kwargs))

    Autotuner.run = record  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        Autotuner.run = original  # type: ignore[method-assign]


def library_launches(library: LibraryKernels, family: str) -> Iterator[Launch]:
    """What ``library``'s fast path launches (a whole store, a scope; queries of several
    lengths), once per configuration its autotuner keeps on ``family`` for that launch."""
    from scanrag.indexes.colpali_contenders import FAST_PATHS, DeviceStore
    from scanrag.indexes.colpali_packed import PackedVectors

    rng = np.random.default_rng(0)
    seen: set[str] = set()
    for dim in colpali_kernel.DIMS:
        store = PackedVectors(dim)
        store.extend([rng.normal(size=(n, dim)).astype(np.float16) for n in (40, 0, 33, 70)])
        device_store = DeviceStore("cpu")
        device_store.sync(store)
        path = FAST_PATHS[library.path]()
        for lengths in ((20,), (20, 7, 31), (150,)):
            queries = [rng.normal(size=(n, dim)).astype(np.float32) for n in lengths]
            with captured_autotuned_launches() as calls:
                for rows in (None, np.array([3, 0, 2])):
                    path.scores(queries, device_store, rows)
            for tuner, args, kwargs in calls:
                fn = tuner.fn
                while not hasattr(fn, "params"):  # heuristics wrap the jit function
                    fn = fn.fn
                for config in library.kept(tuner, family, args, kwargs):
                    launch = kwargs | config.all_kwargs()
                    key = _specialization(fn, args, launch)
                    if key not in seen:  # the same code for other sizes, or a repeated config
                        seen.add(key)
                        label = " ".join(f"{k}={v}" for k, v in config.kwargs.items())
                        label += f" warps={config.num_warps} stages={config.num_stages}"
                        yield Launch(f"{library.path}:{fn.__name__}", fn, args, launch, label)


def _specialization(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """What Triton compiles a launch for, alignment aside (types, constexprs, integers equal
    to 1): launches that differ in other sizes compile the same code."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend
    from triton.runtime.jit import create_function_from_signature

    binder = create_function_from_signature(
        fn.signature, fn.params, make_backend(GPUTarget("cuda", 90, 32))
    )
    _, specialization, _ = binder(*args, **kwargs)
    kinds = [s if s[0] == "constexpr" else s[0] for s in specialization]  # alignment aside
    options = {k: kwargs.get(k) for k in ("num_warps", "num_stages")}
    return f"{fn.__name__} {kinds} {options}"


def launches(family: str) -> Iterator[Launch]:
    """Every launch to compile for ``family``: the project's kernel and installed libraries."""
    yield from kernel_launches(family)
    for library in LIBRARIES:
        if importlib.util.find_spec(library.module) is not None:
            yield from library_launches(library, family)


def missing_libraries() -> list[str]:
    return [lib.module for lib in LIBRARIES if importlib.util.find_spec(lib.module) is None]


def compile_all(
    targets: tuple[int, ...] = tuple(colpali_kernel.TARGETS),
    report: Callable[[Compiled], None] | None = None,
) -> list[Compiled]:
    """Compile every launch for every target; ``report`` sees each result as it comes."""
    results = []
    for target in targets:
        for launch in launches(colpali_kernel.TARGETS[target]):
            result = compile_launch(launch, target)
            if report is not None:
                report(result)
            results.append(result)
    return results
