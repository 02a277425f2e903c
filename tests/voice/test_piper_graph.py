from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper, numpy_helper

from voice.piper_graph import conv1d_as_2d
from voice.tts import PiperTTS, bundled_voice


def _run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return session.run(None, {"x": x})[0]


def _convolutions(shared: bool) -> onnx.ModelProto:
    """Every attribute a 1-D convolution can carry: strided, dilated, padded,
    grouped, with a bias; then a transposed one with an output padding. With
    `shared`, a second convolution reads the first one's weight."""
    rng = np.random.default_rng(7)
    weights = [
        numpy_helper.from_array(rng.standard_normal((6, 2, 5)).astype(np.float32), "w"),
        numpy_helper.from_array(rng.standard_normal(6).astype(np.float32), "b"),
        numpy_helper.from_array(rng.standard_normal((6, 3, 4)).astype(np.float32), "wt"),
    ]
    nodes = [
        helper.make_node(
            "Conv",
            ["x", "w", "b"],
            ["y"],
            strides=[2],
            dilations=[3],
            pads=[4, 1],
            group=2,
            kernel_shape=[5],
        ),
        helper.make_node(
            "ConvTranspose", ["y", "wt"], ["z"], strides=[3], pads=[1, 2], output_padding=[1]
        ),
    ]
    outputs = [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["n", "c", "t"])]
    if shared:
        nodes.append(helper.make_node("Conv", ["x", "w"], ["again"], group=2))
        outputs.append(helper.make_tensor_value_info("again", TensorProto.FLOAT, ["n", "c", "t"]))
    graph = helper.make_graph(
        nodes,
        "convolutions",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 50])],
        outputs,
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])


def test_the_rewritten_convolutions_compute_what_the_originals_did() -> None:
    x = np.random.default_rng(1).standard_normal((1, 4, 50)).astype(np.float32)
    model = _convolutions(shared=False)
    expected = _run(model, x)

    assert conv1d_as_2d(model) == 2
    onnx.checker.check_model(model)
    assert {len(w.dims) for w in model.graph.initializer if w.name in ("w", "wt")} == {4}
    got = _run(model, x)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-4)


def test_a_weight_read_by_two_nodes_is_left_as_it_was() -> None:
    x = np.random.default_rng(2).standard_normal((1, 4, 50)).astype(np.float32)
    model = _convolutions(shared=True)
    expected = _run(model, x)

    assert conv1d_as_2d(model) == 1  # only the transposed convolution owns its weight
    np.testing.assert_allclose(_run(model, x), expected, rtol=1e-5, atol=1e-4)


def test_the_bundled_voice_says_the_same_on_the_rewritten_graph(tts: PiperTTS) -> None:
    shipped = PiperTTS(bundled_voice(), deterministic=True, workers=1, rewrite_graph=False)
    for text in ("I've added 2 packs of Paracetamol,", "at 2 dollars 99 each."):
        ours = np.frombuffer(tts.synthesize_sync(text), dtype="<i2").astype(np.int32)
        theirs = np.frombuffer(shipped.synthesize_sync(text), dtype="<i2").astype(np.int32)
        assert ours.size == theirs.size > tts.sample_rate
        # Float rounding in another summation order: a few steps of 32,768 at most.
        assert np.abs(ours - theirs).max() <= 16
