"""The training script end to end on a tiny run: rendered crops → float network → 8-bit ONNX."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vision.classifier import GLYPHS, load_model

TRAIN_EXTRA = "training needs the `train` extra (pip install -e '.[train]')"
pytest.importorskip("torch", reason=TRAIN_EXTRA)
onnx = pytest.importorskip("onnx", reason=TRAIN_EXTRA)
from onnx import numpy_helper  # noqa: E402  (after the skip: onnx comes with the train extra)

# one pytest-xdist worker runs the whole module, so its module fixtures are made once
pytestmark = pytest.mark.xdist_group("models")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from models.train import main

    out = tmp_path_factory.mktemp("model")
    main(["--seed", "7", "--shots", "4", "--also", "8:2", "--epochs", "1", "--workers", "1",
          "--shake", "--any-box", "0.5", "--soften", "0.5", "--longest", "9",
          "--bf16",
          "--name", "tiles-second", "--out", str(out)])
    return out


def test_training_writes_an_8_bit_model_with_its_label_list(tiny_model):
    meta = json.loads((tiny_model / "tiles-second.json").read_text("utf-8"))
    assert meta["glyphs"] == list(GLYPHS) and meta["input_size"] == 48
    assert meta["quantized"] and meta["seed"] == 7 and meta["shots"] == 4 and meta["shake"]
    assert "--shake" in meta["command"] and "--name tiles-second" in meta["command"]
    assert meta["also"] == ["8:2"] and "--also 8:2" in meta["command"]
    assert meta["any_box"] == 0.5 and "--any-box 0.5" in meta["command"]
    assert meta["bf16"] and "--any-box 0.5 --bf16" in meta["command"]
    assert meta["soften"] == 0.5 and "--soften 0.5 --longest 9" in meta["command"]
    assert meta["threads"] == 2  # onnxruntime's threads, not the training's
    graph = onnx.load(str(tiny_model / "tiles-second.onnx")).graph
    assert any(node.op_type == "QuantizeLinear" for node in graph.node)
    assert meta["weight_bits"] == 7 and _widest_weight(graph) <= 64
    assert meta["space_to_depth"] == {"block": 2, "pad": 2}  # the reader's fast input
    # 8 bits cost the network next to nothing on its own validation crops
    assert abs(meta["val_accuracy"] - meta["float_val_accuracy"]) < 0.03


def test_photos_of_another_seed_join_the_data(monkeypatch):
    from models import train

    shares = []

    def fake(seed, shots, workers, cache, looks):
        shares.append((looks["any_box"], looks["variety"]))
        crops = np.full((shots, 48, 48, 3), seed, np.uint8)
        return crops, np.full(shots, seed), (crops[:1], np.full(1, seed))

    monkeypatch.setattr(train, "training_data", fake)
    runs = [(1, 3, 0.25), (2, 2, 0.4)]
    crops, labels, (val_crops, val_labels) = train.pooled_data(runs, 1, None, {"variety": False})
    assert labels.tolist() == [1, 1, 1, 2, 2] and len(crops) == 5
    assert crops[:, 0, 0, 0].tolist() == [1, 1, 1, 2, 2]
    assert shares == [(0.25, False), (0.4, False)]
    assert val_labels.tolist() == [1, 2] and val_crops[1, 0, 0, 0] == 2


def test_an_also_run_may_carry_its_own_share_of_random_boxes():
    import argparse

    from models.train import _run

    parser = argparse.ArgumentParser()
    assert _run(parser, "7:2000", 0.25) == (7, 2000, 0.25)
    assert _run(parser, "7:2000:0.4", 0.25) == (7, 2000, 0.4)


@pytest.mark.parametrize("text", ["2", "x:5", "2:0", "2:-1", "2:5:1.5", "2:5:0.1:3"])
def test_a_malformed_also_is_refused_by_name(text, capsys):
    from models.train import main

    with pytest.raises(SystemExit):
        main(["--also", text])
    assert f"--also {text!r}: expected SEED:SHOTS" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["1.5", "-0.1", "half"])
def test_a_share_of_random_boxes_outside_0_to_1_is_refused(text, capsys):
    from models.train import main

    with pytest.raises(SystemExit):
        main(["--any-box", text])
    assert f"{text!r}: expected a share from 0 to 1" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["8", "1", "long"])
def test_a_motion_blur_line_not_odd_is_refused(text, capsys):
    from models.train import main

    with pytest.raises(SystemExit):
        main(["--longest", text])
    assert f"{text!r}: expected an odd number of px" in capsys.readouterr().err


def test_the_8_bit_model_reads_through_the_reader(tiny_model):
    model = load_model(str(tiny_model / "tiles-second.onnx"))
    log_probs, embeddings = model.run(np.zeros((3, 48, 48, 3), np.uint8))
    assert log_probs.shape == (3, len(GLYPHS)) and embeddings.shape[0] == 3
    assert np.allclose(np.exp(log_probs).sum(axis=1), 1, atol=1e-4)


def test_shaking_smears_along_one_line_and_keeps_flat_colour():
    import torch

    from models.train import _shake

    gen = torch.Generator().manual_seed(3)
    flat = torch.full((1, 3, 16, 16), 0.4)
    assert torch.allclose(_shake(flat, gen), flat, atol=1e-6)
    dot = torch.zeros(1, 3, 17, 17)
    dot[..., 8, 8] = 1.0
    smeared = _shake(dot, gen)[0, 0]
    assert abs(float(smeared.sum()) - 1) < 1e-5 and float(smeared.max()) < 0.5
    lit = torch.nonzero(smeared > 1e-6)
    assert 2 <= len(lit) <= 7  # a short line of pixels, not a disc


def _widest_weight(graph) -> int:
    """The largest |weight| of the graph's convolutions (8-bit activations meet them in
    integer arithmetic; the head's input is the float embedding)."""
    tensors = {tensor.name: tensor for tensor in graph.initializer}
    made_by = {node.output[0]: node.input[0] for node in graph.node
               if node.op_type == "DequantizeLinear"}
    return max(int(np.abs(numpy_helper.to_array(tensors[made_by[node.input[1]]])).max())
               for node in graph.node if node.op_type == "Conv")


