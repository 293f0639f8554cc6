"""labkit's shared wording."""

from labkit._text import break_line, counted, duration


def test_counted_is_plural_unless_exactly_one():
    assert [counted(n, "split") for n in (0, 1, 2)] == ["0 splits", "1 split", "2 splits"]


def test_a_duration_takes_the_unit_that_puts_it_under_1000():
    assert [duration(ns) for ns in (0, 32, 999, 64000.0, 3197408.0, 532653152.0, 2.5e9)] == [
        "0 ns", "32 ns", "999 ns", "64 us", "3.197 ms", "532.7 ms", "2.5 s"]


def test_break_line_breaks_between_phrases_and_inside_one_only_where_it_is_too_long():
    phrases = ["paged decode d128,", "32/8 heads,", "page 64,", "batch 8\u00a0x\u00a08192 tokens:", "CTAs resident,",
               "SMs going idle"]
    line = " ".join(phrases)
    fit = max(map(len, phrases)) + 2  # every phrase fits, two do not
    lines = break_line(line, fit)
    assert " ".join(lines) == line and all(len(s) <= fit for s in lines)
    assert all(s.endswith((",", ":")) for s in lines[:-1])  # each break where a phrase ends
    assert len(lines) < len(phrases)  # phrases share a line where they fit
    # a comma inside brackets ends no phrase; a phrase too long for a line is broken between its words, once
    assert break_line("shape [1, 37810, 56, 128], dtype bf16", 28) == ["shape [1, 37810, 56, 128],", "dtype bf16"]
    assert break_line("one two three four, five", 14) == ["one two three", "four, five"]
    assert break_line("averyveryverylongword x", 5) == ["averyveryverylongword", "x"]  # a word is never cut
    # a stray ")" (a range such as "1..64)") does not leave every later comma inside brackets (a review found it)
    assert break_line("sizes 1..64), kv 8192, heads 32/8, page 64, batch 8", 20) == [
        "sizes 1..64),", "kv 8192, heads 32/8,", "page 64, batch 8"]
