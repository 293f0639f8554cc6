"""Wording shared by labkit's printed lines, labels and legends."""


def counted(n: int, noun: str) -> str:
    """``1 split``, ``2 splits``, ``0 splits``: a count and its noun, plural unless exactly one."""
    return f"{n} {noun}" + ("" if n == 1 else "s")
