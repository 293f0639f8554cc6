"""Notebook parameter types that hold several values: integer lists, a decode head group, a Sage2 shape, a
name-to-integer map."""

from __future__ import annotations

import ast
from typing import Any

from ..errors import ArgumentError, ParameterError
from ..values import first_repeat, parse_kilo_int, tile_tails
from .scalar import Int, Param, _AtMost, _range, _shown


def _literal(text: str):
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


class IntList(_AtMost, Param):
    """A non-empty list of integers in ``lo..hi`` (each at most another parameter's item ``at_most``); on the command
    line ``1,2,3``, ``1k,8k`` (1024s) or ``[1, 2, 3]``."""

    def __init__(self, lo: int | None = None, hi: int | None = None, *, length: int | None = None,
                 max_items: int = 64, at_most: str | None = None, tile: int | None = None, sweep_axis: bool = False,
                 **kw):
        """Args:
            tile: with ``at_most``, a default past the bound follows it as the seed's tail points of that tile
                (``labkit.values.tile_tails``, as many as the default has): ``-p shape 1,1024,8,128`` alone runs.
            sweep_axis: the notebook uses the list only as the values of a ``Session.sweep`` axis, so in recorded mode
                a run that swept more values answers some of them (the notebook reads just those points).
        """
        super().__init__(**kw)
        if tile is not None and (at_most is None or isinstance(tile, bool) or not isinstance(tile, int) or tile < 1):
            raise ValueError(f"IntList(tile={tile!r}): expected an integer >= 1, with at_most")
        self.item = Int(lo, hi)
        self.length, self.max_items, self.at_most, self.tile = length, max_items, at_most, tile
        # a list of free length is a sweep's axis, where a value given twice is refused only by the sweep, mid-run;
        # a fixed-length one is a tuple (batch, kv_len) whose items may be equal
        self.distinct = length is None
        self.sweep_axis = sweep_axis and length is None

    def describe(self) -> str:
        count = f"{self.length}" if self.length else f"1..{self.max_items}"
        kind = "different integers" if self.distinct else "integers"
        return f"a list of {count} {kind}" + _range(self.item.lo, self.item.hi) + self._bound_text()

    def _bound_text(self) -> str:
        follows = (f" (a default past it: the last multiple of {self.tile} below it, one more, and it)"
                   if self.tile else "")
        return super()._bound_text() + follows

    def follow(self, default: Any, bound: int) -> Any:
        if self.tile is None:
            return None
        try:
            return self.check(tile_tails(bound, self.tile)[:len(default)])
        except ParameterError:
            return None

    def answers(self, recorded: Any, wanted: Any) -> bool:
        if not self.sweep_axis or not isinstance(recorded, list):
            return recorded == wanted
        return all(v in recorded for v in wanted)

    def parse(self, text: str) -> list[int]:
        value = _literal(text) if text.strip().startswith("[") else None
        if value is None:
            try:  # 8k: 8192, as the decode commands take lengths; the range is check()'s
                value = [parse_kilo_int(x, what="item", lo=-(1 << 62), hi=1 << 62) for x in text.split(",")]
            except ArgumentError:
                raise self.fail(text) from None
        return self.check(value)

    def check(self, value: Any) -> list[int]:
        if not isinstance(value, (list, tuple)) or not value or len(value) > self.max_items:
            raise self.fail(value)
        if self.length is not None and len(value) != self.length:
            raise self.fail(value)
        try:
            items = [self.item.check(v) for v in value]
        except ParameterError:
            raise self.fail(value) from None
        twice = first_repeat(items) if self.distinct else None
        if twice is not None:
            raise ParameterError(f"= {_shown(value)}: {twice} given twice; expected {self.describe()}")
        return items


class DecodeHeads(IntList):
    """Query heads, KV heads of a decode call: two integers in 1..256 that the decode kernel takes (query heads a
    multiple of KV heads, 1..16 per KV head; ``labkit.workloads.decode.geometry.check_heads``), so a notebook refuses
    a head group before any cell runs."""

    def __init__(self, **kw):
        super().__init__(1, 256, length=2, **kw)

    def describe(self) -> str:
        return "query heads, KV heads: 2 integers in 1..256, 1..16 query heads per KV head"

    def check(self, value: Any) -> list[int]:
        from ..workloads.decode.geometry import check_heads

        heads = super().check(value)
        try:
            check_heads(*heads)
        except ArgumentError as exc:
            raise ParameterError(f"= {heads!r}: {str(exc).removeprefix('decode geometry: ')}") from None
        return heads


