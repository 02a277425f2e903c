"""Piper's ONNX graph with its 1-D convolutions written as 2-D ones of height 1.

The arithmetic is the same; what changes is which onnxruntime kernels run it. A
Piper voice is a VITS model whose HiFi-GAN decoder spends ~70% of a synthesis in
`Conv`/`ConvTranspose` over 1-D signals, and onnxruntime's CPU provider routes
only 2-D convolutions to its blocked (NCHWc) kernels. Measured here on the bundled
voice and the reference reply, one thread: 0.44 → 0.36 CPU-s (0.81×), audio equal
to within 4 of 32,768 (`benchmarks/engine_cpu.py`, docs/performance.md).

Each rewritten node becomes Unsqueeze → Conv2d → Squeeze; the weight gains an axis
of size 1 in place, so the model holds no second copy of it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

_AXIS = "callswarm_height_axis"
# Raised whenever `conv1d_as_2d` or `split_at_decoder` changes what they write: saved optimised graphs of the
# old rewrite are then not loaded (`optimized_path`).
REWRITE_VERSION = 2
# Attributes that list one value per spatial axis gain one for the new height axis;
# `pads` lists the begins of every axis, then the ends.
_PER_AXIS = {"kernel_shape": 1, "strides": 1, "dilations": 1, "output_padding": 0}


def conv1d_as_2d(model: onnx.ModelProto) -> int:
    """Rewrite, in place, every Conv/ConvTranspose with a constant 3-D weight used by
    no other node; return how many were rewritten."""
    graph = model.graph
    weights = {w.name: w for w in graph.initializer}
    uses = Counter(name for node in graph.node for name in node.input)
    nodes: list[onnx.NodeProto] = []
    rewritten = 0
    for node in graph.node:
        weight = weights.get(node.input[1]) if node.op_type in ("Conv", "ConvTranspose") else None
        if weight is None or len(weight.dims) != 3 or uses[weight.name] != 1:
            nodes.append(node)
            continue
        rewritten += 1
        weight.CopyFrom(
            numpy_helper.from_array(numpy_helper.to_array(weight)[:, :, None, :], weight.name)
        )
        tall, flat = f"{node.input[0]}:2d:{rewritten}", f"{node.output[0]}:2d"
        base = node.name or node.output[0]  # node names must be unique, and may be empty
        nodes.append(
            helper.make_node("Unsqueeze", [node.input[0], _AXIS], [tall], name=f"{base}/tall")
        )
        nodes.append(
            helper.make_node(
                node.op_type,
                [tall, *node.input[1:]],
                [flat],
                name=node.name,
                **{a.name: _taller(a) for a in node.attribute},
            )
        )
        nodes.append(
            helper.make_node("Squeeze", [flat, _AXIS], [node.output[0]], name=f"{base}/flat")
        )
    if rewritten:
        graph.initializer.append(numpy_helper.from_array(np.array([2], dtype=np.int64), _AXIS))
        del graph.node[:]
        graph.node.extend(nodes)
    return rewritten


def _taller(attribute: onnx.AttributeProto) -> Any:  # an attribute of any ONNX type
    value = helper.get_attribute_value(attribute)
    if attribute.name in _PER_AXIS:
        return [_PER_AXIS[attribute.name], *value]
    if attribute.name == "output_shape":
        return [1, *value]
    if attribute.name == "pads":
        begin, end = value
        return [0, begin, 0, end]
    return value


def load_parts(path: Path | str, *, rewrite: bool = True) -> tuple[bytes, bytes]:
    """The voice at `path` split at its decoder (`split_at_decoder`), each part
    serialised for `onnxruntime.InferenceSession`; rewritten unless `rewrite` is False
    (the model's arithmetic as shipped, for comparison)."""
    model = onnx.load(str(path))
    if rewrite:
        conv1d_as_2d(model)
    encoder, decoder = split_at_decoder(model)
    return encoder.SerializeToString(), decoder.SerializeToString()


def optimized_path(
    cache_dir: Path, model_path: Path | str, *, part: str, rewrite: bool, threads: int
) -> Path:
    """Where onnxruntime's optimised graph of this voice is kept for this machine.

    Optimising the graph is most of a session's start (1.25 s of 1.5 s here, twice per
    voice); loading the saved result unoptimised takes 0.26 s. The result may hold
    kernels chosen for this CPU (onnxruntime warns so), so the key holds the CPU's
    flags and onnxruntime's version beside the model file's identity."""
    import hashlib

    import onnxruntime

    stat = Path(model_path).stat()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            flags = next((line for line in cpuinfo if line.startswith("flags")), "")
    except OSError:
        flags = ""
    material = "\n".join(
        [
            f"rewrite-v{REWRITE_VERSION}, onnx {onnx.__version__}",
            str(Path(model_path).resolve()),
            f"{stat.st_size}:{stat.st_mtime_ns}",
            f"part={part}",
            f"rewrite={rewrite}",
            f"threads={threads}",
            onnxruntime.__version__,
            flags,
        ]
    )
    key = hashlib.sha256(material.encode()).hexdigest()[:24]
    return cache_dir / f"{Path(model_path).stem}-{part}-{key}.onnx"


def split_at_decoder(model: onnx.ModelProto) -> tuple[onnx.ModelProto, onnx.ModelProto]:
    """The voice as two graphs: text to the acoustic frames (`enc_p`, the duration
    predictor, the flow), and those frames to audio (the HiFi-GAN `dec`).

    The decoder is convolutional with a receptive field of about a dozen frames, so
    any stretch of frames can be decoded on its own with a few frames of context
    either side (`voice.tts`): a reply's first words are heard before the rest is
    decoded. The tensors handed between them are whatever `dec` reads from outside
    itself: the frames first (what `dec.conv_pre` reads), then a speaker's embedding
    in voices with several speakers. The rewrite's nodes are named after the
    convolution they wrap, so they count as the decoder's. The decoder gives the
    audio (the first output) only: other outputs, such as the phoneme timings a
    voice patched for alignments adds, are the encoder's side. Raises ValueError
    for a graph not exported by Piper's trainer."""
    import onnx.utils

    decoder = [node for node in model.graph.node if node.name.startswith("/dec/")]
    made = {name for node in decoder for name in node.output}
    constants = {w.name for w in model.graph.initializer}
    handed = list(
        dict.fromkeys(
            name
            for node in decoder
            for name in node.input
            if name and name not in made and name not in constants
        )
    )
    frames = next((n.input[0] for n in decoder if n.name.startswith("/dec/conv_pre/")), None)
    if frames not in handed:
        raise ValueError("not a Piper voice: no decoder (`/dec/conv_pre`) in the graph")
    handed.remove(frames)
    handed.insert(0, frames)
    known = {v.name for v in [*model.graph.value_info, *model.graph.input, *model.graph.output]}
    if not known.issuperset(handed):
        # The extractor reads each cut tensor's type from the graph's annotations.
        model = onnx.shape_inference.infer_shapes(model)
    extractor = onnx.utils.Extractor(model)
    return (
        extractor.extract_model([i.name for i in model.graph.input], handed),
        extractor.extract_model(handed, [model.graph.output[0].name]),
    )
