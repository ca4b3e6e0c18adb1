"""Train the tile classifier on rendered photos only, and export it to ONNX.

    python -m models.train --seed 5 --shots 2000 --also 6:800 --epochs 4 --width 24 --shake \
        --threads 2 --any-box 0.25 --soften 0.5 --longest 13 --out models/  # shipped (~1.5 h)
    python -m models.train --seed 1 --out /tmp/m --shots 100 --epochs 1  # a quick smoke run
    python -m models.train --init models/tiles.onnx --lr 3e-4 --seed 9 --shots 500 \
        --epochs 2 --real-boxes 0.4 --shake --soften 0.5 --longest 13 --any-box 0.25 \
        --out models/  # fine-tune a shipped network (MODEL_CARD.md has the exact commands)
    python -m models.train --seed 5 --shots 2000 --also 6:800 --also 7:2000:0.4 \
        --also 8:800:0.4 --epochs 3 --width 24 --shake --threads 2 --any-box 0.25 \
        --soften 0.5 --longest 13 --name tiles-second --out models/  # second opinion (~2.5 h)

The data come from models.dataset (renderer → corners → rectify → the cutter's crops), seeded
by --seed; no real photo is ever used. Prints progress; writes tiles.onnx (8-bit, quantized
by models.quantize from the trained float network) and tiles.json. With --init the network
starts from a shipped one's weights (models.shipped), new glyphs' outputs from their base
letter's, instead of from random ones.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from models.dataset import MAX_CROPS, generate, training_seeds
from synth.render import font_paths
from vision.cells import CROP
from vision.classifier import (
    BLANK,
    EMPTY,
    GLYPHS,
    MODEL_NAME,
    SECOND_NAME,
    STAR,
    TURNED,
    load_model,
)

MEAN, STD = (0.5, 0.5, 0.5), (0.25, 0.25, 0.25)
TURNED_SHARE = 0.12  # share of letter tiles shown turned 90/180/270 as the '~' class
SOFTEN = 0.3  # share of crops blurred in training (far or soft photos)
LONGEST = 7  # px: the longest motion-blur line drawn with --shake
WIDTH = 20  # channels of the stem; the embedding has 8×WIDTH
READ_BATCH = 4096  # crops per onnxruntime call when measuring: memory stays small


def _conv(cin: int, cout: int, kernel: int = 3, stride: int = 1,
          batch_norm: bool = True) -> list[nn.Module]:
    """A convolution, its batch norm and ReLU; without batch norm, a convolution with a bias
    (a shipped network read back, whose batch norms the export folded into its convolutions)."""
    conv = nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2, bias=not batch_norm)
    return [conv, nn.BatchNorm2d(cout), nn.ReLU(inplace=True)] if batch_norm else \
        [conv, nn.ReLU(inplace=True)]


class TileNet(nn.Module):
    """A small CNN: 48 px crop → 8w-d embedding → glyph logits. Returns both."""

    def __init__(self, classes: int = len(GLYPHS), width: int = WIDTH, batch_norm: bool = True):
        super().__init__()
        w, bn = width, batch_norm
        self.features = nn.Sequential(
            *_conv(3, w, kernel=5, stride=2, batch_norm=bn),  # 24 px: a strided stem is cheap
            *_conv(w, 2 * w, batch_norm=bn), nn.MaxPool2d(2),  # 12 px
            *_conv(2 * w, 4 * w, batch_norm=bn), nn.MaxPool2d(2),  # 6 px
            *_conv(4 * w, 8 * w, batch_norm=bn), nn.MaxPool2d(2),  # 3 px
            *_conv(8 * w, 8 * w, batch_norm=bn),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.head = nn.Sequential(nn.Dropout(0.2), nn.Linear(8 * w, classes))

    def forward(self, x):
        embedding = self.features(x)
        return self.head(embedding), embedding


def augment(x: torch.Tensor, labels: torch.Tensor, gen: torch.Generator, shake: bool = False,
            soften: float = SOFTEN, longest: int = LONGEST):
    """Photometric and resolution jitter on a float batch in [0,1] (N,3,H,W); turned tiles.

    Geometry (shift, scale, tilt, corner error) is already in the crops: the dataset cuts them
    with the real cutter from jittered corners.
    """
    n = len(x)
    x, labels = _turn(x, labels, gen)
    u = lambda *shape: torch.rand(*shape, generator=gen)  # noqa: E731
    gain = 0.55 + 0.9 * u(n, 1, 1, 1)
    colour = 0.85 + 0.3 * u(n, 3, 1, 1)
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    contrast = 0.7 + 0.6 * u(n, 1, 1, 1)
    x = ((x - mean) * contrast + mean) * gain * colour
    x = _soften(x, gen, shake, soften, longest)
    x = x + u(n, 1, 1, 1) * 0.04 * torch.randn(x.shape, generator=gen)
    return x.clamp(0, 1), labels


def _turn(x, labels, gen):
    """Empty cells turn freely (they have no upright); some letter tiles turn into '~'."""
    n = len(x)
    k = torch.randint(0, 4, (n,), generator=gen)
    empty = labels == GLYPHS.index(EMPTY)
    star = (labels == GLYPHS.index(STAR)) | (labels == GLYPHS.index(BLANK))  # no upright
    letter = ~empty & ~star
    turned = letter & (torch.rand(n, generator=gen) < TURNED_SHARE) & (k > 0)
    spin = (empty | turned | star) & (k > 0)
    out = x.clone()
    for turns in (1, 2, 3):
        pick = spin & (k == turns)
        if pick.any():
            out[pick] = torch.rot90(x[pick], turns, dims=(2, 3))
    labels = labels.clone()
    labels[turned] = GLYPHS.index(TURNED)
    return out, labels


def _soften(x, gen, shake: bool = False, share: float = SOFTEN, longest: int = LONGEST):
    """Blur some crops by a down-and-up resize (far or soft photos); with `shake` half the
    time also along one line (a shaken hand): unseen fonts failed most in blur."""
    n, size = len(x), x.shape[-1]
    pick = torch.rand(n, generator=gen) < share
    if not pick.any():
        return x
    small = int(torch.randint(size * 5 // 8, size - 4, (1,), generator=gen))
    sub = F.interpolate(x[pick], size=(small, small), mode="bilinear", antialias=True,
                        align_corners=False)
    soft = F.interpolate(sub, size=(size, size), mode="bilinear", align_corners=False)
    if shake and torch.rand(1, generator=gen) < 0.5:
        soft = _shake(soft, gen, longest)
    x = x.clone()
    x[pick] = soft
    return x


def _shake(x, gen, longest: int = LONGEST):
    """Motion blur: the mean along a line of random length (3..longest px) and direction."""
    length = int(torch.randint(3, longest + 1, (1,), generator=gen))
    angle = float(torch.rand(1, generator=gen)) * math.pi
    kernel = torch.zeros(longest, longest)
    half = (longest - 1) / 2
    for t in torch.linspace(-(length - 1) / 2, (length - 1) / 2, 2 * length):
        col = round(half + float(t) * math.cos(angle))
        row = round(half + float(t) * math.sin(angle))
        kernel[row, col] = 1.0
    kernel = (kernel / kernel.sum()).expand(3, 1, longest, longest)
    pad = longest // 2
    return F.conv2d(F.pad(x, (pad,) * 4, mode="replicate"), kernel, groups=3)


def to_input(crops: torch.Tensor) -> torch.Tensor:
    """uint8 (N,H,W,3) BGR → float (N,3,H,W) in [0,1]."""
    return crops.permute(0, 3, 1, 2).float().div_(255)


def normalise(x: torch.Tensor) -> torch.Tensor:
    mean = torch.tensor(MEAN).view(1, 3, 1, 1)
    std = torch.tensor(STD).view(1, 3, 1, 1)
    return (x - mean) / std


def train(crops: np.ndarray, labels: np.ndarray, *, seed: int, epochs: int, batch: int = 128,
          lr: float = 3e-3, val: tuple | None = None, width: int = WIDTH,
          shake: bool = False, soften: float = SOFTEN, longest: int = LONGEST,
          bf16: bool = False, model: TileNet | None = None) -> TileNet:
    """Train `model` (a new TileNet of `width` if None) on the crops; prints progress."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = model if model is not None else TileNet(width=width)
    data, target = torch.from_numpy(crops), torch.from_numpy(labels.astype(np.int64))
    steps = epochs * math.ceil(len(data) / batch)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.15)
    start, step = time.time(), 0
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(len(data), generator=gen)
        seen, loss_sum, right = 0, 0.0, 0
        for i in range(0, len(order), batch):
            idx = order[i:i + batch]
            x, y = augment(to_input(data[idx]), target[idx], gen, shake, soften, longest)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                logits, _ = model(normalise(x))
            loss = F.cross_entropy(logits.float(), y, label_smoothing=0.05)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            seen += len(idx)
            loss_sum += loss.item() * len(idx)
            right += int((logits.argmax(1) == y).sum())
            if step % 200 == 0:
                print(f"epoch {epoch + 1}/{epochs} step {step}/{steps} loss {loss_sum / seen:.4f} "
                      f"acc {right / seen:.4f} {time.time() - start:.0f}s", flush=True)
        line = f"epoch {epoch + 1} done: loss {loss_sum / seen:.4f} train acc {right / seen:.4f}"
        if val is not None:
            line += f" val acc {accuracy(model, *val):.4f}"
        print(line, f"{time.time() - start:.0f}s", flush=True)
    return model


