"""The tile classifier: an ONNX CNN over colour cell crops, loaded once per process.

    >>> model = load_model()
    >>> probs = model.probabilities(crops, labels_for(("А", "Б")))   # (N, 4) over . * А Б

The network outputs one score per *glyph*: '.' (empty cell, any premium colour), '*' (a star or
blank tile), '~' (a tile seen turned, used to find the board's upright) and every letter shape
of the Cyrillic (Ё included) and Latin alphabets, homoglyphs (Cyrillic А / Latin A …) merged.
A ruleset's letters map one-to-one onto glyphs; letters outside its alphabet are masked out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
import onnxruntime as ort

EMPTY, STAR, TURNED = ".", "*", "~"
CYRILLIC = "АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ"
LATIN = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
# Latin capitals drawn like a Cyrillic one in every ordinary font: one glyph, two letters.
HOMOGLYPHS = {"A": "А", "B": "В", "C": "С", "E": "Е", "H": "Н", "K": "К", "M": "М",
              "O": "О", "P": "Р", "T": "Т", "X": "Х"}
GLYPHS = (EMPTY, STAR, TURNED) + tuple(CYRILLIC) + tuple(ch for ch in LATIN
                                                         if ch not in HOMOGLYPHS)
MODEL_NAME = "tiles"


def glyph_of(symbol: str) -> str:
    """The glyph class a board symbol shows: a star standing for a letter shows as a star."""
    if symbol in (EMPTY, STAR):
        return symbol
    if symbol.islower():
        return STAR
    return HOMOGLYPHS.get(symbol, symbol)


def labels_for(alphabet) -> list[str]:
    """The symbols a reading reports for a ruleset: empty, star, then its letters."""
    return [EMPTY, STAR, *alphabet]


@dataclass(frozen=True)
class Model:
    session: ort.InferenceSession
    glyphs: tuple[str, ...]
    size: int
    mean: np.ndarray
    std: np.ndarray
    meta: dict

    def run(self, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Glyph log-probabilities (N, G) and penultimate embeddings (N, D) of BGR uint8 crops."""
        if len(crops) == 0:
            return np.zeros((0, len(self.glyphs)), np.float32), np.zeros((0, 0), np.float32)
        x = self.prepare(crops)
        logits, embeddings = self.session.run(None, {"crops": x})
        return _log_softmax(logits), embeddings

    def prepare(self, crops: np.ndarray) -> np.ndarray:
        """(N, H, W, 3) uint8 BGR → the network's normalised (N, 3, H, W) float32 input."""
        x = crops.astype(np.float32) * np.float32(1 / 255)
        x = (x - self.mean) / self.std
        return np.ascontiguousarray(x.transpose(0, 3, 1, 2))

    def columns(self, labels) -> np.ndarray:
        """The glyph index of every label, in label order."""
        index = {g: i for i, g in enumerate(self.glyphs)}
        return np.array([index[glyph_of(s)] for s in labels])

    def probabilities(self, crops: np.ndarray, labels) -> np.ndarray:
        """(N, len(labels)) probabilities, renormalised over the labels' glyphs only."""
        log_probs, _ = self.run(crops)
        return masked(log_probs, self.columns(labels))


def masked(log_probs: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """Softmax restricted to some glyph columns (the rest masked out)."""
    picked = log_probs[:, columns]
    picked = picked - picked.max(axis=1, keepdims=True)
    e = np.exp(picked)
    return e / e.sum(axis=1, keepdims=True)


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def model_dir() -> Path:
    return Path(str(resources.files("models")))


@lru_cache(maxsize=4)
def load_model(path: str | None = None) -> Model:
    """The bundled classifier (or the .onnx at `path`), with its label/normalisation json."""
    onnx_path = Path(path) if path else model_dir() / f"{MODEL_NAME}.onnx"
    meta = json.loads(onnx_path.with_suffix(".json").read_text("utf-8"))
    options = ort.SessionOptions()
    options.intra_op_num_threads = meta.get("threads", 2)
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
    glyphs = tuple(meta["glyphs"])
    if glyphs != GLYPHS:
        raise RuntimeError(f"{onnx_path}: glyph list does not match this code's GLYPHS")
    return Model(session=session, glyphs=glyphs, size=int(meta["input_size"]),
                 mean=np.float32(meta["mean"]), std=np.float32(meta["std"]), meta=meta)
