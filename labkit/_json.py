"""The one way labkit reads a file: bounded, strict, path-aware.

``read_bytes`` opens regular files only (a FIFO, a directory or /dev/zero is refused before a
byte is read, so nothing hangs or fills memory) and caps the size. ``read_json`` /
``load_document`` add strict JSON: UTF-8 only (a leading byte-order mark is skipped), at most
``MAX_DEPTH`` levels of nesting (checked before the parser recurses), no duplicate keys, no NaN /
Infinity or numbers that overflow, no integers longer than ``MAX_INT_DIGITS`` digits, no lone
surrogates. ``Node`` then walks the parsed value; every failure is a FormatError whose one-line
message names the file, the JSON path (``ops.decode.impl.launches[0].grid[2]``), the value and
the rule.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

import numpy as np

from .errors import FormatError

MAX_JSON_BYTES = 16 << 20  # labkit's largest document (a recorded run) is ~100 KB
MAX_DEPTH = 64  # the deepest labkit format nests 9 levels
MAX_INT_DIGITS = 40  # an i64 has 19 digits; Python's int() itself refuses > 4300
I32 = (-(2**31), 2**31 - 1)
U32 = (0, 2**32 - 1)
I64 = (-(2**63), 2**63 - 1)

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def show_path(path: Path | str) -> str:
    """A file name safe to print on one line (control characters and undecodable bytes escaped)."""
    text = str(path)
    return text if text.isprintable() else ascii(text)[1:-1]


def _json_inside(path) -> str:
    """A directory's JSON files, two levels down, as a hint (a notebook run's directory for its data/*.json)."""
    top = Path(path)
    if not top.is_dir():
        return ""
    found = sorted(str(p.relative_to(top)) for pattern in ("*.json", "*/*.json") for p in top.glob(pattern)
                   if p.name not in ("run.json", "session.json"))
    return f" (the JSON files in it: {', '.join(found[:4])}{', ...' if len(found) > 4 else ''})" if found else ""