@torch.no_grad()
def accuracy(model: TileNet, crops: np.ndarray, labels: np.ndarray) -> float:
    model.eval()
    right = 0
    for i in range(0, len(crops), 512):
        x = normalise(to_input(torch.from_numpy(crops[i:i + 512])))
        right += int((model(x)[0].argmax(1).numpy() == labels[i:i + 512]).sum())
    return right / max(len(crops), 1)


def export(model: TileNet, out: Path, meta: dict, name: str = MODEL_NAME) -> Path:
    """Write <out>/<name>.onnx and .json (glyphs, input size, normalisation, provenance)."""
    out.mkdir(parents=True, exist_ok=True)
    model.eval()
    path = out / f"{name}.onnx"
    dummy = torch.zeros(1, 3, CROP, CROP)
    torch.onnx.export(model, dummy, str(path), input_names=["crops"],
                      output_names=["logits", "embedding"],
                      dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}, "embedding": {0: "n"}},
                      opset_version=17, dynamo=False)
    _write_info(path, meta)
    return path


def _write_info(path: Path, meta: dict) -> None:
    """The model's .json: what a reader needs beside the network (glyph list, input size,
    normalisation) and how it was made."""
    info = {"glyphs": list(GLYPHS), "input_size": CROP, "channels": "BGR",
            "mean": list(MEAN), "std": list(STD), "threads": 2, **meta}
    path.with_suffix(".json").write_text(json.dumps(info, ensure_ascii=False, indent=1) + "\n",
                                         encoding="utf-8")


