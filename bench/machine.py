"""The machine a benchmark runs on, printed as its first line so that a figure keeps it."""

from __future__ import annotations

import os
import platform

import cv2
import numpy as np
import onnxruntime as ort

from vision.classifier import VNNI, cpu_info, exact_way, load_model, saturates

VECTOR_UNITS = (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("asimd", "NEON"))


def describe(info: str | None = None) -> str:
    """One line: the CPU (from /proc/cpuinfo text `info`), its cores, vector unit and VNNI,
    the versions that set the speed, and which way the networks' 8-bit arithmetic runs."""
    info = (cpu_info() or "") if info is None else info
    names = [line.split(":", 1)[1].strip() for line in info.splitlines()
             if line.startswith("model name") and ":" in line]
    flags = set(info.split()) or None
    unit = next((label for flag, label in VECTOR_UNITS if flags and flag in flags), "unknown")
    vnni = "VNNI" if flags and VNNI & flags else "no VNNI"
    exact = exact_way(load_model().meta, saturates(platform.machine(), flags))
    return (f"machine: {names[0] if names else platform.machine()}, {os.cpu_count()} cores, "
            f"{unit}, {vnni}; onnxruntime {ort.__version__}, OpenCV {cv2.__version__}, "
            f"numpy {np.__version__}; networks run the {'exact' if exact else 'fast'} "
            f"8-bit way")
