"""The training script end to end on a tiny run: rendered crops → float network → 8-bit ONNX."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest

from vision.classifier import GLYPHS, load_model

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from models.train import main

    out = tmp_path_factory.mktemp("model")
    main(["--seed", "7", "--shots", "4", "--epochs", "1", "--workers", "1", "--out", str(out)])
    return out


def test_training_writes_an_8_bit_model_with_its_label_list(tiny_model):
    meta = json.loads((tiny_model / "tiles.json").read_text("utf-8"))
    assert meta["glyphs"] == list(GLYPHS) and meta["input_size"] == 48
    assert meta["quantized"] and meta["seed"] == 7 and meta["shots"] == 4
    graph = onnx.load(str(tiny_model / "tiles.onnx")).graph
    assert any(node.op_type == "QuantizeLinear" for node in graph.node)
    # 8 bits cost the network next to nothing on its own validation crops
    assert abs(meta["val_accuracy"] - meta["float_val_accuracy"]) < 0.03


def test_the_8_bit_model_reads_through_the_reader(tiny_model):
    model = load_model(str(tiny_model / "tiles.onnx"))
    log_probs, embeddings = model.run(np.zeros((3, 48, 48, 3), np.uint8))
    assert log_probs.shape == (3, len(GLYPHS)) and embeddings.shape[0] == 3
    assert np.allclose(np.exp(log_probs).sum(axis=1), 1, atol=1e-4)
