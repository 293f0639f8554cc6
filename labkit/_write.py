"""The one way labkit writes a JSON file: text its strict reader (``_json``) takes back, written whole or not at all."""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ._json import _join, parse_text
from .errors import FormatError


def dumps(value: Any, *, indent: int | None = 2, source: str | None = None,
          default: Any = None, sort_keys: bool = False) -> str:
    """The JSON text of what labkit measured, as its strict reader will read it back: numpy scalars and arrays as
    numbers and lists, paths as strings, integer keys as their digits, ``default(v)`` (if given) for any other
    object; what the reader would refuse (a non-finite number, an object with no JSON form, a lone surrogate, an
    integer of over ``MAX_INT_DIGITS`` digits, deeper nesting than ``MAX_DEPTH``) is refused here, naming its place,
    not by the reader of a recorded run later.

    Raises:
        FormatError: naming ``source``, the JSON path and the value.
    """
    def key_text(k: Any, path: str) -> str:
        k = k.item() if isinstance(k, np.generic) else k
        if isinstance(k, bool) or not isinstance(k, (str, int)):
            raise FormatError(path, f"a key {k!r} of type {type(k).__name__}: expected a string or an integer",
                              source=source)
        return str(k)

    def native(v: Any, path: str) -> Any:
        if isinstance(v, dict):
            out = {}
            for k, c in v.items():
                text = key_text(k, path)
                if text in out:  # 1 and "1" would be one key twice in the file
                    raise FormatError(_join(path, text), "a key given twice (as an integer and as text)",
                                      source=source)
                out[text] = native(c, _join(path, text))
            return out
        if isinstance(v, (list, tuple)):
            return [native(c, _join(path, i)) for i, c in enumerate(v)]
        if isinstance(v, np.ndarray):
            return native(v.tolist(), path)
        if isinstance(v, np.generic):
            v = v.item()
        elif isinstance(v, os.PathLike):
            v = os.fspath(v)
        if isinstance(v, float) and not math.isfinite(v):
            raise FormatError(path, f"= {v}: not a finite number, which a labkit file cannot hold", source=source)
        if v is None or isinstance(v, (str, int, float)):  # bool is an int
            return v
        if default is not None:
            return native(default(v), path)
        raise FormatError(path, f"a value of type {type(v).__name__}: not a JSON value", source=source)

    text = json.dumps(native(value, ""), indent=indent, allow_nan=False, sort_keys=sort_keys)
    parse_text(text, source)  # the reader's own checks, now: a file labkit writes is one it reads
    return text


def write_json(path: Path | str, value: Any, *, indent: int | None = 2, default: Any = None) -> Path:
    """``dumps(value)`` written next to ``path`` and renamed into place, so a reader sees the whole file or none
    (a kill or a full disk mid-write leaves the old file, or no file, never half of one).

    Raises:
        FormatError: a value the strict reader would refuse; nothing is written.
    """
    path = Path(path)
    write_whole(path, (dumps(value, indent=indent, source=str(path), default=default) + "\n").encode())
    return path


def write_text(path: Path | str, text: str) -> Path:
    """``text`` at ``path`` as ``write_whole`` writes bytes."""
    return write_whole(path, text.encode())


def write_whole(path: Path | str, data: bytes) -> Path:
    """``data`` at ``path``, whole or not at all: a temporary file of its own beside it (two threads, or two
    containers of one pid, never share one), synced, then renamed into place with the old file's mode (a new one's:
    the umask's); its folder made if missing. Written in place instead where a rename would do harm or cannot be
    done: a path that is not a regular file (``/dev/null``: a rename would replace the device), a file with other
    hard links (they would keep the old text), a folder that lets the file be written but not replaced (a review:
    a writable file in a read-only or sticky folder had been refused only after the run)."""
    path = Path(path)
    if path.is_symlink():  # written through, as open() would: the link stays
        path = path.resolve()
    if path.exists() and (not path.is_file() or path.stat().st_nlink > 1):
        return _write_in_place(path, data)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except PermissionError:
        return _write_in_place(path, data)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask())
        try:
            os.replace(tmp, path)
        except PermissionError:  # a sticky folder and another owner's file
            return _write_in_place(path, data)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def _write_in_place(path: Path, data: bytes) -> Path:
    with open(path, "wb") as f:
        f.write(data)
    return path


def _umask() -> int:
    mask = os.umask(0o022)  # read by setting it: there is no other way; put back at once
    os.umask(mask)
    return mask