def training_data(seed: int, shots: int, workers: int, cache: Path | None, looks: dict):
    """Crops of `shots` rendered photos from the seed's own range, and a small validation set;
    `looks` are models.dataset.generate's keywords (variety, any_box, real_boxes)."""
    any_box, real = looks.get("any_box", 0.0), looks.get("real_boxes", 0.0)
    name = (f"crops_seed{seed}_shots{shots}{'_variety' if looks.get('variety') else ''}"
            f"{f'_any{any_box:g}' if any_box else ''}{f'_real{real:g}' if real else ''}"
            f"_fonts{len(font_paths('train'))}.npz")
    file = cache / name if cache else None
    if file is not None and file.exists():
        with np.load(file) as saved:
            return saved["crops"], saved["labels"], (saved["val_crops"], saved["val_labels"])
    seeds, val_seeds = training_seeds(seed, shots)
    crops, labels = generate(seeds, fonts="train", workers=workers, **looks)
    val = generate(val_seeds, fonts="train", workers=workers, **looks)
    if file is not None:
        file.parent.mkdir(parents=True, exist_ok=True)
        np.savez(file, crops=crops, labels=labels, val_crops=val[0], val_labels=val[1])
    return crops, labels, val


def pooled_data(runs: list[tuple[int, int, float]], workers: int, cache: Path | None,
                looks: dict):
    """training_data of several (seed, shots, any-box share) runs, their crops and validation
    sets joined; `looks` as training_data's, less any_box. Each run's crops are copied into one
    array as they come and then dropped, so memory holds the pool and one run, not every run
    twice (concatenate's peak)."""
    if len(runs) == 1:
        seed, shots, any_box = runs[0]
        return training_data(seed, shots, workers, cache, {**looks, "any_box": any_box})
    # an upper bound: its untouched tail is never written, so it takes no memory
    bound = sum(shots for _, shots, _ in runs) * MAX_CROPS
    crops, at, labels, vals = None, 0, [], []
    for seed, shots, any_box in runs:
        part, part_labels, val = training_data(seed, shots, workers, cache,
                                               {**looks, "any_box": any_box})
        if crops is None:
            crops = np.empty((bound, *part.shape[1:]), part.dtype)
        crops[at:at + len(part)] = part
        at += len(part)
        labels.append(part_labels)
        vals.append(val)
        del part
    join = np.concatenate
    return (crops[:at], join(labels),
            (join([v[0] for v in vals]), join([v[1] for v in vals])))


