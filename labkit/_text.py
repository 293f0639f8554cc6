"""Wording shared by labkit's printed lines, labels and legends."""

import re

TEXT_WIDTH = 100  # characters of a printed line: JupyterLab's output pane breaks a longer one anywhere, mid-word


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 split``, ``2 splits``, ``0 splits``: a count and its noun, plural unless exactly one (``plural`` where it
    is not the noun and an s: ``1 entry``, ``2 entries``)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def with_article(word: str) -> str:
    """``an i32``, ``an f32``, ``a u64``, ``a bf16``, ``a scratch``: the article as the word is read, a dtype's letters
    by their names (a review: "a i32 field")."""
    import re

    spelled = re.fullmatch(r"[a-z]{1,2}\d+", word.lower()) is not None  # i32, bf16: read letter by letter
    return f"{'an' if word[:1].lower() in ('aefhilmnorsx' if spelled else 'aeiou') else 'a'} {word}"


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


def sig3(x: float) -> str:
    """``x`` at 3 significant digits, its trailing zeros kept (``3.80``, ``15.0``, ``237``): a label beside ``17.6``
    reads ``15.0``, not ``15``."""
    return f"{x:#.3g}".rstrip(".")


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


def break_line(line: str, fit: int, *, fewest_lines: bool = False) -> list[str]:
    """``line`` in lines of at most ``fit`` characters, broken where a phrase ends (after a comma, colon, semicolon or
    full stop outside brackets), and between other words only as often as a phrase longer than ``fit`` needs (between
    brackets only where no other break will do); then as few lines as that allows, of the most even length.
    ``fewest_lines`` (a paragraph, which phrase ends alone would leave ragged): as few lines as fit first, and of those
    the one with the fewest breaks inside a phrase. A word longer than ``fit`` stays whole on its own line."""
    words = line.split(" ")
    depth, cost = 0, []  # cost of a break after each word: 0 where a phrase ends, 2 between brackets, else 1
    for w in words:
        depth = max(0, depth + w.count("[") + w.count("(") - w.count("]") - w.count(")"))  # a stray ")" ends none
        cost.append(2 if depth else 0 if w[-1:] in (",", ":", ";", ".") else 1)
    starts = [0]  # offsets of the words: words i..j-1 take starts[j] - starts[i] - 1 characters
    for w in words:
        starts.append(starts[-1] + len(w) + 1)
    layer = {0: (0, 0, ())}  # first word of the next line -> (cost of the breaks, longest line, line ends)
    done = []  # (cost of the breaks, lines, longest line, line ends) of each line count that reaches the end
    reached = {0}
    while layer:  # one more line per round
        nxt: dict = {}
        for i, (paid, longest, ends) in layer.items():
            for j in range(i + 1, len(words) + 1):
                width = starts[j] - starts[i] - 1
                if width > fit and j > i + 1:  # only a word longer than a line takes more, alone on its line
                    break
                best = (paid + (cost[j - 1] if j < len(words) else 0), max(longest, width), ends + (j,))
                if j not in nxt or best[:2] < nxt[j][:2]:
                    nxt[j] = best
        if fewest_lines:  # a word a line sooner is as good a start for the rest, which the fewest lines pass through
            nxt = {j: v for j, v in nxt.items() if j not in reached}  # so each word once: not cubic in the words
            reached.update(nxt)
        if len(words) in nxt:
            paid, longest, ends = nxt.pop(len(words))
            done.append((paid, len(ends), longest, ends))
            if fewest_lines:
                break
        layer = nxt
    ends = (done[0] if fewest_lines else min(done))[3]  # done is in order of line count
    return [" ".join(words[a:b]) for a, b in zip((0, *ends[:-1]), ends)]


def glue_products(text: str) -> str:
    """A product such as ``8 x 8192`` (or ``1 x 2 x 3``) joined by no-break spaces, which ``break_line`` does not split
    at: a line break inside one read as two numbers."""
    return re.sub(r"(\d) x (?=\d)", "\\1\u00a0x\u00a0", text)


def wrapped(text: str, width: int = TEXT_WIDTH, *, phrase_ends: bool = False) -> str:
    """``text`` with each line longer than ``width`` broken between words (``break_line``, fewest lines), its
    continuation lines indented two spaces more than the line itself: a printed note as it should read in JupyterLab,
    whose pane breaks a long line mid-word. A line that fits is left as it is (a table's row of ``width`` or less). A
    word longer than a line (a kernel's name of 100 characters and more, a path) stands whole on a line of its own,
    unindented where the indent would take it past ``width``: the pane breaks it where it must, but a copy of it is the
    name (one broken after an underscore had failed as ``ncu --kernel-name``, a review found).
    ``phrase_ends``: broken where phrases end, as ``break_line`` breaks a title (a legend of ``a = ...; b = ...``
    terms, which the fewest lines would break inside one)."""
    out = []
    for line in text.split("\n"):
        body = line.lstrip(" ")
        indent = line[:len(line) - len(body)]
        room = width - len(indent) - 2
        if len(line) <= width or not body:
            out.append(line)
            continue
        parts = break_line(glue_products(body), room, fewest_lines=not phrase_ends)
        for pad, part in zip([indent] + [indent + "  "] * (len(parts) - 1), parts):
            part = _pieces_joined(part)
            out.append(pad[:max(0, width - len(part))] + part)
    return "\n".join(out)


def _long_words_in_pieces(text: str, room: int) -> str:
    """Each word longer than ``room`` as pieces that ``break_line`` may put on two lines, cut after its ``_ . /``: each
    piece but the last ends in a word joiner, which ``_pieces_joined`` takes back out with the space after it."""
    return " ".join(re.sub(r"(?<=[_./])(?=.)", "\u2060 ", w) if len(w) > room else w for w in text.split(" "))


def _pieces_joined(line: str) -> str:
    """A line of ``break_line``'s as it reads: long words' pieces rejoined, glued products' spaces plain again."""
    return line.replace("\u2060 ", "").rstrip("\u2060").replace("\u00a0", " ")


def break_text(line: str, fit: int) -> list[str]:
    """``break_line`` for a title: a word longer than ``fit`` (a kernel's name) broken after one of its ``_ . /``,
    a product such as ``8 x 8192`` kept whole."""
    return [_pieces_joined(part) for part in break_line(glue_products(_long_words_in_pieces(line, fit)), fit)]


def shell_word(path) -> str:
    """``path`` as a printed command to copy takes it (``shlex.quote``): a path with a space in it had been two
    words in the hints labkit prints ("check it with: labkit manifest check PATH")."""
    import shlex

    return shlex.quote(str(path))


def cut_at_word(text: str, limit: int) -> str:
    """``text`` whole if it fits ``limit`` characters, else cut to fit with " ..." after it, at a space where one
    falls in the kept second half (a word is not split where that keeps at least half)."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 4]
    return (cut.rsplit(" ", 1)[0] if " " in cut[limit // 2:] else cut) + " ..."


# what a terminal would act on rather than show: C0 controls but tab, newline and carriage return (progress lines
# rewrite themselves), DEL, C1 controls and the bidirectional overrides that reorder what follows them
_UNSHOWN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """``text`` with what a terminal would act on escaped (``\\x1b``, ``\\u202e``): a name or label read from a file
    (a report's kernel, a manifest's model) reaches the screen as written, never as an escape sequence."""
    return _UNSHOWN.sub(lambda m: m.group().encode("unicode_escape").decode(), text)


class VisibleStream:
    """A text stream that writes ``visible(text)`` to ``stream``: the CLI's stdout and stderr."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(visible(text))
        return len(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)
