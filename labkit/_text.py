"""Wording shared by labkit's printed lines, labels and legends."""


def counted(n: int, noun: str) -> str:
    """``1 split``, ``2 splits``, ``0 splits``: a count and its noun, plural unless exactly one."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def one_line(text: str) -> str:
    """Control characters (a newline in a file name or a message) escaped: an error stays one line."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def cell(value) -> object:
    """A table cell as a person reads it: a missing value (None, NaN) as ``-``, a list or tuple as its items; anything
    else unchanged. pandas' ``na_rep`` leaves None in object columns, which printed as ``None``."""
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    return value


def shown_table(df) -> str:
    """``df`` as printed text, without the index, its cells through ``cell``; a column of whole numbers that a missing
    value made float (a pid, 28217.0) prints them whole."""
    df = df.copy()
    for name in df.columns:
        col = df[name]
        if col.dtype.kind == "f" and col.isna().any() and col.dropna().map(float.is_integer).all():
            df[name] = type(col)([None if v != v else int(v) for v in col], index=col.index, dtype=object)
    return df.map(cell).to_string(index=False)
