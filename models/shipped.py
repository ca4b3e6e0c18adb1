"""A shipped 8-bit network read back into a float TileNet, to fine-tune it (models.train --init).

    >>> model, glyphs = load_shipped(Path("models/tiles.onnx"))   # then train on at a low rate

The export folds each batch norm into its convolution, so the network read back has none:
convolutions with a bias (TileNet(batch_norm=False)). Weights and biases are dequantized
(integer × scale per output channel); the first convolution's kernel, regrouped for an input
cut into 2×2 blocks (models.quantize.space_to_depth), is put back to its 5×5 form. Glyphs the
file does not know (GLYPHS grew since it was made) get output rows copied from the letter they
are built on (Ä from A): they start out read as that letter and learn the difference.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import numpy as np
import torch

from models.train import TileNet
from vision.classifier import GLYPHS, glyph_of


def load_shipped(path: Path) -> tuple[TileNet, tuple[str, ...]]:
    """(the float network of the 8-bit ONNX at `path` with an output for every one of
    GLYPHS, the glyphs the file itself had); ValueError when the file is not such a network."""
    import onnx
    from google.protobuf.message import DecodeError

    meta_path = path.with_suffix(".json")
    for needed in (path, meta_path):
        if not needed.is_file():
            raise ValueError(f"{needed}: no such file")
    try:
        graph = onnx.load(str(path)).graph
    except DecodeError:
        raise ValueError(f"{path}: not an ONNX model") from None
    meta = json.loads(meta_path.read_text("utf-8"))
    old = tuple(meta.get("glyphs", ()))
    layers = _layers(path, graph)
    if len(layers) != 6:
        raise ValueError(f"{path}: expected 5 convolutions and a linear head, found "
                         f"{len(layers)} layers")
    first = layers[0][0]
    if "space_to_depth" in meta:
        first = _from_blocks(first, meta["space_to_depth"]["block"])
    width = first.shape[0]
    model = TileNet(width=width, batch_norm=False)
    convs = [m for m in model.features if isinstance(m, torch.nn.Conv2d)]
    for conv, (weight, bias) in zip(convs, [(first, layers[0][1]), *layers[1:5]], strict=True):
        if tuple(conv.weight.shape) != weight.shape:
            raise ValueError(f"{path}: a convolution of shape {weight.shape}, expected "
                             f"{tuple(conv.weight.shape)}")
        conv.weight.data = torch.from_numpy(weight)
        conv.bias.data = torch.from_numpy(bias)
    head_weight, head_bias = layers[5]
    if len(old) != len(head_weight):
        raise ValueError(f"{path}: {len(head_weight)} outputs but {len(old)} glyphs in its .json")
    rows = [old.index(_base(glyph, old)) for glyph in GLYPHS]
    head = model.head[-1]
    head.weight.data = torch.from_numpy(head_weight[rows].copy())
    head.bias.data = torch.from_numpy(head_bias[rows].copy())
    return model, old


def _base(glyph: str, known: tuple[str, ...]) -> str:
    """The glyph itself if known, else the glyph of the letter it is built on (Ä → А)."""
    if glyph in known:
        return glyph
    base = glyph_of(unicodedata.normalize("NFD", glyph)[0])
    if base not in known:
        raise ValueError(f"glyph {glyph!r} is new and built on no known glyph")
    return base


def _layers(path: Path, graph) -> list[tuple[np.ndarray, np.ndarray]]:
    """(float weight, float bias) of each Conv and Gemm, in the graph's order."""
    from onnx import numpy_helper

    tensors = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    made_by = {node.output[0]: node for node in graph.node if node.op_type == "DequantizeLinear"}

    def value(name: str) -> np.ndarray:
        if name in tensors:
            return tensors[name].astype(np.float32)
        node = made_by.get(name)
        if node is None:
            raise ValueError(f"{path}: {name} is neither stored nor dequantized")
        return _dequantized(node, tensors)

    layers = []
    for node in graph.node:
        if node.op_type in ("Conv", "Gemm"):
            if len(node.input) < 3:
                raise ValueError(f"{path}: layer {node.name or node.op_type} has no bias")
            layers.append((value(node.input[1]), value(node.input[2])))
    return layers


def _dequantized(node, tensors: dict) -> np.ndarray:
    """(integer − zero point) × scale, per output channel (axis 0) where the scale is a list."""
    values = tensors[node.input[0]].astype(np.float64)
    scale = tensors[node.input[1]].astype(np.float64)
    zero = tensors[node.input[2]].astype(np.float64) if len(node.input) > 2 else 0.0
    shape = (-1,) + (1,) * (values.ndim - 1) if np.ndim(scale) else ()
    zero = np.reshape(zero, shape) if np.ndim(zero) else zero
    return ((values - zero) * np.reshape(scale, shape)).astype(np.float32)


def _from_blocks(kernel: np.ndarray, block: int) -> np.ndarray:
    """The stride-2 kernel that models.quantize.space_to_depth regrouped, as it was before:
    (out, block·block·colour, half, half) → (out, colour, 2·half − 1, 2·half − 1), the zero
    row and column it was padded with dropped."""
    outputs, stacked, half, _ = kernel.shape
    channels = stacked // (block * block)
    even = (kernel.reshape(outputs, block, block, channels, half, half)
            .transpose(0, 3, 4, 1, 5, 2).reshape(outputs, channels, block * half, block * half))
    side = block * half - 1
    if np.abs(even[:, :, side:, :]).max() > 0 or np.abs(even[:, :, :, side:]).max() > 0:
        raise ValueError("the first convolution's kernel in blocks has weight in its padding")
    return np.ascontiguousarray(even[:, :, :side, :side])