def read_bytes(path: Path | str, *, what: str = "file", max_bytes: int = MAX_JSON_BYTES) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``.

    Raises:
        FormatError: cannot open it, not a regular file (FIFO, directory, device), or too large.
    """
    if not isinstance(path, (str, os.PathLike)):  # a parsed dict or a number had reached open() (an API walk)
        from .errors import ArgumentError

        raise ArgumentError(f"the {what}: expected a file's path (str or Path), got {type(path).__name__}")
    name = show_path(path)
    if str(path) == "":
        raise FormatError("", f"an empty file name was given for the {what}", source="''")
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise FormatError("", f"cannot read the {what} ({exc.strerror})", source=name) from None
    except ValueError as exc:  # embedded NUL, unencodable name
        raise FormatError("", f"cannot read the {what} ({exc})", source=name) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = next((k for test, k in _KINDS if test(st.st_mode)), "not a regular file")
            raise FormatError("", f"is {kind}; expected the {what} as a regular file{_json_inside(path)}",
                              source=name)
        if st.st_size > max_bytes:
            raise FormatError("", f"{st.st_size} bytes: expected a {what} of at most {max_bytes} bytes", source=name)
        chunks, total = [], 0
        while total <= max_bytes:  # re-checked while reading: the file may grow after fstat
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise FormatError("", f"more than {max_bytes} bytes: expected a smaller {what}", source=name)
        return b"".join(chunks)
    except OSError as exc:
        raise FormatError("", f"cannot read the {what} ({exc.strerror})", source=name) from None
    finally:
        os.close(fd)


def _show(value: Any) -> str:
    try:
        text = json.dumps(value) if not isinstance(value, str) else repr(value)
    except (ValueError, TypeError, RecursionError):
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


def _range(lo, hi) -> str:
    """[lo, hi] in words, with an open end left unsaid ("at most 5", not "in [-inf, 5]")."""
    if lo is not None and hi is not None:
        return f"in [{lo}, {hi}]"
    return f"at least {lo}" if lo is not None else f"at most {hi}"


class Node:
    """A value inside a document, with its path."""

    def __init__(self, value: Any, path: str = "", source: str | None = None):
        self.value = value
        self.path = path
        self.source = source

    def fail(self, expected: str) -> FormatError:
        return FormatError(self.path, f"= {_show(self.value)}: expected {expected}", source=self.source)

    def error(self, message: str) -> FormatError:
        return FormatError(self.path, message, source=self.source)

    def _child(self, value: Any, key: str | int) -> "Node":
        return Node(value, _join(self.path, key), self.source)

    # --- containers ---------------------------------------------------------------
    def obj(self, required: tuple[str, ...] | list[str] = (), optional: tuple[str, ...] | list[str] = (),
            *, any_keys: bool = False) -> "Node":
        """Require a JSON object with exactly ``required`` keys plus any of ``optional``."""
        if not isinstance(self.value, dict):
            raise self.fail("an object")
        missing = [k for k in required if k not in self.value]
        if missing:
            raise self.error(f"missing key {missing[0]!r} (required: {', '.join(required)})")
        if not any_keys:
            allowed = set(required) | set(optional)
            extra = [k for k in self.value if k not in allowed]
            if extra:
                raise self._child(self.value[extra[0]], extra[0]).error(
                    f"unknown key; expected one of: {', '.join(sorted(allowed))}")
        return self

    def __getitem__(self, key: str) -> "Node":
        return self._child(self.value[key], key)

    def get(self, key: str) -> "Node | None":
        return self[key] if isinstance(self.value, dict) and key in self.value else None

    def items(self, min_len: int = 0) -> list[tuple[str, "Node"]]:
        if not isinstance(self.value, dict):
            raise self.fail("an object")
        if len(self.value) < min_len:
            raise self.fail(f"an object with at least {min_len} entr{'y' if min_len == 1 else 'ies'}")
        return [(k, self._child(v, k)) for k, v in self.value.items()]

    def list(self, min_len: int = 0, max_len: int | None = None) -> list["Node"]:
        if not isinstance(self.value, list):
            raise self.fail("a list")
        n = len(self.value)
        if n < min_len or (max_len is not None and n > max_len):
            want = (f"{min_len}" if max_len == min_len else f"at least {min_len}" if max_len is None
                    else f"{min_len}..{max_len}")
            raise self.fail(f"a list of {want} entr{'y' if want.endswith(' 1') or want == '1' else 'ies'} (got {n})")
        return [self._child(v, i) for i, v in enumerate(self.value)]

    # --- scalars ------------------------------------------------------------------
    def int(self, lo: int | None = None, hi: int | None = None) -> int:
        """An integer (``4.0`` is not one) in [lo, hi]."""
        v = self.value
        if type(v) is not int:
            raise self.fail("an integer")
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise self.fail("an integer " + _range(lo, hi))
        return v

    def version(self, *known: int) -> int:
        """A format's version: one of ``known``, said as such ("expected 1 (the version labkit reads)", not "an
        integer in [1, 1]")."""
        if type(self.value) is not int or self.value not in known:
            raise self.fail(f"{' or '.join(map(str, known))} (the version{'s' if len(known) > 1 else ''} labkit reads)")
        return self.value

    def num(self, lo: float | None = None, hi: float | None = None) -> float:
        """A finite number in [lo, hi] (integers accepted), as a float."""
        v = self.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.fail("a number")
        f = float(v) if isinstance(v, float) or abs(v) < 10**300 else math.inf
        if not math.isfinite(f):
            raise self.fail("a finite number")
        if (lo is not None and f < lo) or (hi is not None and f > hi):
            raise self.fail("a number " + _range(lo, hi))
        return f

    def positive(self, hi: float | None = None) -> float:
        """A finite number above 0 (and at most ``hi``), as a float: a time or a rate that divides."""
        f = self.num()
        if f <= 0 or (hi is not None and f > hi):
            raise self.fail("a number above 0" + (f" and at most {hi}" if hi is not None else ""))
        return f

    def str(self, choices: tuple[str, ...] | None = None, *, max_len: int = 4096) -> str:
        if not isinstance(self.value, str):
            raise self.fail("a string")
        if len(self.value) > max_len:
            raise self.fail(f"a string of at most {max_len} characters")
        if choices is not None and self.value not in choices:
            raise self.fail(f"one of {', '.join(choices)}")
        return self.value

    def bool(self) -> bool:
        if not isinstance(self.value, bool):
            raise self.fail("true or false")
        return self.value

    def ints(self, n: int | None = None, lo: int | None = None, hi: int | None = None) -> tuple[int, ...]:
        return tuple(x.int(lo, hi) for x in self.list(n or 0, n))


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


