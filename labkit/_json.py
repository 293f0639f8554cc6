"""Strict, path-aware reading of JSON documents: the one way labkit walks a parsed file.

Every failure raises FormatError whose message starts with the JSON path
(``ops.decode.impl.launches[0].grid[2]``), shows the value, and says what was expected.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import FormatError


def _show(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


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
        if isinstance(key, int):
            path = f"{self.path}[{key}]"
        else:
            path = f"{self.path}.{key}" if self.path else key
        return Node(value, path, self.source)

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

    def items(self) -> list[tuple[str, "Node"]]:
        if not isinstance(self.value, dict):
            raise self.fail("an object")
        return [(k, self._child(v, k)) for k, v in self.value.items()]

    def list(self, min_len: int = 0, max_len: int | None = None) -> list["Node"]:
        if not isinstance(self.value, list):
            raise self.fail("a list")
        n = len(self.value)
        if n < min_len or (max_len is not None and n > max_len):
            want = f"{min_len}" if max_len == min_len else f"{min_len}..{max_len if max_len is not None else 'any'}"
            raise self.fail(f"a list of {want} entries (got {n})")
        return [self._child(v, i) for i, v in enumerate(self.value)]

    # --- scalars ------------------------------------------------------------------
    def int(self, lo: int | None = None, hi: int | None = None) -> int:
        v = self.value
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.fail("an integer")
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise self.fail(f"an integer in [{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]")
        return v

    def num(self, lo: float | None = None) -> float:
        v = self.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.fail("a number")
        if lo is not None and v < lo:
            raise self.fail(f"a number >= {lo}")
        return float(v)

    def str(self, choices: tuple[str, ...] | None = None) -> str:
        if not isinstance(self.value, str):
            raise self.fail("a string")
        if choices is not None and self.value not in choices:
            raise self.fail(f"one of {', '.join(choices)}")
        return self.value

    def bool(self) -> bool:
        if not isinstance(self.value, bool):
            raise self.fail("true or false")
        return self.value

    def ints(self, n: int | None = None, lo: int | None = None) -> tuple[int, ...]:
        return tuple(x.int(lo) for x in self.list(n or 0, n))


def load_document(path: Path | str) -> Node:
    """Read a JSON file; malformed JSON becomes a one-line FormatError with line and column."""
    p = Path(path)
    try:
        text = p.read_bytes().decode()
    except UnicodeDecodeError as exc:
        raise FormatError("", f"not UTF-8 ({exc.reason} at byte {exc.start})", source=str(p)) from None
    except OSError as exc:
        raise FormatError("", f"cannot read file ({exc.strerror})", source=str(p)) from None
    return parse_text(text, source=str(p))


def parse_text(text: str, source: str | None = None) -> Node:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError("", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                          source=source) from None
    return Node(value, "", source)
