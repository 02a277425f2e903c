"""The safety probe's model: the bundled 0.5B cut to its first blocks, written once.

The probe reads the mean of a model's hidden states (agents/risk.py), and a line
through all 24 blocks cost 225 ms p50 and 0.44 s of CPU, on every caller's turn.
On five-fold cross-validation of the probe's training lines, the first 8 blocks
read as well as all 24 (docs/agents.md), at 0.42x the cost. llama.cpp cannot be
told to stop early (a `block_count` override fails on the tensors left over), so the
file is rewritten with only those blocks.

Its output head is never read in embedding mode, but llama.cpp still multiplies every
token through it: that 152k-row matrix is written as zeros in the cheapest kind.
The file is for embeddings only; its logits are all zero.

Like the assembled model, it is written to a file named per process, checked against
its sha256, and only then renamed into place.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from callswarm.bundled import (
    QWEN_05B,
    ModelUnavailable,
    SplitModel,
    ensure_model,
    put_in_place,
)

if TYPE_CHECKING:  # imported where used: only a gateway that writes the cut needs it
    import gguf

log = logging.getLogger("callswarm.reader_model")

# The writer the pinned sha256 was made with: another version may lay the file out
# otherwise, and the cut would be refused after a 260 MB write.
GGUF_VERSION = "0.19.0"


@dataclass(frozen=True, slots=True)
class CutModel:
    name: str
    filename: str
    source: SplitModel
    blocks: int
    sha256: str  # of the file written from the source by `gguf` GGUF_VERSION
    size: int


SAFETY_READER = CutModel(
    name="Qwen2.5-Coder-0.5B Q4, first 8 blocks, for embeddings",
    filename="qwen2.5-coder-0.5b-first8-embed.gguf",
    source=QWEN_05B,
    blocks=8,
    sha256="5585920559d72c9784f08c114b3fe424c49c970e3a5218b305b52a083bb89685",
    size=259_679_616,
)


def cut_path(cut: CutModel, data_dir: Path) -> Path:
    return data_dir / "models" / cut.filename


def cut_ready(cut: CutModel, data_dir: Path) -> Path | None:
    """The verified file if it is already in place; None if it must be written. A file
    verified against another sha256 (an older cut) is written again: the probe must
    read the vectors it was trained on."""
    target = cut_path(cut, data_dir)
    marker = target.with_suffix(target.suffix + ".verified")
    if (
        target.is_file()
        and marker.is_file()
        and target.stat().st_size == cut.size
        and marker.read_text().strip() == cut.sha256
    ):
        return target
    return None


def _check_writer() -> None:
    """ModelUnavailable, saying how to fix it, before half a gigabyte is read for a write
    whose sha256 could not match. Missing parts are told by `ensure_model` itself."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("gguf")
    except PackageNotFoundError:
        found = None
    if found != GGUF_VERSION:
        raise ModelUnavailable(
            f"the safety probe's model is written with gguf=={GGUF_VERSION} (the `local` "
            f"extra), not {found or 'nothing'}; CALLSWARM_SAFETY_PROBE=false runs the "
            "safety phrases alone"
        )


_cutting = threading.Lock()


def ensure_cut(cut: CutModel, data_dir: Path) -> Path:
    """The cut file, written from the source model (assembled first if need be);
    ModelUnavailable if it cannot be."""
    ready = cut_ready(cut, data_dir)
    if ready is not None:
        return ready
    _check_writer()
    with _cutting:
        ready = cut_ready(cut, data_dir)
        if ready is not None:
            return ready
        source = ensure_model(cut.source, data_dir, progress=lambda done, total: None)
        try:
            return write_cut(cut, source, cut_path(cut, data_dir))
        except OSError as exc:  # a full disk, a read-only data_dir
            raise ModelUnavailable(f"{cut.name}: cannot write {cut.filename}: {exc}") from exc


def write_cut(cut: CutModel, source: Path, target: Path) -> Path:
    """Write the cut of `source` to `target`, through a file of its own, checked against
    its sha256 before the rename."""
    import gguf

    reader = gguf.GGUFReader(source)
    arch = reader.fields["general.architecture"].contents()
    partial = target.with_suffix(f"{target.suffix}.{os.getpid()}.partial")
    log.info("model_cutting name=%s blocks=%d target=%s", cut.name, cut.blocks, target)
    target.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(partial, arch)
    # One way out on any failure, the hash included: the partial file is removed.
    try:
        try:
            _fill(writer, reader, arch, cut)
        finally:
            writer.close()  # an unlinked file's blocks are freed only once it is closed
        with partial.open("rb") as written:
            found = hashlib.file_digest(written, "sha256").hexdigest()
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    put_in_place(
        partial,
        target,
        found,
        cut.sha256,
        f"{cut.name}: the file written has sha256 {found}, not {cut.sha256}; is the `gguf` "
        "package the version pinned in pyproject.toml?",
    )
    log.info("model_ready name=%s bytes=%d", cut.name, target.stat().st_size)
    return target


def _fill(writer: gguf.GGUFWriter, reader: gguf.GGUFReader, arch: str, cut: CutModel) -> None:
    """The source's keys with `cut.blocks` blocks, its first blocks' tensors, and an
    output head of zeros in the cheapest kind: the file gives embeddings, never words."""
    import gguf
    import numpy as np

    for field in reader.fields.values():
        # The architecture and the GGUF.* counts are the writer's own.
        if field.name == "general.architecture" or field.name.startswith("GGUF."):
            continue
        kind = field.types[0]
        sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        value = cut.blocks if field.name == f"{arch}.block_count" else field.contents()
        writer.add_key_value(field.name, value, kind, sub_type=sub)
    zeros = gguf.GGMLQuantizationType.Q4_0
    per_block, block_bytes = gguf.GGML_QUANT_SIZES[zeros]
    kept = []
    for tensor in reader.tensors:
        layer = re.match(r"blk\.(\d+)\.", tensor.name)
        if layer is not None and int(layer.group(1)) >= cut.blocks:
            continue
        if tensor.name == "output.weight":
            columns, rows = (int(n) for n in tensor.shape)
            head = np.zeros((rows, columns // per_block * block_bytes), dtype=np.uint8)
            kept.append((tensor.name, head, zeros))
        else:
            kept.append((tensor.name, tensor.data, tensor.tensor_type))
    for name, data, quant in kept:
        writer.add_tensor_info(name, data.shape, data.dtype, data.nbytes, quant)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for _, data, _ in kept:
        writer.write_tensor_data(data, tensor_endianess=reader.endianess)
