"""The tile classifier: an ONNX CNN over colour cell crops, loaded once per process.

    >>> model = load_model()
    >>> probs = model.probabilities(crops, labels_for(("А", "Б")))   # (N, 4) over . * А Б

The network outputs one score per *glyph*: '.' (empty cell, any premium colour), '*' (a star
tile, asterisk printed), '?' (a blank tile, nothing printed), '~' (a tile seen turned, used to
find the board's upright) and every letter shape of the Cyrillic (Ё included) and Latin
alphabets, homoglyphs (Cyrillic А / Latin A …) merged, and the German Ä Ö Ü. A ruleset's
letters map one-to-one onto glyphs, its '*' onto the star and/or blank glyph its boxes use;
other glyphs are masked out.
"""

from __future__ import annotations

import json
import platform
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
import onnxruntime as ort

from engine.errors import RulesetError

EMPTY, STAR, BLANK, TURNED = ".", "*", "?", "~"
CYRILLIC = "АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ"
LATIN = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
UMLAUTS = "ÄÖÜ"  # German boxes' letters: no Cyrillic letter looks like them
# Latin capitals drawn like a Cyrillic one in every ordinary font: one glyph, two letters.
HOMOGLYPHS = {"A": "А", "B": "В", "C": "С", "E": "Е", "H": "Н", "K": "К", "M": "М",
              "O": "О", "P": "Р", "T": "Т", "X": "Х"}
# Glyphs added later go last: a network's earlier outputs keep their places (models.train --init)
GLYPHS = ((EMPTY, STAR, BLANK, TURNED) + tuple(CYRILLIC)
          + tuple(ch for ch in LATIN if ch not in HOMOGLYPHS) + tuple(UMLAUTS))
MODEL_NAME = "tiles"
SECOND_NAME = "tiles-second"  # another network's reading of the doubtful cells


def glyph_of(symbol: str, blank: bool = False) -> str:
    """The glyph a board symbol shows; a star (also one standing for a letter) shows as a
    star, or as a blank tile in boxes whose stars are blanks."""
    if symbol == EMPTY:
        return symbol
    if symbol == STAR or symbol.islower():
        return BLANK if blank else STAR
    return HOMOGLYPHS.get(symbol, symbol)


# The glyphs of each joker look a ruleset can name (its `star_look`): masking the look a box
# does not have keeps a dark empty square from reading as a blank on an Эрудит board.
STAR_LOOKS = {"star": (STAR,), "blank": (BLANK,), "either": (STAR, BLANK)}


def star_glyphs(ruleset) -> tuple[str, ...]:
    """The glyphs that stand for '*' on boards of this ruleset (an engine Ruleset)."""
    return STAR_LOOKS[ruleset.star_look]


def unknown_letters(alphabet, glyphs) -> list[str]:
    """The letters of an alphabet that none of a model's glyphs shows: a network with no
    class for a letter cannot read its tiles."""
    known = set(glyphs)
    return [letter for letter in alphabet if glyph_of(letter) not in known]


def check_readable(ruleset, model: Model | None = None) -> None:
    """RulesetError, in one line naming the letters, when the tile reader (`model`, default
    the bundled one) has no class for some letters of the ruleset (an engine Ruleset): its
    photos cannot be read, while its records and board texts can still be replayed."""
    missing = unknown_letters(ruleset.alphabet, (model or load_model()).glyphs)
    if missing:
        raise RulesetError(code="reader_lacks_letters", ruleset=ruleset.name,
                           letters=", ".join(missing))


