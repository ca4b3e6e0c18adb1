"""Reading user files with errors that name the file and say what is wrong."""

from __future__ import annotations

from pathlib import Path


def why(exc: Exception) -> str:
    """A short reason for a failed file operation: 'no such file', 'not UTF-8 text', …"""
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "is a folder, not a file"
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return exc.__class__.__name__


def folder_why(exc: OSError) -> str:
    """why() for making or writing a folder: a missing parent is not a missing file."""
    return (exc.strerror or why(exc)).lower()


def read_text(path: str | Path, error: type[Exception]) -> str:
    """The UTF-8 text of a file, or `error` naming the file and the reason."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read: {why(exc)}") from None
