"""labkit's shared wording."""

from labkit._text import break_line, counted, duration


def test_counted_is_plural_unless_exactly_one():
    assert [counted(n, "split") for n in (0, 1, 2)] == ["0 splits", "1 split", "2 splits"]
    assert [counted(n, "entry", "entries") for n in (1, 2)] == ["1 entry", "2 entries"]


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


def test_break_line_breaks_between_brackets_only_where_no_other_break_will_do():
    # "(run ..., date)" stays whole where a break before it will do, though one after "(run" gives lines more even
    line = "Sage2 phases, recorded on NVIDIA H200 (run data/runs/20261205T032424Z-02_sage2_phases, 2026-12-05)"
    assert break_line(line, 80, fewest_lines=True) == [
        "Sage2 phases, recorded on NVIDIA H200", "(run data/runs/20261205T032424Z-02_sage2_phases, 2026-12-05)"]


def test_break_line_with_fewest_lines_takes_as_few_lines_as_fit_then_ends_them_where_phrases_end():
    line = "alpha beta, gamma delta epsilon zeta, eta"
    assert break_line(line, 25) == ["alpha beta,", "gamma delta epsilon zeta,", "eta"]  # a title: phrases whole
    assert break_line(line, 25, fewest_lines=True) == ["alpha beta, gamma", "delta epsilon zeta, eta"]  # a paragraph


def test_wrapped_breaks_only_lines_over_the_width_between_words_and_indents_what_follows():
    from labkit._text import TEXT_WIDTH, wrapped

    table = "phase          p50_ms   share\nfused_mainloop  120.10  91.2 %"  # fits: untouched, spaces and all
    assert wrapped(table) == table
    note = ("  kv_tail_fixed_q 37760: +0.49 % against kv 37810, with fewer tiles (174640 vs 174936 per head): the tile "
            "model does not explain it, and 8 x 8192 stays one product")
    lines = wrapped(note, 60).split("\n")
    assert all(len(s) <= 60 for s in lines) and len(lines) > 1
    assert lines[0].startswith("  kv_tail") and all(s.startswith("    ") and s[4] != " " for s in lines[1:])
    assert " ".join(s.strip() for s in lines) == note.strip()  # every word kept, none cut
    assert any("8 x 8192" in s for s in lines)
    # a kernel's name of 100 characters and more stands whole on its own line, so that a copy of it is the name (one
    # broken after an underscore failed as ncu --kernel-name); every other line keeps to the width
    name = "fmhaSm100fKernel_QkvBfloat16OBfloat16H256PagedKvCausalP64MultiCtasKvVarSeqQ8Kv128StaticSwapsAbForGen"
    lines = wrapped(f"call 'attention': op decode, launch 0: {name}GetSmemSize (8 B params)").split("\n")
    assert lines == ["call 'attention': op decode, launch 0:", f"{name}GetSmemSize", "  (8 B params)"]
    assert wrapped(f"  kernel {name}") == f"  kernel\n{name}"  # no indent where it would pass the width
    assert wrapped(f"error: modules.{name[:85]}: no cubin") == f"error:\n  modules.{name[:85]}:\n  no cubin"
    assert all(len(s) <= TEXT_WIDTH for s in wrapped(f"a b {name} c d " + "word " * 40).split("\n") if " " in s)


def test_wrapped_takes_a_long_paragraph_in_time_linear_in_its_words():
    """A review found wrapped cubic in the words: a 1,000-word line (a printed list of a large sweep's points) took
    6 s, 2,000 some 45 s; the fewest-lines layout keeps each word's soonest line only."""
    import time

    from labkit._text import wrapped

    text = " ".join(f"w{i}," if i % 7 == 0 else f"w{i}" for i in range(5000))
    started = time.perf_counter()
    lines = wrapped(text).split("\n")
    assert time.perf_counter() - started < 3.0  # about 0.07 s; minutes before
    assert max(map(len, lines)) <= 100 and " ".join(s.strip() for s in lines) == text


def test_wrapped_at_phrase_ends_keeps_each_term_of_a_legend_whole():
    """`decode plans` wraps its legend so (it had its own copy of wrapped's indenting loop); the fewest lines would
    break "cN = N Q K^T / accumulator chains" apart."""
    from labkit._text import wrapped

    legend = ("kernel: mma = tensor cores (mma.sync); wN = N warps per CTA; sN = N K/V stages in flight per CTA; "
              "cN = N Q K^T accumulator chains (2 where no c); ef = K/V loads with L2 evict_first; "
              "clN = a unit's splits combined in a cluster of N; "
              "tail/N (M units) = the call's last M (sequence, KV head) units in N splits each; "
              "pp = page ids loaded a stage ahead")
    fewest = wrapped(legend, 116).split("\n")
    assert not all(s.endswith(";") for s in fewest[:-1])  # a term cut in two
    phrases = wrapped(legend, 116, phrase_ends=True).split("\n")
    assert all(s.endswith(";") for s in phrases[:-1]) and all(s.startswith("  ") for s in phrases[1:])
    assert max(map(len, phrases)) <= 116 and " ".join(s.strip() for s in phrases) == legend


def test_break_line_ends_a_line_at_a_full_stop_before_one_of_more_even_length():
    assert break_line("the split sweep ran level. see docs/decode.md", 26) == [
        "the split sweep ran level.", "see docs/decode.md"]


def test_a_word_longer_than_a_line_takes_only_its_own_line_past_the_width():
    """Found by a review: such a word raised the limit for every line, so lines of short words before and after it ran
    to 104 and 129 characters."""
    words = " ".join(["word"] * 40) + " " + "x" * 130 + " " + " ".join(["tail"] * 30)
    lines = break_line(words, 100)
    assert [line for line in lines if len(line) > 100] == ["x" * 130]
    assert " ".join(lines) == words


def test_three_significant_digits_keep_their_trailing_zeros():
    """Found by reading the notebooks' figures: '3.8 ms' labelled a phase the table gives as 3.799, '15 us' stood
    beside '17.6 us'."""
    from labkit._text import sig3

    assert [sig3(x) for x in (3.799, 14.976, 17.6, 237.089, 0.5)] == ["3.80", "15.0", "17.6", "237", "0.500"]


def test_a_dtype_takes_the_article_it_is_read_with():
    """A fresh-user review: "a i32 field" in a manifest error."""
    from labkit._text import with_article

    assert [with_article(w) for w in ("i32", "f32", "u64", "bf16", "scratch")] == [
        "an i32", "an f32", "a u64", "a bf16", "a scratch"]
