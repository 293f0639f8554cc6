"""labkit's NVTX names are paths: one nested push per part, so ncu's ``labkit@a/`` and ``labkit@a/b`` filters
select them and a report's push/pop stack reads back as the same path."""

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
