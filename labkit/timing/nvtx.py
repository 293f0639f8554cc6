"""NVTX ranges in the one ``labkit`` domain that ncu filters on (``--nvtx-include labkit@...``).

``nvtx_range`` is a single object usable as decorator and context manager; without the
``nvtx`` package it does nothing (NVTX calls are no-ops without a tool attached anyway).
"""

import functools

from .. import _deps

DOMAIN = "labkit"


class nvtx_range:  # noqa: N801 - reads like the context manager it is
    """Push/pop range ``name`` in the ``labkit`` domain.

    Example:
        with nvtx_range("sage2/quant_v"): ...
        @nvtx_range("bench")
        def f(): ...
    """

    def __init__(self, name: str, color: str | None = None):
        self.name = name
        self.color = color

    def __enter__(self):
        nv = _deps.optional("nvtx")
        if nv is not None:
            nv.push_range(self.name, color=self.color, domain=DOMAIN)
        return self

    def __exit__(self, *exc):
        nv = _deps.optional("nvtx")
        if nv is not None:
            nv.pop_range(domain=DOMAIN)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapped
