"""Turn the trained float classifier into the shipped 8-bit one (about 3× faster on a CPU).

    python -m models.quantize /tmp/m/tiles_float.onnx models/tiles.onnx   # train.py does this

Static quantization in onnxruntime's QDQ format: weights 8-bit per output channel, activations
8-bit with ranges measured on rendered training-font crops (the validation crops of training,
never a real photo). `eval_read --model` compares the two on every set.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

import numpy as np
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process

from vision.classifier import load_model

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


def quantize(float_path: Path, out_path: Path, crops: np.ndarray) -> Path:
    """Write the 8-bit model of `float_path` (its .json copied beside it) to `out_path`."""
    model = load_model(str(float_path))
    with tempfile.TemporaryDirectory() as tmp:
        prepared = Path(tmp) / "prepared.onnx"
        quant_pre_process(str(float_path), str(prepared))
        quantize_static(str(prepared), str(out_path), _Crops(model, crops[:CALIBRATION_CROPS]),
                        quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    if out_path.with_suffix(".json") != float_path.with_suffix(".json"):
        shutil.copy(float_path.with_suffix(".json"), out_path.with_suffix(".json"))
    return out_path


def main(argv=None) -> None:
    from models.dataset import generate, training_seeds

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("float_model", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=1, help="training seed: its validation photos")
    parser.add_argument("--shots", type=int, default=1500, help="training photos of that seed")
    args = parser.parse_args(argv)
    _, val_seeds = training_seeds(args.seed, args.shots)  # as train.py: its first photos
    crops, _ = generate(val_seeds[:8], fonts="train", workers=1, variety=True)
    path = quantize(args.float_model, args.out, crops)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