def glyphs_of(label: str, stars: tuple[str, ...] = (STAR, BLANK)) -> tuple[str, ...]:
    """The glyphs that count as a reading's label: '*' is a star and/or a blank tile."""
    return stars if label == STAR else (glyph_of(label),)


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
    partner: Model | None = None  # whose embeddings are joined to this one's (profiles)

    def run(self, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Glyph log-probabilities (N, G) and penultimate embeddings (N, D) of BGR uint8 crops;
        with a partner, the embeddings are both networks', each of unit length, side by side."""
        return self.run_both(crops)[:2]

    def run_both(self, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """As `run`, plus the partner's own glyph log-probabilities (None without one): its
        reading comes with the embeddings at no extra cost."""
        if len(crops) == 0:
            empty = np.zeros((0, len(self.glyphs)), np.float32)
            return empty, np.zeros((0, 0), np.float32), None if self.partner is None else empty
        # the partner reads on a thread of its own meanwhile (onnxruntime lets go of the GIL)
        partner = None if self.partner is None else second_thread().submit(self.partner.run, crops)
        logits, embeddings = self.session.run(None, {"crops": self.prepare(crops)})
        theirs = None
        if partner is not None:
            theirs, their_embeddings = partner.result()
            embeddings = np.concatenate([normalised(embeddings), normalised(their_embeddings)],
                                        axis=1)
        return log_softmax(logits), embeddings, theirs

    def prepare(self, crops: np.ndarray) -> np.ndarray:
        """(N, H, W, 3) uint8 BGR → the network's normalised (N, 3, H, W) float32 input; for
        a network that takes its input in blocks (models.quantize.space_to_depth), the crops
        padded with zeros after normalising and cut into 2×2 blocks, (N, 12, H/2+, W/2+)."""
        blocks = self.meta.get("space_to_depth")
        if blocks:
            return self._prepare_blocks(crops, blocks["pad"])
        # Transposing bytes before the float copy, then one multiply-add: 5× cheaper.
        x = np.ascontiguousarray(crops.transpose(0, 3, 1, 2)).astype(np.float32)
        x *= (1 / (255 * self.std)).reshape(1, 3, 1, 1)
        x += (-self.mean / self.std).reshape(1, 3, 1, 1)
        return x

    def _prepare_blocks(self, crops: np.ndarray, pad: int) -> np.ndarray:
        count, height, width, _ = crops.shape
        padded = np.zeros((count, height + 2 * pad, width + 2 * pad, 3), np.uint8)
        padded[:, pad:pad + height, pad:pad + width] = crops
        rows, columns = padded.shape[1] // 2, padded.shape[2] // 2
        # (crop, row in block, column in block, colour, block row, block column): SpaceToDepth's
        # order
        x = np.ascontiguousarray(padded.reshape(count, rows, 2, columns, 2, 3)
                                 .transpose(0, 2, 4, 5, 1, 3)).reshape(count, 12, rows, columns)
        x = x.astype(np.float32)
        scale, shift = _block_normalising(tuple(self.mean), tuple(self.std), height, width, pad)
        x *= scale  # the padding's scale and shift are 0: an exact 0.0, as the convolution pads
        x += shift
        return x

    def columns(self, labels, stars: tuple[str, ...] = (STAR, BLANK)) -> np.ndarray:
        """The glyph indices that stand for any of the labels."""
        index = {g: i for i, g in enumerate(self.glyphs)}
        return np.array([index[g] for s in labels for g in glyphs_of(s, stars)])

    def label_matrix(self, labels, stars: tuple[str, ...] = (STAR, BLANK)) -> np.ndarray:
        """(G, K) 0/1: which glyphs count as which label; glyphs of no label are masked out."""
        matrix = np.zeros((len(self.glyphs), len(labels)), np.float32)
        for k, label in enumerate(labels):
            for glyph in glyphs_of(label, stars):
                matrix[self.glyphs.index(glyph), k] = 1
        return matrix

    def probabilities(self, crops: np.ndarray, labels,
                      stars: tuple[str, ...] = (STAR, BLANK)) -> np.ndarray:
        """(N, len(labels)) probabilities, renormalised over the labels' glyphs only."""
        log_probs, _ = self.run(crops)
        return masked(log_probs, self.label_matrix(labels, stars))


@lru_cache(maxsize=4)
def _block_normalising(mean: tuple, std: tuple, height: int, width: int,
                       pad: int) -> tuple[np.ndarray, np.ndarray]:
    """(12, rows, columns) float32 scale and shift of a padded crop cut into 2×2 blocks: each
    pixel's the same as an uncut crop's (the same bits), the padding's zero."""
    inside = np.zeros((height + 2 * pad, width + 2 * pad), bool)
    inside[pad:pad + height, pad:pad + width] = True
    rows, columns = inside.shape[0] // 2, inside.shape[1] // 2
    # (row in block, column in block, ...)
    inside = inside.reshape(rows, 2, columns, 2).transpose(1, 3, 0, 2)
    mean, std = np.float32(mean), np.float32(std)
    scale = np.where(inside[:, :, None], (1 / (255 * std))[:, None, None], np.float32(0))
    shift = np.where(inside[:, :, None], (-mean / std)[:, None, None], np.float32(0))
    return (scale.astype(np.float32).reshape(12, rows, columns),
            shift.astype(np.float32).reshape(12, rows, columns))


def masked(log_probs: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Label probabilities from glyph log-probabilities, glyphs outside the labels masked out."""
    p = np.exp(log_probs) @ matrix
    return p / np.maximum(p.sum(axis=1, keepdims=True), 1e-30)


def normalised(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (float32)."""
    vectors = np.asarray(vectors, np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-6)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-probabilities of unnormalised log-scores, shifted by the row maximum."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def model_dir() -> Path:
    return Path(str(resources.files("models")))


X86 = ("x86_64", "amd64", "i386", "i686", "x86")
VNNI = frozenset({"avx512_vnni", "avx_vnni"})  # /proc/cpuinfo flags: 8-bit dot products


def cpu_info() -> str | None:
    """/proc/cpuinfo's text: the CPU's name and feature flags (None where there is none)."""
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return None


@lru_cache(maxsize=1)
def saturating_cpu() -> bool:
    """Whether onnxruntime's fast 8-bit convolution may saturate on this machine."""
    info = cpu_info()
    return saturates(platform.machine(), None if info is None else set(info.split()))


def saturates(machine: str, flags: set[str] | None) -> bool:
    """x86 without VNNI adds 8-bit products in 16-bit pairs, which can saturate: a crop could
    then read otherwise than on other machines. The exact way costs 1.6× the network's time
    on an AMD without VNNI (2.7× forced on a Xeon with it), and CPUs with VNNI (or not x86)
    need none of it; an x86 CPU whose features are unknown (`flags` None) is taken to need
    it, unless the weights are 7-bit (`exact_way`)."""
    if machine.lower() not in X86:
        return False
    return flags is None or not (VNNI & flags)


def exact_way(meta: dict, saturating: bool) -> bool:
    """Whether a model (its .json) must run onnxruntime's exact 8-bit arithmetic on a CPU
    whose fast way can saturate (`saturating`): full-range weights can overflow its 16-bit
    sums, 7-bit ones (models.quantize) cannot."""
    return saturating and meta.get("weight_bits", 8) > 7


@lru_cache(maxsize=8)
def load_model(path: str | None = None, threads: int | None = None) -> Model:
    """The bundled classifier (or the .onnx at `path`), with its label/normalisation json;
    `threads` overrides the json's intra-op thread count."""
    onnx_path = Path(path) if path else model_dir() / f"{MODEL_NAME}.onnx"
    meta = json.loads(onnx_path.with_suffix(".json").read_text("utf-8"))
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or meta.get("threads", 2)
    options.inter_op_num_threads = 1
    # threads that wait spinning take a run's next operator sooner: bench_read 2.05× → 1.89× a
    # decode; left spinning after a run, they take a core from the next small batch and from
    # the networks read side by side (12 crops 3.8 → 1.9 ms when they stop)
    options.add_session_config_entry("session.intra_op.allow_spinning", "1")
    options.add_session_config_entry("session.force_spinning_stop", "1")
    if exact_way(meta, saturating_cpu()):  # a crop reads the same on every CPU
        options.add_session_config_entry("session.x64quantprecision", "1")
    session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
    glyphs = tuple(meta["glyphs"])
    if glyphs != GLYPHS:
        raise RuntimeError(f"{onnx_path}: glyph list does not match this code's GLYPHS")
    return Model(session=session, glyphs=glyphs, size=int(meta["input_size"]),
                 mean=np.float32(meta["mean"]), std=np.float32(meta["std"]), meta=meta)


def load_second() -> Model:
    """The bundled second opinion: the same network trained another way (other photos, more
    boxes in random colours among them) that re-reads the cells the first one doubts.
    It runs on one thread (its batches are small), most often beside the first network on
    another (second_thread)."""
    return load_model(str(model_dir() / f"{SECOND_NAME}.onnx"), threads=1)


@lru_cache(maxsize=1)
def load_profile_model() -> Model:
    """The classifier as box profiles see tiles: the first network's reading, with both
    networks' embeddings. Two networks trained apart tell an unseen box's letters apart better
    together than either alone (novel rendered boxes: 384 → 348 wrong cells with a profile,
    then 193 with a second network that saw boxes in random colours).
    Each network reads on one thread, the two side by side: a calibrated read of a real photo
    took 10-28 % less time than with the first network on two threads and the second after
    it (the same readings to the bit)."""
    return replace(load_model(threads=1), partner=load_second())


@lru_cache(maxsize=1)
def second_thread() -> ThreadPoolExecutor:
    """The thread the second network reads on while the first reads on the caller's (a
    profile's every cell, anyone's doubtful cells)."""
    return ThreadPoolExecutor(1, thread_name_prefix="second-network")
