"""The safety probe's model: the bundled 0.5B cut to its first blocks (callswarm/reader_model.py)."""

from __future__ import annotations

import dataclasses
import hashlib

import gguf
import numpy as np
import pytest

from callswarm.app import safety_embedder
from callswarm.bundled import ModelUnavailable, model_path
from callswarm.reader_model import SAFETY_READER, cut_path, ensure_cut
from callswarm.settings import Settings


def test_the_cut_keeps_the_first_blocks_the_tokenizer_and_no_head(safety_model) -> None:
    reader = gguf.GGUFReader(safety_model)
    assert reader.fields["qwen2.block_count"].contents() == SAFETY_READER.blocks
    blocks = {name.split(".")[1] for name in (t.name for t in reader.tensors) if "blk." in name}
    assert blocks == {str(n) for n in range(SAFETY_READER.blocks)}
    # The tokenizer is the whole model's: the same line is the same tokens.
    assert len(reader.fields["tokenizer.ggml.tokens"].data) == 151_936
    [head] = [t for t in reader.tensors if t.name == "output.weight"]
    assert head.tensor_type == gguf.GGMLQuantizationType.Q4_0
    assert not np.asarray(head.data).any()


def test_a_cut_unlike_its_sha256_is_refused_and_left_nowhere(tmp_path, bundled_model) -> None:
    # The source is the repo's assembled model, linked in so nothing is assembled again.
    models = tmp_path / "models"
    models.mkdir()
    for source in (bundled_model, bundled_model.with_suffix(".gguf.verified")):
        (models / source.name).symlink_to(source)
    wrong = dataclasses.replace(SAFETY_READER, sha256="0" * 64)
    with pytest.raises(ModelUnavailable, match="the version pinned"):
        ensure_cut(wrong, tmp_path)
    assert sorted(p.name for p in models.iterdir()) == sorted(
        [bundled_model.name, bundled_model.name + ".verified"]
    )
    assert not cut_path(wrong, tmp_path).exists()


def test_the_written_cut_is_the_one_the_probe_was_trained_on(safety_model) -> None:
    digest = hashlib.sha256(safety_model.read_bytes()).hexdigest()
    assert digest == SAFETY_READER.sha256
    assert safety_model.stat().st_size == SAFETY_READER.size


def test_the_gateway_refuses_a_safety_model_that_is_not_the_cut(tmp_path, bundled_model) -> None:
    settings = Settings(data_dir=tmp_path, safety_model_path=bundled_model)
    with pytest.raises(ModelUnavailable, match="callswarm model install"):
        safety_embedder(settings)


def test_without_the_cut_the_gateway_leaves_it_to_the_warm_up(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("CALLSWARM_SAFETY_MODEL_PATH")
    embedder = safety_embedder(Settings(data_dir=tmp_path))
    # Nothing was written when the gateway was built: the socket does not wait for it.
    assert not cut_path(SAFETY_READER, tmp_path).exists()
    assert not model_path(SAFETY_READER.source, tmp_path).exists()
    assert embedder.model_id == SAFETY_READER.sha256
