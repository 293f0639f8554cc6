"""NVTX ranges in the one ``labkit`` domain that ncu filters on (``--nvtx-include labkit@...``).

``nvtx_range`` is a single object usable as decorator and context manager; without the
``nvtx`` package it does nothing (NVTX calls are no-ops without a tool attached anyway).
A name with slashes is a path: ``"sched/1x8448x4x128"`` pushes ``sched`` then ``1x8448x4x128``, so
ncu's filter syntax (``labkit@sched/`` = range ``sched`` open; ``labkit@a/b`` = ``b`` directly inside
``a``) selects it, and the report's push/pop stack reads back as the same path. A single range named
``sched/...`` matches no ncu filter: ncu splits expressions on ``/`` (measured: "No kernels were profiled").
"""

import functools

from .. import _deps

DOMAIN = "labkit"


_DOMAIN = None  # the nvtx Domain object, resolved once (False: nvtx not installed)


def _domain():
    global _DOMAIN
    if _DOMAIN is None:
        nv = _deps.optional("nvtx")
        _DOMAIN = nv.get_domain(DOMAIN) if nv is not None else False
    return _DOMAIN


class nvtx_range:  # noqa: N801 - reads like the context manager it is
    """Push/pop range ``name`` in the ``labkit`` domain (one nested range per ``/``-separated part).

    The domain and the event attributes are resolved once per object, so a range created
    outside a timing loop costs one push and one pop per use (the module-level
    ``nvtx.push_range(name, domain=...)`` looks both up on every call).

    Example:
        with nvtx_range("sage2/quant_v"): ...
        @nvtx_range("bench")
        def f(): ...
    """

    def __init__(self, name: str, color: str | None = None):
        self.name = name
        self.color = color
        self._attrs = None

    def __enter__(self):
        dom = _domain()
        if dom:
            if self._attrs is None:
                self._attrs = [dom.get_event_attributes(message=part, color=self.color)
                               for part in self.name.split("/") if part]
            for attrs in self._attrs:
                dom.push_range(attrs)
        return self

    def __exit__(self, *exc):
        dom = _domain()
        if dom:
            for _ in self._attrs or ():
                dom.pop_range()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapped
