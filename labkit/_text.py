"""Wording shared by labkit's printed lines, labels and legends."""


def counted(n: int, noun: str) -> str:
    """``1 split``, ``2 splits``, ``0 splits``: a count and its noun, plural unless exactly one."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def length_label(n: int) -> str:
    """A KV length as decode tables print it: ``8k`` for 8192 (whole 1024s), else the number."""
    return f"{n // 1024}k" if n % 1024 == 0 else str(n)


def duration(ns: float) -> str:
    """A time in the unit that puts it under 1000 (ns, us, ms, else s), at 4 significant digits: ``532653152.0`` ns
    is ``532.7 ms``."""
    for unit, scale in (("ns", 1), ("us", 1e3), ("ms", 1e6)):
        if abs(ns) < 1000 * scale:
            return f"{ns / scale:.4g} {unit}"
    return f"{ns / 1e9:.4g} s"


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


def break_line(line: str, fit: int) -> list[str]:
    """``line`` in lines of at most ``fit`` characters, broken where a phrase ends (after a comma, colon or semicolon
    outside brackets), and between other words only as often as a phrase longer than ``fit`` needs; then as few lines
    as that allows, of the most even length. A word longer than ``fit`` stays whole on its own line."""
    words = line.split(" ")
    depth, phrase_end = 0, []
    for w in words:
        depth = max(0, depth + w.count("[") + w.count("(") - w.count("]") - w.count(")"))  # a stray ")" ends none
        phrase_end.append(depth == 0 and w[-1:] in (",", ":", ";"))
    starts = [0]  # offsets of the words: words i..j-1 take starts[j] - starts[i] - 1 characters
    for w in words:
        starts.append(starts[-1] + len(w) + 1)
    fit = max(fit, max(map(len, words)))
    layer = {0: (0, 0, ())}  # first word of the next line -> (breaks inside a phrase, longest line, line ends)
    done = []  # (breaks inside a phrase, lines, longest line, line ends) of each line count that reaches the end
    while layer:  # one more line per round
        nxt: dict = {}
        for i, (inside, longest, ends) in layer.items():
            for j in range(i + 1, len(words) + 1):
                width = starts[j] - starts[i] - 1
                if width > fit:
                    break
                best = (inside + (j < len(words) and not phrase_end[j - 1]), max(longest, width), ends + (j,))
                if j not in nxt or best[:2] < nxt[j][:2]:
                    nxt[j] = best
        if len(words) in nxt:
            inside, longest, ends = nxt.pop(len(words))
            done.append((inside, len(ends), longest, ends))
        layer = nxt
    ends = min(done)[3]
    return [" ".join(words[a:b]) for a, b in zip((0, *ends[:-1]), ends)]


def cut_at_word(text: str, limit: int) -> str:
    """``text`` whole if it fits ``limit`` characters, else cut to fit with " ..." after it, at a space where one
    falls in the kept second half (a word is not split where that keeps at least half)."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 4]
    return (cut.rsplit(" ", 1)[0] if " " in cut[limit // 2:] else cut) + " ..."