def test_an_8_bit_model_narrowed_to_7_bits_reads_as_before(tmp_path):
    """The shipped networks were narrowed from full-range 8-bit files (models.quantize
    --narrow): each output channel is rescaled whole, so its outputs barely move."""
    import torch

    from models.quantize import narrow, quantize
    from models.train import TileNet, export

    torch.manual_seed(0)
    float_path = export(TileNet(width=8), tmp_path / "float", {"seed": 0})
    crops = np.random.default_rng(0).integers(0, 256, (256, 48, 48, 3), dtype=np.uint8)
    full = quantize(float_path, tmp_path / "full.onnx", crops, weight_bits=8)
    assert _widest_weight(onnx.load(str(full)).graph) == 127
    seven = narrow(full, tmp_path / "seven.onnx")
    assert _widest_weight(onnx.load(str(seven)).graph) == 64
    assert json.loads(seven.with_suffix(".json").read_text("utf-8"))["weight_bits"] == 7
    before, after = (load_model(str(path)).run(crops[:64])[1] for path in (full, seven))
    assert np.corrcoef(before.ravel(), after.ravel())[0, 1] > 0.99
    from models.quantize import main

    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model")
    junk.with_suffix(".json").write_text("{}")
    for source, reason in ((tmp_path / "none.onnx", "none.onnx: no such file"),
                           (junk, "junk.onnx: not an ONNX model"),
                           (float_path, "float.+ not an 8-bit QDQ model"),
                           (full, "out.onnx: No such file or directory")):
        out = tmp_path / ("missing/out.onnx" if source == full else "out.onnx")
        with pytest.raises(SystemExit, match=f"models.quantize: .*{reason}"):
            main(["--narrow", str(source), str(out)])


def test_a_network_fed_its_crops_in_blocks_reads_every_crop_alike_to_the_bit(tmp_path):
    """models.quantize.space_to_depth regroups the first convolution's kernel as the reader
    cuts each crop into 2×2 blocks: the same integer sums, so the same outputs, exactly."""
    import torch

    from models.quantize import main, quantize, space_to_depth
    from models.train import TileNet, export

    torch.manual_seed(1)
    float_path = export(TileNet(width=8), tmp_path / "float", {"seed": 0})
    crops = np.random.default_rng(1).integers(0, 256, (256, 48, 48, 3), dtype=np.uint8)
    crops[:4] = np.reshape((0, 255, 127, 128), (4, 1, 1, 1))  # extremes, the middle's sides
    plain = quantize(float_path, tmp_path / "plain.onnx", crops, blocks=False)
    blocked = space_to_depth(plain, tmp_path / "blocked.onnx")
    model = load_model(str(blocked))
    assert model.meta["space_to_depth"] == {"block": 2, "pad": 2}
    assert model.prepare(crops[:3]).shape == (3, 12, 26, 26)
    for before, after in zip(load_model(str(plain)).run(crops), model.run(crops), strict=True):
        assert np.array_equal(before, after)
    for source, reason in ((blocked, "already cut into blocks"),
                           (float_path, "not an 8-bit QDQ model whose input feeds a convolution")):
        with pytest.raises(SystemExit, match=f"models.quantize: .*{reason}"):
            main(["--space-to-depth", str(source), str(tmp_path / "out.onnx")])


