"""Turn the trained float classifier into the shipped 8-bit one (about 3× faster on a CPU).

    python -m models.quantize /tmp/m/tiles_float.onnx models/tiles.onnx   # train.py does this
    python -m models.quantize --narrow models/tiles.onnx models/tiles.onnx  # an older 8-bit file
    python -m models.quantize --space-to-depth models/tiles.onnx models/tiles.onnx  # in blocks

Static quantization in onnxruntime's QDQ format: weights per output channel in 7 bits
(-64..64), activations 8-bit with ranges measured on rendered training-font crops (the
validation crops of training, never a real photo). `eval_read --model` compares the two on
every set. Why 7 bits: x86 CPUs without VNNI add two 8-bit products in a 16-bit sum that
saturates (255 × 127 × 2 > 32 767), so a full-range model must there be run the exact, slower
way to read alike everywhere; 255 × 64 × 2 fits, so the fast way is exact on every CPU.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process

from vision.classifier import load_model

WEIGHT_BITS = 7  # see above: no CPU's fast path can saturate on these weights
WEIGHT_LIMIT = 2 ** (WEIGHT_BITS - 1)
CALIBRATION_CROPS = 2048  # enough to settle every layer's range; more changes nothing
BATCH = 64


class _Crops(CalibrationDataReader):
    """Feeds the float model's own normalised input, one batch at a time."""

    def __init__(self, model, crops: np.ndarray):
        self._batches = iter([model.prepare(crops[i:i + BATCH])
                              for i in range(0, len(crops), BATCH)])

    def get_next(self):
        batch = next(self._batches, None)
        return None if batch is None else {"crops": batch}


def quantize(float_path: Path, out_path: Path, crops: np.ndarray,
             weight_bits: int = WEIGHT_BITS, blocks: bool = True) -> Path:
    """Write the 8-bit model of `float_path` (its .json beside it, with `weight_bits`) to
    `out_path`; with `blocks`, its input cut into blocks (space_to_depth)."""
    model = load_model(str(float_path))
    with tempfile.TemporaryDirectory() as tmp:
        prepared = Path(tmp) / "prepared.onnx"
        quant_pre_process(str(float_path), str(prepared))
        quantize_static(str(prepared), str(out_path), _Crops(model, crops[:CALIBRATION_CROPS]),
                        quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        reduce_range=weight_bits < 8)
    _mark_bits(float_path.with_suffix(".json"), out_path.with_suffix(".json"), weight_bits)
    return space_to_depth(out_path, out_path) if blocks else out_path


def narrow(path: Path, out_path: Path) -> Path:
    """Write a full-range 8-bit QDQ model's convolutions with 7-bit weights to `out_path`.
    Each output channel's weights and bias are rescaled by the same factor, so its outputs
    keep their scale; activations keep their quantization as measured."""
    import onnx
    from onnx import numpy_helper

    model = _onnx_model(path)
    tensors = {tensor.name: tensor for tensor in model.graph.initializer}
    made_by = {node.output[0]: node for node in model.graph.node
               if node.op_type == "DequantizeLinear"}
    for conv in (node for node in model.graph.node if node.op_type == "Conv"):
        if conv.input[1] not in made_by or len(conv.input) < 3 or conv.input[2] not in made_by:
            raise ValueError(f"{path}: not an 8-bit QDQ model (convolution {conv.name} has "
                             "float weights or no bias)")
        weights, bias = made_by[conv.input[1]], made_by[conv.input[2]]
        kernel = numpy_helper.to_array(tensors[weights.input[0]]).astype(np.float64)
        widest = np.abs(kernel).reshape(len(kernel), -1).max(axis=1)
        factor = np.maximum(widest / WEIGHT_LIMIT, 1.0)  # per output channel; 1 where it fits
        for dequantized, kind in ((weights, np.int8), (bias, np.int32)):
            quantized, scale = dequantized.input[0], dequantized.input[1]
            values = numpy_helper.to_array(tensors[quantized]).astype(np.float64)
            shape = (-1,) + (1,) * (values.ndim - 1)
            values = np.round(values / factor.reshape(shape))
            tensors[quantized].CopyFrom(numpy_helper.from_array(values.astype(kind), quantized))
            scales = numpy_helper.to_array(tensors[scale]) * factor.astype(np.float32)
            tensors[scale].CopyFrom(numpy_helper.from_array(scales.astype(np.float32), scale))
    onnx.checker.check_model(model)
    onnx.save(model, str(out_path))
    _mark_bits(path.with_suffix(".json"), out_path.with_suffix(".json"), WEIGHT_BITS,
               "narrowed from its full-range 8-bit file by models.quantize --narrow")
    return out_path