class Sage2Shape(Param):
    """B,N,H,D of q = k = v: the library's own ``labkit.values.Shape`` (head_dim 64..128 in steps of 8),
    so a notebook refuses exactly what ``labkit sage2 --shape`` and ``profile()`` refuse."""

    kind = "B,N,H,D, e.g. 1,37810,56,128 (head_dim 64..128 in steps of 8)"

    def parse(self, text: str) -> list[int]:
        from ..values import Shape

        value = _literal(text) if text.strip().startswith("[") else text
        if value is None:  # '[1,2' had been "shape None"
            raise self.fail(text)
        try:
            return list(Shape.of(value))
        except ArgumentError as exc:
            raise ParameterError(f"= {text!r}: {exc}") from None

    def check(self, value: Any) -> list[int]:
        from ..values import Shape

        if not isinstance(value, (list, tuple)):
            raise self.fail(value)
        try:
            return list(Shape.of(value))
        except ArgumentError as exc:
            raise ParameterError(f"= {value!r}: {exc}") from None


class IntDict(Param):
    """Names to integers in ``lo..hi``: ``tokens=2,seqs=4`` or ``{'tokens': 2}``. ``vars_of="manifest"``: the
    manifest another parameter names declares each name, and each value is within its 1..max (checked before any
    cell: a recorded-mode notebook would otherwise only say that no run was recorded with them)."""

    def __init__(self, lo: int | None = None, hi: int | None = None, *, vars_of: str | None = None, **kw):
        super().__init__(**kw)
        self.item = Int(lo, hi)
        self.vars_of = vars_of

    @staticmethod
    def shown(value: Any) -> str:
        """A value as ``-p`` takes it (``tokens=0``), not a dict's repr; anything else as other parameters show it."""
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return ",".join(f"{k}={v!r}" for k, v in value.items()) or "{}"
        return _shown(value)

    def fail(self, value: Any) -> ParameterError:
        return ParameterError(f"= {self.shown(value)}: expected {self.describe()}")

    def describe(self) -> str:
        declared = f", vars the {self.vars_of} declares" if self.vars_of else ""
        return "name=integer pairs (name=1,other=2)" + _range(self.item.lo, self.item.hi) + declared

    def check_beside(self, value: Any, values: dict) -> None:
        if self.vars_of is None:
            return
        from .._env import repo_path
        from ..manifest import load
        from ..manifest.validate import resolve_vars

        issues: list = []
        resolve_vars(load(repo_path(values[self.vars_of])), value, issues)
        errors = [f"{i.path} {i.message}" for i in issues if i.severity == "error"]
        if errors:
            raise ParameterError(f"= {self.shown(value)}: expected vars that {self.vars_of} = {values[self.vars_of]!r} "
                                 f"declares, each in 1..its max; " + "; ".join(errors))

    def same_beside(self, recorded: Any, wanted: Any, values: dict, run_sha: str) -> bool:
        """``vars_of``: the same once the manifest's other vars take their max (a review: ``seqs=2``, its max, was
        refused in recorded mode beside a run recorded without it), where the manifest is a repository file that
        reads as it did at the run's commit (the maxima the run's unnamed vars took are today's)."""
        if recorded == wanted or self.vars_of is None or not isinstance(recorded, dict):
            return recorded == wanted
        from .._env import repo_path
        from ..errors import LabkitError
        from ..manifest import load
        from ..manifest.validate import resolve_vars
        from ..staleness import same_file_since

        if not same_file_since(run_sha, values[self.vars_of]):
            return False
        try:
            m = load(repo_path(values[self.vars_of]))
        except (LabkitError, OSError, KeyError):
            return False
        issues: list = []
        same = resolve_vars(m, recorded, issues) == resolve_vars(m, wanted, issues)
        return same and not any(i.severity == "error" for i in issues)

    def parse(self, text: str) -> dict[str, int]:
        if text.strip().startswith("{"):
            value = _literal(text)
            if not isinstance(value, dict):  # '{tokens: 2}' had been named as "= None"
                raise self.fail(text)
            return self.check(value)
        try:
            pairs = [(k.strip(), int(v, 10)) for k, v in (p.split("=", 1) for p in text.split(",") if p.strip())]
        except ValueError:
            raise self.fail(text) from None
        names = [k for k, _ in pairs]
        twice = sorted({k for k in names if names.count(k) > 1})
        if twice:  # the last one would win unseen, as manifest check --var refuses it
            raise ParameterError(f"= {text!r}: {', '.join(twice)} given twice; expected each name once")
        return self.check(dict(pairs))

    def check(self, value: Any) -> dict[str, int]:
        if not isinstance(value, dict) or not all(isinstance(k, str) and k.isidentifier() for k in value):
            raise self.fail(value)
        try:
            return {k: self.item.check(v) for k, v in value.items()}
        except ParameterError:
            raise self.fail(value) from None
