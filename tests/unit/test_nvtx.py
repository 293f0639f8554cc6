"""labkit's NVTX names are paths: one nested push per part, so ncu's ``labkit@a/`` and ``labkit@a/b`` filters
select them and a report's push/pop stack reads back as the same path."""

import pytest

from labkit.timing import nvtx as nvtx_mod
from labkit.timing import nvtx_range


class FakeDomain:
    def __init__(self):
        self.stack, self.seen = [], []

    def get_event_attributes(self, message, color=None):
        return message

    def push_range(self, attrs):
        self.stack.append(attrs)
        self.seen.append("/".join(self.stack))

    def pop_range(self):
        self.stack.pop()


def test_a_slashed_name_is_pushed_as_nested_ranges_and_popped_in_full(monkeypatch):
    dom = FakeDomain()
    monkeypatch.setattr(nvtx_mod, "_DOMAIN", dom)
    r = nvtx_range("sched/1x8448x4x128")
    with r:
        assert dom.stack == ["sched", "1x8448x4x128"]
        with nvtx_range("inner"):
            assert "/".join(dom.stack) == "sched/1x8448x4x128/inner"
    assert dom.stack == []
    with r:  # the same object again: the parts are resolved once
        pass
    assert dom.stack == [] and dom.seen.count("sched/1x8448x4x128") == 2


class CountingDomain(FakeDomain):
    def __init__(self):
        super().__init__()
        self.resolved = 0

    def get_event_attributes(self, message, color=None):
        self.resolved += 1
        return message


def test_the_labkit_domain_is_resolved_once_and_each_ranges_parts_once(monkeypatch):
    """Found by mutation testing: nothing checked that the domain comes from the nvtx package under the name ncu
    filters on (``labkit``), once per process, nor that a range reused in a timing loop resolves its parts once."""
    from types import SimpleNamespace

    dom, asked = CountingDomain(), []
    monkeypatch.setattr(nvtx_mod, "_DOMAIN", None)
    monkeypatch.setattr(nvtx_mod._deps, "optional", lambda name: SimpleNamespace(
        get_domain=lambda d: asked.append((name, d)) or dom))
    r = nvtx_range("bench/call")
    for _ in range(3):
        with r:
            assert dom.stack == ["bench", "call"]
    assert asked == [("nvtx", "labkit")] and dom.resolved == 2 and dom.stack == []


def test_without_the_nvtx_package_a_range_does_nothing_and_keeps_results_and_errors(monkeypatch):
    """Found by mutation testing: without ``nvtx`` installed a range must be a no-op that still returns the wrapped
    call's value, gives ``with ... as r`` the range, and lets an exception through (the no-nvtx path was never run)."""
    monkeypatch.setattr(nvtx_mod, "_DOMAIN", None)
    monkeypatch.setattr(nvtx_mod._deps, "optional", lambda name: None)
    r = nvtx_range("sage2/quant_v")
    with r as entered:
        assert entered is r
    assert nvtx_mod._DOMAIN is False  # looked up once: not asked again on every range

    @nvtx_range("bench")
    def f(x):
        return x + 1

    assert f(1) == 2
    with pytest.raises(ValueError, match="kept"):
        with nvtx_range("a/b"):
            raise ValueError("kept")