def space_to_depth(path: Path, out_path: Path) -> Path:
    """Write an 8-bit QDQ model whose first convolution (stride 2) takes its crop as 2×2
    blocks stacked in the channels (SpaceToDepth), padded beforehand, to `out_path`. Its
    kernel, padded with zero weights to an even size, is regrouped the same way: each output
    is the same integer sum, so the network reads every crop alike, to the bit. Three input
    channels made that convolution onnxruntime's slowest; twelve make a board's crops run
    ~18 % faster. The .json says how to cut the blocks (`vision.classifier`)."""
    import onnx
    from onnx import helper, numpy_helper

    model = _onnx_model(path)
    meta = json.loads(path.with_suffix(".json").read_text("utf-8"))
    if "space_to_depth" in meta:
        raise ValueError(f"{path}: its input is already cut into blocks")
    graph = model.graph
    conv, kernel_name = _first_convolution(path, graph)
    tensors = {tensor.name: tensor for tensor in graph.initializer}
    attributes = {a.name: helper.get_attribute_value(a) for a in conv.attribute}
    kernel = numpy_helper.to_array(tensors[kernel_name])
    pad = attributes.get("pads", [0, 0, 0, 0])[0]
    size = int(meta["input_size"]) + 2 * pad
    if (attributes.get("strides") != [2, 2] or len(set(attributes.get("pads", [0]))) > 1
            or attributes.get("group", 1) != 1 or kernel.shape[2] != kernel.shape[3] or size % 2):
        raise ValueError(f"{path}: its first convolution is not a square one of stride 2 "
                         "with even padding")
    outputs, channels, side, _ = kernel.shape
    half = (side + 1) // 2
    even = np.zeros((outputs, channels, 2 * half, 2 * half), kernel.dtype)
    even[:, :, :side, :side] = kernel
    # input channel (row in block, column in block, colour), as SpaceToDepth stacks them
    blocks = even.reshape(outputs, channels, half, 2, half, 2).transpose(0, 3, 5, 1, 2, 4)
    tensors[kernel_name].CopyFrom(numpy_helper.from_array(
        np.ascontiguousarray(blocks.reshape(outputs, 4 * channels, half, half)), kernel_name))
    for attribute in [a for a in conv.attribute if a.name in ("kernel_shape", "strides", "pads")]:
        conv.attribute.remove(attribute)
    conv.attribute.extend([helper.make_attribute("kernel_shape", [half, half]),
                           helper.make_attribute("strides", [1, 1]),
                           helper.make_attribute("pads", [0, 0, 0, 0])])
    dims = graph.input[0].type.tensor_type.shape.dim
    dims[1].dim_value, dims[2].dim_value, dims[3].dim_value = 4 * channels, size // 2, size // 2
    onnx.checker.check_model(model)
    onnx.save(model, str(out_path))
    meta["space_to_depth"] = {"block": 2, "pad": int(pad)}
    _write_meta(out_path.with_suffix(".json"), meta)
    return out_path


def _first_convolution(path: Path, graph):
    """(the convolution the input's quantize and dequantize nodes feed, its 8-bit kernel's
    initializer name); ValueError when the model is not so."""
    feeds = {name: node for node in graph.node for name in node.input}
    made_by = {node.output[0]: node for node in graph.node}
    quantize_node = feeds.get(graph.input[0].name)
    dequantize_node = None if quantize_node is None else feeds.get(quantize_node.output[0])
    conv = None if dequantize_node is None else feeds.get(dequantize_node.output[0])
    if (quantize_node is None or quantize_node.op_type != "QuantizeLinear"
            or conv is None or conv.op_type != "Conv"
            or made_by.get(conv.input[1], conv).op_type != "DequantizeLinear"):
        raise ValueError(f"{path}: not an 8-bit QDQ model whose input feeds a convolution")
    return conv, made_by[conv.input[1]].input[0]


def _onnx_model(path: Path):
    """The ONNX model at `path`; ValueError when the file is missing, its .json beside it is
    missing, or it is not an ONNX model."""
    import onnx
    from google.protobuf.message import DecodeError

    for needed in (path, path.with_suffix(".json")):
        if not needed.is_file():
            raise ValueError(f"{needed}: no such file")
    try:
        return onnx.load(str(path))
    except DecodeError:
        raise ValueError(f"{path}: not an ONNX model") from None


def _mark_bits(meta_path: Path, out_meta: Path, bits: int, how: str = "") -> None:
    """The model's .json with `weight_bits` (7: the reader knows no CPU can saturate)."""
    meta = json.loads(meta_path.read_text("utf-8"))
    meta["weight_bits"] = bits
    if how:  # its val_accuracy stays the full-range file's
        meta["quantized"] = f"QDQ, 8-bit activations, {bits}-bit weights per channel, {how}"
    _write_meta(out_meta, meta)


def _write_meta(path: Path, meta: dict) -> None:
    path.write_text(json.dumps(meta, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def main(argv=None) -> None:
    from models.dataset import generate, training_seeds

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("float_model", type=Path,
                        help="the float .onnx (with --narrow: an 8-bit one)")
    parser.add_argument("out", type=Path)
    parser.add_argument("--narrow", action="store_true",
                        help="narrow an 8-bit model's weights to 7 bits (no float model needed)")
    parser.add_argument("--space-to-depth", action="store_true",
                        help="cut an 8-bit model's input into 2x2 blocks (the same readings, "
                             "faster)")
    parser.add_argument("--seed", type=int, default=1, help="training seed: its validation photos")
    parser.add_argument("--shots", type=int, default=1500, help="training photos of that seed")
    args = parser.parse_args(argv)
    try:
        if args.narrow or args.space_to_depth:
            path = (narrow if args.narrow else space_to_depth)(args.float_model, args.out)
            print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")
            return
        _onnx_model(args.float_model)
    except ValueError as exc:
        raise SystemExit(f"models.quantize: {exc}") from None
    except OSError as exc:  # the file to write
        raise SystemExit(f"models.quantize: {exc.filename}: {exc.strerror}") from None
    _, val_seeds = training_seeds(args.seed, args.shots)  # as train.py: its first photos
    crops, _ = generate(val_seeds[:8], fonts="train", workers=1, variety=True)
    path = quantize(args.float_model, args.out, crops)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
