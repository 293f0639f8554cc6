"""Validated values shared by the CLI, the notebooks and the library: one type per concept.

Each constructor refuses what the kernels or the filesystem cannot take, with an
ArgumentError (a LabkitError and a ValueError) naming the value and the rule; the CLI turns it
into one line and exit 2, and the library raises the same error for the same value, before any
GPU work. ``None`` means "the default" everywhere, tested with ``is None``.
"""

from __future__ import annotations

import math
import numbers
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import ArgumentError


def first_repeat(items):
    """The first item given twice, or None: a swept list, a list of names or of options takes each once."""
    items = list(items)
    return next((v for i, v in enumerate(items) if v in items[:i]), None)


HEAD_DIMS = tuple(range(64, 129, 8))  # 64 runs as 64; 72..128 are zero-padded to the 128 kernel
MAX_GRID_YZ = 65535  # heads are grid.y, batch is grid.z of every Sage2 kernel
MAX_SEQ_LEN = 1 << 30  # padded lengths travel as int32
MAX_ELEMENTS = 1 << 33  # per tensor (16 GiB of bf16): a larger shape is a typo
_INT = re.compile(r"[+-]?[0-9]{1,19}")  # ASCII only: int() also takes '1_000' and full-width digits


def parse_int(text: str, *, what: str, lo: int | None = None, hi: int | None = None) -> int:
    """An integer written in ASCII digits, in [lo, hi]."""
    if not isinstance(text, str) or not _INT.fullmatch(text.strip()):
        if isinstance(text, str) and re.fullmatch(r"[+-]?[0-9]{20,}", text.strip()):  # digits, too many for an i64
            size = "too small" if text.strip().startswith("-") else "too large"  # "out of range" read as below lo
            raise ArgumentError(f"{what} {text!r}: {len(text.strip().lstrip('+-'))} digits, {size} "
                                f"(expected {_range(lo, hi) if lo is not None or hi is not None else 'an i64'})")
        raise ArgumentError(f"{what} {text!r}: expected an integer")
    return check_int(int(text), what=what, lo=lo, hi=hi)