# ---- strict JSON text -> value ------------------------------------------------------------
class _Dup(dict):
    """An object that repeated a key (flagged, then located by ``_find_bad``)."""

    dup: str = ""


class _Big:
    def __init__(self, text: str):
        self.text = text


_STRING = re.compile(r'"(?:[^"\\]|\\.)*+"')  # possessive: no backtracking on unterminated strings
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _depth(text: str) -> int:
    """Deepest nesting of [ and { outside strings (before json.loads recurses into it)."""
    a = np.frombuffer(_STRING.sub("", text).encode("utf-8", "ignore"), np.uint8)
    if not a.size:
        return 0
    step = np.isin(a, (0x5B, 0x7B)).astype(np.int32) - np.isin(a, (0x5D, 0x7D)).astype(np.int32)
    return int(np.cumsum(step).max())


def _decode(data: bytes, source: str | None) -> str:
    zeros = [b == 0 for b in data[:4]]  # '{' as UTF-16/32 without a BOM: NULs beside ASCII
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or (len(zeros) == 4 and zeros in ([False, True, False, True],
                                                                                [True, False, True, False],
                                                                                [False, True, True, True],
                                                                                [True, True, True, False])):
        raise FormatError("", "UTF-16 or UTF-32 text: expected UTF-8 (save the file as UTF-8)", source=source)
    bom = 3 if data[:3] == b"\xef\xbb\xbf" else 0  # UTF-8 still, as Windows editors save it: json said "Unexpected BOM"
    try:
        return data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = bom + exc.start
        raise FormatError("", f"byte 0x{data[at]:02x} at offset {at} is not UTF-8: expected UTF-8 "
                              "text (a binary file?)", source=source) from None


