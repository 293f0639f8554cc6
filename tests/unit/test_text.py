"""labkit's shared wording."""

from labkit._text import counted


def test_counted_is_plural_unless_exactly_one():
    assert [counted(n, "split") for n in (0, 1, 2)] == ["0 splits", "1 split", "2 splits"]