def parse_kilo_int(text: str, *, what: str, lo: int = 1, hi: int) -> int:
    """An integer in [lo, hi], or with a trailing k a count of 1024s, as decode tables print lengths (``8k`` = 8192)."""
    text = text.strip()
    if text.lower().endswith("k"):
        count = text[:-1].strip()
        if not re.fullmatch(r"[+-]?[0-9]+", count):  # "8kk", "1.5k": name the item as written, not "'8k': an integer"
            raise ArgumentError(f"{what} {text!r}: expected an integer, or whole 1024s such as 8k")
        return 1024 * parse_int(count, what=f"{what} in k (1024)", lo=-(-lo // 1024), hi=hi // 1024)
    if not re.fullmatch(r"[+-]?[0-9]+", text):  # '8q' had been "expected an integer", where 8k is one too
        raise ArgumentError(f"{what} {text!r}: expected an integer, or whole 1024s such as 8k")
    return parse_int(text, what=what, lo=lo, hi=hi)


def parse_int_list(text: str, *, what: str, lo: int = 1, hi: int, kilo: bool = False) -> tuple[int, ...]:
    """Comma-separated integers in [lo, hi], each once (``"1,2,4"``); ``kilo``: each may be written in 1024s
    (``"1k,8k"``, ``parse_kilo_int``)."""
    parse = parse_kilo_int if kilo else parse_int
    items = text.split(",")
    if len(items) > 1 and not all(item.strip() for item in items):  # "1k," or "1,,2": say so, not "'': an integer"
        raise ArgumentError(f"{what} {text!r}: an empty item; expected values separated by single commas")
    values = tuple(parse(item, what=what, lo=lo, hi=hi) for item in items)
    if (twice := first_repeat(values)) is not None:  # one row or column per value
        raise ArgumentError(f"{what} {text!r}: {twice} given twice; expected each value once")
    return values


def tile_tails(n: int, tile: int) -> list[int]:
    """The seed's tail points around a tile boundary: the last multiple of ``tile`` below ``n``, one more row, and
    ``n`` (``n`` a whole number of tiles: the tile below it; ``n`` under one tile: its first row)."""
    base = n - n % tile if n % tile else max(tile, n - tile)
    return sorted({x for x in (base, base + 1, n) if 1 <= x <= n})


def check_int(value: int, *, what: str, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as an int in [lo, hi]; numpy's integers too (a notebook's values often are), never a bool."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentError(f"{what} {value!r}: expected an integer")
    value = int(value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ArgumentError(f"{what} {value}: expected {_range(lo, hi)}")
    return value


def plain_mapping(value, *, what: str) -> dict:
    """``value`` (None: empty) as a dict, numpy scalars among its values as Python's (a notebook's often are); what
    else a value is stays for the caller to judge. Anything but a mapping is an ArgumentError."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ArgumentError(f"{what} {value!r}: expected a mapping {{name: value}}")
    return {k: v.item() if type(v).__module__ == "numpy" and hasattr(v, "item") else v for k, v in value.items()}


def _range(lo: int | None, hi: int | None) -> str:
    return f"{lo}..{hi}" if lo is not None and hi is not None else f">= {lo}" if lo is not None else f"<= {hi}"


def parse_float(text: str, *, what: str) -> float:
    """A finite float (``nan`` and ``inf`` are refused)."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ArgumentError(f"{what} {text!r}: expected a number") from None
    if not math.isfinite(value):  # named as typed: 1e400 is inf only once parsed
        overflow = text.strip().lower().lstrip("+-") not in ("inf", "infinity", "nan")
        raise ArgumentError(f"{what} {text!r}: expected a finite number" + (" (it overflows a double)" if overflow
                                                                          else ""))
    return check_finite(value, what=what)


def check_finite(value: float, *, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ArgumentError(f"{what} {value!r}: expected a finite number")
    return float(value)


def kernel_head_dim(head_dim: int) -> int:
    """The head_dim the Sage2 kernels are built for: 64 stays 64, 72..128 pad to 128."""
    return 64 if head_dim == 64 else 128


@dataclass(frozen=True)
class Shape:
    """[B, N, H, D] of q = k = v (NHD), within what the Sage2 kernels take.

    Iterates as the four integers, so ``b, n, h, d = shape`` works.
    """

    batch: int
    seq_len: int
    heads: int
    head_dim: int

    def __post_init__(self):
        check_int(self.batch, what="batch", lo=1, hi=MAX_GRID_YZ)
        check_int(self.seq_len, what="sequence length N", lo=1, hi=MAX_SEQ_LEN)
        check_int(self.heads, what="heads", lo=1, hi=MAX_GRID_YZ)
        check_int(self.head_dim, what="head_dim", lo=1)
        if self.head_dim not in HEAD_DIMS:
            raise ArgumentError(f"head_dim {self.head_dim}: the Sage2 kernels take 64..128 in steps of 8 "
                                f"({', '.join(map(str, HEAD_DIMS))})")
        if self.batch * self.seq_len * self.heads * self.head_dim > MAX_ELEMENTS:
            raise ArgumentError(f"shape {list(self)}: more than {MAX_ELEMENTS} elements per tensor")

    @classmethod
    def parse(cls, text: str) -> "Shape":
        """``"B,N,H,D"`` (e.g. ``"1,37810,56,128"``)."""
        parts = text.split(",") if isinstance(text, str) else []
        if len(parts) != 4:
            raise ArgumentError(f"shape {text!r}: expected B,N,H,D (four integers)")
        return cls(*(parse_int(p, what=f"shape {text!r}: {name}") for p, name in zip(parts, "BNHD")))

    @classmethod
    def of(cls, value: "Shape | tuple | list | str") -> "Shape":
        """A Shape from a Shape, a 4-sequence or its text."""
        if isinstance(value, Shape):
            return value
        if isinstance(value, str):
            return cls.parse(value)
        try:
            b, n, h, d = value
        except (TypeError, ValueError):
            raise ArgumentError(f"shape {value!r}: expected [B, N, H, D]") from None
        return cls(b, n, h, d)

    def __iter__(self) -> Iterator[int]:
        return iter((self.batch, self.seq_len, self.heads, self.head_dim))

    @property
    def kernel_head_dim(self) -> int:
        return kernel_head_dim(self.head_dim)

    def length(self, value: int | None, what: str) -> int:
        """A query or key length: None means N; otherwise 1..N (the inputs hold N rows)."""
        if value is None:
            return self.seq_len
        return check_int(value, what=what, lo=1, hi=self.seq_len)

    def lengths(self, values, what: str) -> tuple[int, ...] | None:
        """A list of lengths (``"a,b"`` text or integers), each 1..N; None stays None (default)."""
        if values is None:
            return None
        if isinstance(values, str):
            values = [parse_int(v, what=what) for v in values.split(",")]
        out = tuple(self.length(v, what) for v in values)
        if not out:
            raise ArgumentError(f"{what}: expected at least one length")
        if (twice := first_repeat(out)) is not None:  # a report keeps each tail point once: refused before the GPU
            raise ArgumentError(f"{what}: {twice} given twice; expected each length once")
        return out


def _path_argument(text, what: str, noun: str, check) -> Path:
    """``text`` as a Path that ``check(path, shown)`` accepts; an empty name, or the OS refusing to look (a name too
    long, an embedded NUL), is one ArgumentError naming ``what`` too."""
    if text is None or str(text) == "":
        raise ArgumentError(f"{what}: an empty {noun} name")
    p = Path(text)
    shown = ascii(str(text)) if not str(text).isprintable() else repr(str(text))
    if "\0" in str(text):  # pathlib's exists() answers False to it, and the write fails later, a ValueError
        raise ArgumentError(f"{what} {shown}: a {noun} name with a NUL character")
    try:
        check(p, shown)
    except ArgumentError:
        raise
    except (OSError, ValueError, RuntimeError) as exc:  # RuntimeError: pathlib's symlink loop
        # an OSError's str() names the path again ("[Errno 36] File name too long: '/tmp/...'"): its reason only
        raise ArgumentError(f"{what} {shown}: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}"
                            ) from None
    return p


def _nearest_existing_dir(p: Path, what: str, shown: str, *, include_self: bool = False) -> Path:
    """The nearest of ``p``'s parents (or ``p`` itself) that exists; it must be a directory."""
    above = next(a for a in ((p,) if include_self else ()) + tuple(p.parents) if a.exists())
    if not above.is_dir():
        raise ArgumentError(f"{what} {shown}: {str(above)!r} is not a directory")
    return above


def _check_writable(directory: Path, what: str, shown: str) -> None:
    """Create and remove a file in ``directory``: a run that cannot write its result there is refused before it
    starts, not after (permissions alone do not say it: root may write where the file system refuses, as /proc)."""
    import tempfile

    try:
        fd, probe = tempfile.mkstemp(prefix=".labkit-write-check-", dir=directory)
    except OSError as exc:
        raise ArgumentError(f"{what} {shown}: cannot create a file in {str(directory)!r} ({exc.strerror})") from None
    os.close(fd)
    os.unlink(probe)


@dataclass(frozen=True)
class _PathValue:
    """A checked path that prints and opens as the path itself."""

    path: Path

    def __str__(self) -> str:
        return str(self.path)

    def __fspath__(self) -> str:
        return str(self.path)


@dataclass(frozen=True)
class OutputDir(_PathValue):
    """A directory labkit will create (with its parents) or add files to: not an existing file."""

    @classmethod
    def parse(cls, text: str | Path, what: str = "output directory", *, writes: bool = False) -> "OutputDir":
        """``writes``: the command always writes there, so an existing directory must be writable too (otherwise one
        may only be read: a finished sweep resumed to print its counts)."""
        def check(p: Path, shown: str) -> None:
            if p.exists() and not p.is_dir():
                raise ArgumentError(f"{what} {shown}: is a file; expected a directory")
            above = _nearest_existing_dir(p, what, shown, include_self=True)
            if above != p or writes:  # it must be created (or written): the probe says whether it can be
                _check_writable(above, what, shown)

        return cls(_path_argument(text, what, "directory", check))


@dataclass(frozen=True)
class OutputPath(_PathValue):
    """A file labkit will write: a name, not itself a directory; its missing directories are made when it is
    written (as every ``--out`` directory's are), so only the nearest one that exists must be writable."""

    @classmethod
    def parse(cls, text: str | Path, what: str = "output", *, writes: str | None = None) -> "OutputPath":
        """``writes``: the kind of file the command writes there (``labkit.output_kinds``); an existing file of
        another kind is refused, not replaced (reviews: ``sched timeline --trace`` replaced the Sage2 report, then a
        package.json and a notebook; ``report map --out`` a user's PNG). None: any file may be replaced."""
        from .output_kinds import other_kind

        def check(p: Path, shown: str) -> None:
            if p.is_symlink() and not p.exists():  # a dangling link: the write goes where it points
                p = p.resolve()
                if not p.parent.is_dir():  # nothing makes the link's own folder's missing directories for it
                    raise ArgumentError(f"{what} {shown}: a link to {str(p)!r}, whose directory does not exist")
            if p.is_dir():
                raise ArgumentError(f"{what} {shown}: is a directory; expected a file name")
            if p.exists() and not (p.is_file() or p.is_char_device()):  # a FIFO blocks the write; /dev/null is fine
                kind = "a FIFO" if p.is_fifo() else "a socket" if p.is_socket() else "a block device"
                raise ArgumentError(f"{what} {shown}: is {kind}; expected a regular file")
            if p.exists():  # written in place (a file, /dev/null): its own permission is what counts
                if not os.access(p, os.W_OK):
                    raise ArgumentError(f"{what} {shown}: not writable")
                if writes is not None and p.is_file() and (other := other_kind(p, writes)):
                    raise ArgumentError(f"{what} {shown}: exists and is {other}; refusing to overwrite it (delete it, "
                                        "or name another file)")
            else:  # created: probe the directory it goes in, or the nearest one that exists
                _check_writable(_nearest_existing_dir(p, what, shown), what, shown)

        return cls(_path_argument(text, what, "file", check))

    def write_bytes(self, data: bytes) -> Path:
        """``data`` whole or not at all, its missing directories made (``labkit._write.write_whole``)."""
        from ._write import write_whole

        try:
            write_whole(self.path, data)
        except OSError as exc:
            raise ArgumentError(f"cannot write {str(self.path)!r}: {exc.strerror}") from None
        return self.path

    def write_text(self, text: str) -> Path:
        return self.write_bytes(text.encode())


def not_an_input(out, inputs, what: str) -> None:
    """Refuse an output that is one of the command's input files (``--out self.json`` overwrote the manifest it
    packed), before any work."""
    for given in inputs:
        src = Path(given)
        if src.exists() and Path(out).exists() and os.path.samefile(src, out):
            raise ArgumentError(f"{what} {str(out)!r}: is the input file {str(src)!r}; writing it would overwrite "
                                "the input (give another path)")