def _run(parser: argparse.ArgumentParser, text: str, any_box: float) -> tuple[int, int, float]:
    """An --also run: SEED:SHOTS, or SEED:SHOTS:ANY-BOX-SHARE (default: --any-box's)."""
    fields = text.split(":")
    share = any_box
    if len(fields) == 3:
        try:
            share = _share(fields[2])
        except argparse.ArgumentTypeError:
            share = -1.0
    if not (len(fields) in (2, 3) and fields[0].isdigit() and fields[1].isdigit()
            and int(fields[1]) > 0 and share >= 0):
        parser.error(f"--also {text!r}: expected SEED:SHOTS or SEED:SHOTS:SHARE, e.g. 2:1500")
    return int(fields[0]), int(fields[1]), share


def _share(text: str) -> float:
    try:
        share = float(text)
    except ValueError:
        share = -1.0
    if not 0 <= share <= 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a share from 0 to 1, e.g. 0.4")
    return share


def _odd(text: str) -> int:
    """A motion-blur line length: odd, so the kernel has a centre and crops keep their size."""
    if not (text.isdigit() and int(text) >= 3 and int(text) % 2):
        raise argparse.ArgumentTypeError(f"{text!r}: expected an odd number of px, 3 or more")
    return int(text)


def _initial(parser: argparse.ArgumentParser, path: Path | None) -> TileNet | None:
    """The shipped network at `path` read back to fine-tune (None: train from scratch)."""
    if path is None:
        return None
    from models.shipped import load_shipped

    try:
        model, glyphs = load_shipped(path)
    except ValueError as exc:
        parser.error(f"--init: {exc}")
    new = [g for g in GLYPHS if g not in glyphs]
    print(f"init: {path} (width {model.head[-1].in_features // 8}; new glyphs: "
          f"{' '.join(new) or 'none'})", flush=True)
    return model


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("models"))
    parser.add_argument("--shots", type=int, default=1500, help="rendered photos to cut")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--width", type=int, default=WIDTH, help="channels of the stem")
    parser.add_argument("--variety", action=argparse.BooleanOptionalAction, default=True,
                        help="vary the letters' weight, width and slant per rendered box")
    parser.add_argument("--workers", type=int, default=2)
    # One thread: on a shared 2-core machine two OpenMP threads ran 7× slower than one.
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--shake", action="store_true",
                        help="motion-blur half of the blurred crops (the second opinion's recipe)")
    parser.add_argument("--soften", type=_share, default=SOFTEN, metavar="SHARE",
                        help="share of crops blurred in training")
    parser.add_argument("--longest", type=_odd, default=LONGEST, metavar="PX",
                        help="longest motion-blur line with --shake (odd)")
    parser.add_argument("--name", default=MODEL_NAME,
                        help=f"file name in --out: {MODEL_NAME}, or {SECOND_NAME} for the "
                             "second opinion")
    parser.add_argument("--also", action="append", default=[], metavar="SEED:SHOTS[:SHARE]",
                        help="add another seed's photos to the data, with its own --any-box "
                             "share if given (repeatable)")
    parser.add_argument("--any-box", type=_share, default=0.0, metavar="SHARE",
                        help="share of photos showing a box of random colours (0..1)")
    parser.add_argument("--real-boxes", type=_share, default=0.0, metavar="SHARE",
                        help="share of photos of the looks real boxes have beyond the four "
                             "styles (tournament boards, printed premium labels, German "
                             "letters, ~1 MP overhead photos)")
    parser.add_argument("--init", type=Path, metavar="ONNX",
                        help="start from this shipped 8-bit network's weights (fine-tuning; "
                             "its width wins over --width)")
    parser.add_argument("--lr", type=float, default=3e-3,
                        help="the highest learning rate (fine-tuning wants ~10x less)")
    parser.add_argument("--bf16", action="store_true",
                        help="train in bfloat16 autocast (twice as fast on CPUs with AMX)")
    parser.add_argument("--cache", type=Path, help="keep the generated crops here for re-runs")
    args = parser.parse_args(argv)
    start = _initial(parser, args.init)
    also = [_run(parser, text, args.any_box) for text in args.also]
    torch.set_num_threads(args.threads)
    t0 = time.time()
    looks = {"variety": args.variety, "real_boxes": args.real_boxes}
    crops, labels, val = pooled_data([(args.seed, args.shots, args.any_box), *also],
                                     args.workers, args.cache, looks)
    data_s = time.time() - t0
    shots = args.shots + sum(run[1] for run in also)
    print(f"data: {len(crops)} crops from {shots} shots in {data_s:.0f}s", flush=True)
    t1 = time.time()
    model = train(crops, labels, seed=args.seed, epochs=args.epochs, val=val, width=args.width,
                  shake=args.shake, soften=args.soften, longest=args.longest,
                  bf16=args.bf16, lr=args.lr, model=start)
    train_s = time.time() - t1
    width = model.head[-1].in_features // 8
    meta = {"seed": args.seed, "shots": args.shots, "also": args.also, "crops": int(len(crops)),
            "epochs": args.epochs, "width": width, "variety": args.variety,
            "shake": args.shake, "soften": args.soften, "longest": args.longest,
            "bf16": args.bf16, "any_box": args.any_box, "train_threads": args.threads,
            "real_boxes": args.real_boxes, "lr": args.lr,
            "init": str(args.init) if args.init else None,
            "params": sum(p.numel() for p in model.parameters()),
            "val_accuracy": round(accuracy(model, *val), 5),
            "data_seconds": round(data_s), "train_seconds": round(train_s),
            "command": f"python -m models.train --seed {args.seed} --shots {args.shots} "
                       f"--epochs {args.epochs} --width {width}"
                       f"{f' --init {args.init}' if args.init else ''}"
                       f"{f' --lr {args.lr:g}' if args.lr != 3e-3 else ''}"
                       f"{'' if args.variety else ' --no-variety'}"
                       f"{' --shake' if args.shake else ''} --threads {args.threads}"
                       f"{f' --soften {args.soften:g}' if args.soften != SOFTEN else ''}"
                       f"{f' --longest {args.longest}' if args.longest != LONGEST else ''}"
                       f"{''.join(f' --also {text}' for text in args.also)}"
                       f"{f' --any-box {args.any_box:g}' if args.any_box else ''}"
                       f"{f' --real-boxes {args.real_boxes:g}' if args.real_boxes else ''}"
                       f"{' --bf16' if args.bf16 else ''}"
                       f" --name {args.name} --out models/"}
    path, meta = shipped(model, args.out, meta, val, args.name)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB), val acc {meta['val_accuracy']} "
          f"(float {meta['float_val_accuracy']})")


def shipped(model: TileNet, out: Path, meta: dict, val: tuple,
            name: str = MODEL_NAME) -> tuple[Path, dict]:
    """Export the float model, quantize it (models.quantize) into `out`, and record both
    accuracies."""
    from models.quantize import quantize

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        float_path = export(model, Path(tmp), meta, name)
        path = quantize(float_path, out / float_path.name, val[0])
    reader = load_model(str(path))
    right = np.concatenate([reader.run(val[0][i:i + READ_BATCH])[0].argmax(axis=1)
                            for i in range(0, len(val[0]), READ_BATCH)]) == val[1]
    bits = reader.meta["weight_bits"]
    meta = {**meta, "float_val_accuracy": meta["val_accuracy"],
            "val_accuracy": round(float(right.mean()), 5), "weight_bits": bits,
            "quantized": f"QDQ, 8-bit activations, {bits}-bit weights per channel",
            "space_to_depth": reader.meta["space_to_depth"]}
    _write_info(path, meta)
    return path, meta


if __name__ == "__main__":
    main()