def _find_bad(value: Any, allow_nonfinite: bool) -> tuple[str, str] | None:
    """(JSON path, problem) of the first value the strict reader refuses, in document order."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        v, path = stack.pop()
        if isinstance(v, dict):
            if isinstance(v, _Dup):
                return _join(path, v.dup), f"duplicate key {v.dup!r}: each key may appear once"
            for k in v:
                if _lone_surrogate(k):
                    return path, f"key {ascii(k)} holds a lone surrogate: expected valid Unicode"
            stack.extend((c, _join(path, k)) for k, c in reversed(v.items()))
        elif isinstance(v, list):
            stack.extend((c, _join(path, i)) for i, c in reversed(list(enumerate(v))))
        elif isinstance(v, _Big):
            return path, f"an integer of {len(v.text.lstrip('-'))} digits: expected at most {MAX_INT_DIGITS}"
        elif isinstance(v, float) and not allow_nonfinite and not math.isfinite(v):
            return path, f"= {v}: expected a finite number (NaN, Infinity and overflowing numbers are refused)"
        elif isinstance(v, str) and _lone_surrogate(v):
            return path, f"= {ascii(v)[:60]}: a lone surrogate; expected valid Unicode"
    return None


def _lone_surrogate(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def parse_text(text: str | bytes, source: str | None = None, *, allow_nonfinite: bool = False) -> Node:
    """Strict JSON (see the module docstring) as a Node; every failure a one-line FormatError."""
    if isinstance(text, bytes):
        text = _decode(text, source)
    depth = _depth(text)
    if depth > MAX_DEPTH:
        raise FormatError("", f"nested {depth} levels deep: expected at most {MAX_DEPTH}", source=source)
    flagged = []

    def pairs(items):
        d = dict(items)
        if len(d) != len(items):
            seen = set()
            d = _Dup(items)
            d.dup = next(k for k, _ in items if k in seen or seen.add(k))
            flagged.append(True)
        return d

    def parse_int(s):
        if len(s.lstrip("-")) > MAX_INT_DIGITS:
            flagged.append(True)
            return _Big(s)
        return int(s)

    def parse_float(s):
        f = float(s)
        if not math.isfinite(f):
            flagged.append(True)
        return f

    def parse_constant(s):
        flagged.append(True)
        return float(s)

    try:
        value = json.loads(text, object_pairs_hook=pairs, parse_int=parse_int, parse_float=parse_float,
                           parse_constant=parse_constant)
    except json.JSONDecodeError as exc:
        where = "" if exc.msg.endswith(" at") else " at"  # "Unterminated string starting at" names its place itself
        raise FormatError("", f"not valid JSON: {exc.msg}{where} line {exc.lineno} column {exc.colno}",
                          source=source) from None
    except RecursionError:  # the depth scan should have caught it; never let it escape
        raise FormatError("", f"nested too deeply: expected at most {MAX_DEPTH} levels", source=source) from None
    if flagged or _SURROGATE.search(text):
        bad = _find_bad(value, allow_nonfinite)
        if bad is not None:
            raise FormatError(bad[0], bad[1], source=source)
    return Node(value, "", source)


def load_document(path: Path | str, *, what: str = "JSON document", allow_nonfinite: bool = False,
                  max_bytes: int = MAX_JSON_BYTES) -> Node:
    """Read a JSON file through ``read_bytes`` and ``parse_text``."""
    return parse_text(read_bytes(path, what=what, max_bytes=max_bytes), show_path(path),
                      allow_nonfinite=allow_nonfinite)


def read_json(path: Path | str, *, what: str = "JSON document", allow_nonfinite: bool = False) -> Any:
    """The parsed value of a JSON file, read as strictly as every labkit file.

    Args:
        path: the file (regular files only; FIFOs and devices are refused, never waited on).
        what: what the file is, for messages (``"recorded run"``).
        allow_nonfinite: accept NaN / Infinity (labkit's own run records may hold them).

    Raises:
        FormatError: one line naming the file, the JSON path and the rule broken.
    """
    return load_document(path, what=what, allow_nonfinite=allow_nonfinite).value


# labkit's documents by the keys that mark each: what a reader says it was given when it is not its own kind
_KINDS_BY_KEYS = ((("schema_version",), "a launch manifest (labkit manifest check)"),
                  (("decode_report_version",), "a decode report (labkit report show)"),
                  (("metadata", "phase_timings"), "a Sage2 report (labkit report show)"),
                  (("sweep_version",), "a sweep's sweep.json (labkit sweep status)"),
                  (("notebook", "ok", "provenance"), "a notebook run's run.json"),
                  (("version", "attributions"), "a notebook 05 ncu summary (labkit ncu summary)"),
                  (("timeline_version",), "a CTA timeline (labkit sched timeline)"),
                  (("sage2", "decode", "repeat"), "an ncu case plan (labkit ncu cases)"))


def refuse_other_kind(n: "Node", key: str, what: str) -> None:
    """Refuse another of labkit's documents in one line that says which it is, where ``key`` (the reader's own
    marking key) is missing: ``missing key 'schema_version': this is a Sage2 report (...), not a launch manifest``."""
    if isinstance(n.value, dict) and key not in n.value and (kind := document_kind(n.value)):
        raise n.error(f"missing key '{key}': this is {kind}, not {what}")


def document_kind(value: Any) -> str | None:
    """Which of labkit's documents ``value`` is, in words, or None."""
    if isinstance(value, dict):
        for keys, kind in _KINDS_BY_KEYS:
            if all(k in value for k in keys):
                return kind
    return None
