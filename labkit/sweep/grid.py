"""Sweep grids: parameter name -> values, expanded to points with stable ids."""

import hashlib
import itertools
import json
import re

from ..errors import ArgumentError


def parse_axis(text: str) -> tuple[str, list]:
    """``ms=10,20,30`` -> ("ms", [10, 20, 30]); integers and floats parse as numbers (``8k``: 8192, whole 1024s as
    decode tables print lengths), the rest stay strings.
    Values in brackets, braces or double quotes are JSON: ``shape=[1,1024,8,128],[1,2048,8,128]`` -> two shapes,
    ``schedule={"cta_q":128}`` -> one object, ``tag="a,b"`` -> one string."""
    import json

    name, sep, values = text.partition("=")
    if not sep or not name.isidentifier() or not values:
        raise ArgumentError(f"grid axis {text!r}: expected NAME=V1,V2,... (e.g. ms=10,20,30, or shape=[1,1024,8,128])")
    if "[" in values or "{" in values or '"' in values:  # tag="a,b" is one value (a review: it was two)
        try:
            out = json.loads(f"[{values}]")
        except ValueError as exc:
            raise ArgumentError(f"grid axis {text!r}: list, object and quoted values are JSON, each of them, e.g. "
                                f'shape=[1,1024,8,128],[1,2048,8,128], schedule={{"cta_q":128}} or tag="a,b","c" '
                                f"({exc})") from None
        return name, _once_and_finite(text, out)
    out = []
    for v in values.split(","):
        v = v.strip()
        if not v:
            raise ArgumentError(f"grid axis {text!r}: an empty value")
        if "_" in v and re.fullmatch(r"[-+]?[\d_.eE+-]+", v):  # Python's 1_0 is 10; the rest of the CLI refuses it
            raise ArgumentError(f"grid axis {text!r}: {v!r}: write the number without '_'")
        if re.fullmatch(r"[1-9]\d*k", v):  # kv_len=1k,8k, as --point and decode plans take lengths
            out.append(1024 * int(v[:-1]))
            continue
        for convert in (int, float):
            try:
                out.append(convert(v))
                break
            except ValueError:
                continue
        else:
            out.append(v)
    return name, _once_and_finite(text, out)


def _once_and_finite(text: str, values: list) -> list:
    """An axis's values, each once and finite: a repeated value ran its point twice, and a nan or inf was written to
    sweep.json, which its strict reader then refused, leaving the sweep unreadable."""
    import json
    import math

    bad = next((v for v in values if isinstance(v, float) and not math.isfinite(v)), None)
    if bad is not None:
        raise ArgumentError(f"grid axis {text!r}: {bad}: expected finite numbers")
    seen = []
    for v in values:  # numpy values as the numbers or lists they hold, as the point files will; 1.0 is 1 (a review)
        same = int(v) if isinstance(v, float) and v.is_integer() else v
        key = json.dumps(same, sort_keys=True, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))
        if key in seen:
            raise ArgumentError(f"grid axis {text!r}: {v!r} given twice: each point runs once")
        seen.append(key)
    return values


def expand(grid: dict[str, list]) -> list[dict]:
    """Every combination, axes in the given order (the first varies slowest)."""
    if not grid:
        raise ArgumentError("a sweep needs at least one grid axis")
    from .._write import dumps
    from ..errors import FormatError

    names, axes = list(grid), {}
    for n in names:  # a grid given in Python (a notebook's Session.sweep), as the command line's
        if not len(grid[n]):  # no point at all, and a sweep.json its reader refuses
            raise ArgumentError(f"grid axis {n!r}: no values")
        _once_and_finite(n, list(grid[n]))
        try:  # what sweep.json cannot hold (a lone surrogate, an integer of 41 digits), refused before it is written
            text = dumps(list(grid[n]), indent=None)
        except FormatError as exc:
            raise ArgumentError(f"grid axis {n!r}: {str(exc).removeprefix('error: ')}") from None
        axes[n] = json.loads(text)  # as its point files hold it: a tuple is a list, a numpy int an int
    return [dict(zip(names, combo)) for combo in itertools.product(*(axes[n] for n in names))]


def same_grid(a: dict, b: dict) -> bool:
    """Whether two grids sweep the same points: their JSON, keys sorted (5 and 5.0, or 1 and True, are points with
    other ids; a tuple and a list of the same values are one axis)."""
    from .._write import dumps

    return dumps(a, indent=None, sort_keys=True) == dumps(b, indent=None, sort_keys=True)


def grid_within(part: dict, whole: dict) -> bool:
    """Whether every point of ``part`` is a point of ``whole``: the same axes, each of part's values one of whole's
    (compared as ``same_grid`` compares, by their JSON)."""
    from .._write import dumps

    def values(axis: list) -> list[str]:
        return [dumps(v, indent=None, sort_keys=True) for v in axis]

    return (isinstance(whole, dict) and set(part) == set(whole)
            and all(isinstance(whole[n], list) and set(values(part[n])) <= set(values(whole[n])) for n in part))


def point_label(params: dict, grid: dict[str, list]) -> str:
    """The point as its progress line names it: the axes that take more than one value (``batch=8 kv_len=8192``);
    the rest is the same at every point and in the point's file. A one-point grid (or ``{}``) names every axis."""
    shown = [n for n in grid if len(grid[n]) > 1] or list(params)
    return " ".join(f"{n}={json.dumps(params[n], separators=(', ', ': '))}" if not isinstance(params[n], str)
                    else f"{n}={params[n]}" for n in shown)


def point_id(params: dict) -> str:
    """A stable id from the parameters (their JSON, keys sorted): the same point keeps its file on a re-run."""
    from .._write import dumps

    return hashlib.sha256(dumps(params, indent=None, sort_keys=True).encode()).hexdigest()[:16]
