"""The safety probe's model: the bundled 0.5B cut to its first blocks (callswarm/reader_model.py)."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path

import gguf
import numpy as np
import pytest

from callswarm import reader_model
from callswarm.app import safety_embedder
from callswarm.bundled import ModelUnavailable
from callswarm.reader_model import SAFETY_READER, cut_path, write_cut
from callswarm.settings import Settings


def test_the_written_cut_is_the_one_the_probe_was_trained_on(safety_model) -> None:
    # Byte for byte: what the cut keeps is shown on a small model below.
    digest = hashlib.sha256(safety_model.read_bytes()).hexdigest()
    assert digest == SAFETY_READER.sha256
    assert safety_model.stat().st_size == SAFETY_READER.size


def _tiny_model(path: Path) -> Path:
    """A three-block model in the source's shape, small enough to cut in milliseconds."""
    writer = gguf.GGUFWriter(path, "qwen2")
    writer.add_block_count(3)
    writer.add_token_list(["a", "b"])
    rng = np.random.default_rng(0)
    writer.add_tensor("token_embd.weight", rng.standard_normal((2, 64), dtype=np.float32))
    for block in range(3):
        writer.add_tensor(f"blk.{block}.ffn.weight", rng.standard_normal(64, dtype=np.float32))
    writer.add_tensor("output.weight", rng.standard_normal((2, 64), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_a_cut_unlike_its_sha256_is_refused_and_left_nowhere(tmp_path) -> None:
    source = _tiny_model(tmp_path / "tiny.gguf")
    cut = dataclasses.replace(SAFETY_READER, blocks=2, sha256="0" * 64)
    target = tmp_path / "models" / "cut.gguf"
    with pytest.raises(ModelUnavailable, match="the version pinned") as refused:
        write_cut(cut, source, target)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["models", "tiny.gguf"]
    # With the sha256 it does have, the same cut is written and verified.
    [written] = re.findall(r"sha256 ([0-9a-f]{64})", str(refused.value))
    write_cut(dataclasses.replace(cut, sha256=written), source, target)
    reader = gguf.GGUFReader(target)
    assert reader.fields["qwen2.block_count"].contents() == 2
    names = [t.name for t in reader.tensors]
    assert names == ["token_embd.weight", "blk.0.ffn.weight", "blk.1.ffn.weight", "output.weight"]
    [head] = [t for t in reader.tensors if t.name == "output.weight"]
    assert head.tensor_type == gguf.GGMLQuantizationType.Q4_0
    assert not np.asarray(head.data).any()
    assert target.with_suffix(".gguf.verified").read_text().strip() == written


def test_the_gateway_refuses_a_safety_model_that_is_not_the_cut(tmp_path) -> None:
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF" + bytes(64))
    settings = Settings(data_dir=tmp_path, safety_model_path=other)
    with pytest.raises(ModelUnavailable, match="callswarm model install"):
        safety_embedder(settings)


def test_a_gateway_that_cannot_write_the_cut_does_not_start(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("CALLSWARM_SAFETY_MODEL_PATH")
    # Another gguf lays the file out otherwise: refused before half a gigabyte is read.
    monkeypatch.setattr(reader_model, "GGUF_VERSION", "0.0.1")
    with pytest.raises(ModelUnavailable, match=r"gguf==0\.0\.1"):
        safety_embedder(Settings(data_dir=tmp_path))
    assert not cut_path(SAFETY_READER, tmp_path).exists()