def _fewer_glyphs(source, out, drop: int):
    """A copy of an 8-bit network (and its .json) that has its last `drop` outputs cut off,
    as a file made before GLYPHS grew."""
    from onnx import numpy_helper

    model = onnx.load(str(source))
    gemm = next(node for node in model.graph.node if node.op_type == "Gemm")
    made_by = {node.output[0]: node for node in model.graph.node
               if node.op_type == "DequantizeLinear"}
    names = {name for name in (gemm.input[1], gemm.input[2]) for name in made_by[name].input}
    for tensor in model.graph.initializer:
        if tensor.name in names:
            values = numpy_helper.to_array(tensor)
            tensor.CopyFrom(numpy_helper.from_array(values[:-drop].copy(), tensor.name))
    onnx.save(model, str(out))
    meta = json.loads(source.with_suffix(".json").read_text("utf-8"))
    meta["glyphs"] = meta["glyphs"][:-drop]
    out.with_suffix(".json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    return out


def test_a_shipped_network_read_back_reads_as_its_8_bit_file():
    """models.shipped undoes the export: batch norms folded, 8-bit weights, the first kernel
    regrouped in blocks; the float network read back reads rendered crops as the file does."""
    import torch

    from models.dataset import shot_samples
    from models.shipped import load_shipped
    from models.train import normalise, to_input
    from vision.classifier import model_dir

    crops, _ = shot_samples(9_000_900, variety=True)
    for name in ("tiles", "tiles-second"):
        path = model_dir() / f"{name}.onnx"
        model, glyphs = load_shipped(path)
        assert glyphs == GLYPHS
        model.eval()
        with torch.no_grad():
            logits, _ = model(normalise(to_input(torch.from_numpy(crops))))
        shipped = load_model(str(path)).run(crops)[0]
        agree = (logits.numpy().argmax(axis=1) == shipped.argmax(axis=1)).mean()
        assert agree > 0.98


def test_glyphs_a_network_never_had_start_as_the_letter_they_are_built_on(tmp_path):
    """Ä Ö Ü (added to GLYPHS later) get the outputs of А О U: read as those at first."""
    import torch

    from models.shipped import load_shipped
    from vision.classifier import model_dir

    full, _ = load_shipped(model_dir() / "tiles.onnx")
    old = _fewer_glyphs(model_dir() / "tiles.onnx", tmp_path / "old.onnx", 3)
    grown, glyphs = load_shipped(old)
    assert glyphs == GLYPHS[:-3]
    weight, full_weight = grown.head[-1].weight.data, full.head[-1].weight.data
    assert torch.equal(weight[:-3], full_weight[:-3])
    for new, base in zip("ÄÖÜ", "АОU", strict=True):
        assert torch.equal(weight[GLYPHS.index(new)], full_weight[GLYPHS.index(base)])


def test_a_file_that_is_no_shipped_network_is_refused_by_name(tmp_path, capsys):
    from models.train import main

    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model")
    junk.with_suffix(".json").write_text("{}")
    for path, reason in ((tmp_path / "none.onnx", "none.onnx: no such file"),
                         (junk, "junk.onnx: not an ONNX model")):
        with pytest.raises(SystemExit):
            main(["--init", str(path)])
        assert f"--init: {tmp_path}/{reason}" in capsys.readouterr().err


def test_fine_tuning_starts_from_a_shipped_network_and_ships_like_training(tmp_path):
    from models.train import main
    from vision.classifier import model_dir

    shipped = model_dir() / "tiles.onnx"
    main(["--init", str(shipped), "--lr", "3e-4", "--seed", "7", "--shots", "2", "--epochs", "1",
          "--workers", "1", "--real-boxes", "0.5", "--out", str(tmp_path)])
    meta = json.loads((tmp_path / "tiles.json").read_text("utf-8"))
    assert meta["init"] == str(shipped) and meta["width"] == 24 and meta["real_boxes"] == 0.5
    assert f"--width 24 --init {shipped} --lr 0.0003" in meta["command"]
    assert "--real-boxes 0.5" in meta["command"]
    assert meta["weight_bits"] == 7 and meta["space_to_depth"] == {"block": 2, "pad": 2}
    assert meta["glyphs"] == list(GLYPHS)
