from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from voice.piper_graph import conv1d_as_2d, split_at_decoder
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


def _voice_like() -> onnx.ModelProto:
    """A graph shaped as a multi-speaker Piper voice's: text to frames, a speaker's
    embedding read by the decoder beside the frames, and phoneme timings (a voice
    patched for alignments) as a second output on the text's side."""
    rng = np.random.default_rng(3)
    weights = [
        numpy_helper.from_array(rng.standard_normal((4, 3, 1)).astype(np.float32), "enc_w"),
        numpy_helper.from_array(rng.standard_normal((2, 4)).astype(np.float32), "speakers"),
        numpy_helper.from_array(rng.standard_normal((5, 4, 3)).astype(np.float32), "pre_w"),
        numpy_helper.from_array(rng.standard_normal((5, 4, 1)).astype(np.float32), "cond_w"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "enc_w"], ["frames"], name="/enc_p/Conv"),
        helper.make_node("Gather", ["speakers", "sid"], ["g0"], name="/emb_g/Gather"),
        helper.make_node("Unsqueeze", ["g0", "axis"], ["g"], name="/Unsqueeze"),
        helper.make_node("ReduceSum", ["x"], ["timings"], name="/ReduceSum", keepdims=0),
        helper.make_node("Conv", ["g", "cond_w"], ["cond"], name="/dec/cond/Conv"),
        helper.make_node(
            "Conv", ["frames", "pre_w"], ["pre"], name="/dec/conv_pre/Conv", pads=[1, 1]
        ),
        helper.make_node("Add", ["pre", "cond"], ["output"], name="/dec/Add"),
    ]
    graph = helper.make_graph(
        nodes,
        "voice",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 20]),
            helper.make_tensor_value_info("sid", TensorProto.INT64, [1]),
        ],
        [
            helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 5, 20]),
            helper.make_tensor_value_info("timings", TensorProto.FLOAT, None),
        ],
        [*weights, numpy_helper.from_array(np.array([2], dtype=np.int64), "axis")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])


def test_a_voice_splits_at_its_decoder_into_parts_that_compute_the_whole() -> None:
    model = _voice_like()
    feeds = {
        "x": np.random.default_rng(4).standard_normal((1, 3, 20)).astype(np.float32),
        "sid": np.array([1], dtype=np.int64),
    }
    expected = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    ).run(["output"], feeds)[0]

    encoder, decoder = split_at_decoder(model)
    handed = [i.name for i in decoder.graph.input]
    assert handed == ["frames", "g"]  # the frames first, whatever the nodes' order
    assert [o.name for o in decoder.graph.output] == ["output"]  # timings stay behind
    first = onnxruntime.InferenceSession(
        encoder.SerializeToString(), providers=["CPUExecutionProvider"]
    ).run(handed, feeds)
    got = onnxruntime.InferenceSession(
        decoder.SerializeToString(), providers=["CPUExecutionProvider"]
    ).run(None, dict(zip(handed, first, strict=True)))[0]
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_a_graph_without_piper_s_decoder_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="not a Piper voice"):
        split_at_decoder(_convolutions(shared=False))


def test_the_split_voice_decodes_what_the_shipped_graph_does(tts: PiperTTS) -> None:
    """The shipped model run whole by onnxruntime against the two graphs, raw floats."""
    whole = onnxruntime.InferenceSession(str(bundled_voice()), providers=["CPUExecutionProvider"])
    text = "Your order of two boxes of paracetamol is confirmed."
    shipped = PiperTTS(bundled_voice(), deterministic=True, workers=1, rewrite_graph=False)
    phonemes = [p for p in shipped._piper.phonemize(text) if p]
    assert len(phonemes) == 1
    ids = shipped._piper.phonemes_to_ids(phonemes[0])
    expected = whole.run(
        None,
        {
            "input": np.array([ids], dtype=np.int64),
            "input_lengths": np.array([len(ids)], dtype=np.int64),
            "scales": shipped._scales,
        },
    )[0].reshape(-1)
    frames = shipped._encode(phonemes[0], shipped._plain)
    got = shipped._decode(shipped._plain, frames, 0, frames.count)
    assert got.size == expected.size > tts.sample_rate
    assert np.abs(got - expected).max() < 1e-4
