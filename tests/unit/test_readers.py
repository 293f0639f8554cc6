"""The input classes of issue 9, one test each: refused with a one-line error naming file, JSON
path and rule, or (for the check phase) reported as an error without a crash."""

import copy
import json
import os
import re
import struct
from pathlib import Path

import numpy as np
import pytest

from labkit import report
from labkit._json import MAX_DEPTH, read_bytes, read_json
from labkit.errors import ArgumentError, FormatError
from labkit.manifest import check, loads, read_cubin
from labkit.timing.stats import STAT_FIELDS, Stats
from labkit.values import OutputPath, Shape

from ..conftest import ROOT

SEED = ROOT / "data" / "trtllm_gen_decode_manifest_v4.json"
SEED_DOC = json.loads(SEED.read_text())
REPORT_DOC = json.loads((ROOT / "data" / "sage2_report_seed.json").read_text())
CUBIN = next((ROOT / "data" / "cubins").glob("fmha*.cubin")).read_bytes()


def _refused(data: bytes, path: str, text: str, tmp_path):
    f = tmp_path / "x.json"
    f.write_bytes(data)
    with pytest.raises(FormatError) as e:
        read_json(f, what="manifest")
    msg = str(e.value)
    # the path, then ": message", or " = value: ..." where the message is about the value there; the file alone where
    # the message is about the whole of it ("$" had read as a JSON path to a user who gave a directory)
    head = (f"{f}: ",) if path == "$" else (f"{f}: {path}: ", f"{f}: {path} = ")
    assert msg.startswith(head) and text in msg and "\n" not in msg and f"{f}: $" not in msg, msg


@pytest.mark.parametrize("data, path, text", [
    (b'{"a": "\xff"}', "$", "byte 0xff at offset 7 is not UTF-8"),
    ("{}".encode("utf-16"), "$", "UTF-16"),
    # without a BOM, by the NULs beside ASCII (found by a mutation audit: only a BOM was given)
    *[('{"a": 1}'.encode(enc), "$", "UTF-16 or UTF-32 text: expected UTF-8")
      for enc in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be")],
    (b"\x00\x01\x02\x7fELF" * 10, "$", "not valid JSON"),
    (b'{"a": "x', "$", "not valid JSON: Unterminated string starting at line 1 column 7"),  # not "at at"
    (b'{"a": 1', "$", "not valid JSON: Expecting ',' delimiter at line 1 column 8"),
    (b"[" * 1000 + b"]" * 1000, "$", f"nested 1000 levels deep: expected at most {MAX_DEPTH}"),
    (b"[" * 990 + b"]" * 990, "$", "nested 990 levels"),
    (b'{"n": ' + b"7" * 5000 + b"}", "n", "an integer of 5000 digits"),
    (b'{"x": 1e400}', "x", "expected a finite number"),
    (b'{"x": [1, NaN]}', "x[1]", "expected a finite number"),
    (b'{"x": -Infinity}', "x", "expected a finite number"),
    (b'{"schema_version": 3, "schema_version": 4}', "schema_version", "duplicate key 'schema_version'"),
    (b'{"a": {"b": 1, "b": 1}}', "a.b", "duplicate key 'b'"),
    (b'{"a": 1, "b": 2, "c": 3, "b": 4}', "b", "duplicate key 'b'"),  # the repeated key, not the first
    (b'{"name": "\\ud800x"}', "name", "lone surrogate"),
])
def test_json_reader_refuses(data, path, text, tmp_path):
    _refused(data, path, text, tmp_path)


def test_only_regular_files_are_opened(tmp_path):
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)
    for p, kind in ((fifo, "a FIFO"), (tmp_path, "a directory"), ("/dev/zero", "a character device"),
                    ("/dev/urandom", "a character device")):
        with pytest.raises(FormatError, match=f"is {kind}"):
            read_bytes(p)


def test_size_cap(tmp_path):
    f = tmp_path / "big.json"
    f.write_bytes(b" " * 2000)
    with pytest.raises(FormatError, match="2000 bytes: expected a manifest of at most 1000 bytes"):
        read_bytes(f, what="manifest", max_bytes=1000)


# ---- manifests --------------------------------------------------------------------------------
def _manifest(edit) -> str:
    d = copy.deepcopy(SEED_DOC)
    edit(d)
    return json.dumps(d)


def _fields(d):
    return d["ops"]["decode"]["impl"]["launches"][0]["args"][0]["pack"]["fields"]


@pytest.mark.parametrize("edit, path, text", [
    (lambda d: d.__setitem__("programs", {}), "programs", "at least 1 entry"),
    (lambda d: d.__setitem__("schema_version", 4.0), "schema_version", "expected schema_version 4"),
    (lambda d: d["vars"]["seqs"].__setitem__("max", 2**63), "vars.seqs.max", "an integer in"),
    (lambda d: d["ops"]["decode"]["impl"]["launches"][0]["args"][0]["pack"].__setitem__("size", 10**12),
     "ops.decode.impl.launches[0].args[0].pack.size", "an integer in [1, 32764]"),
    (lambda d: d["ops"]["decode"]["impl"]["launches"][0].__setitem__("shared_mem", 10**39),
     "ops.decode.impl.launches[0].shared_mem", "an integer in [0, 4294967295]"),
    (lambda d: d["buffers"]["q"].__setitem__("shape", [10**39]), "buffers.q.shape[0]", "an integer in"),
    (lambda d: d["buffers"]["q"].__setitem__("shape", [2**40, 2]), "buffers.q.shape", "at most 1099511627776"),
    (lambda d: d["ops"]["decode"]["impl"]["launches"][0].__setitem__("params", ["bytes<\uff11\uff12\uff18\uff10>"]),
     "ops.decode.impl.launches[0].params[0]", "'bytes<N>'"),
    (lambda d: d["modules"][next(iter(d["modules"]))].__setitem__("source", "../../etc/passwd"),
     "modules.", "a cubin file name"),
    # found by a test audit: these values passed the parser (or crashed it) with the rule's check removed
    (lambda d: d["ops"]["decode"]["params"].__setitem__(7, "int"), "ops.decode.params[7]",
     "'[in|out|inout] buffer<dtype>' or a scalar (i32, u32, f32, i64)"),
    (lambda d: _fields(d)[1]["tensormap"].__setitem__("swizzle", 48),
     "ops.decode.impl.launches[0].args[0].pack.fields[1].tensormap.swizzle", "a swizzle span in bytes: 0, 32, 64, 128"),
    (lambda d: _fields(d)[1]["tensormap"].__setitem__("l2_promotion", 32),
     "ops.decode.impl.launches[0].args[0].pack.fields[1].tensormap.l2_promotion",
     "an L2 promotion in bytes: 0, 64, 128, 256"),
    (lambda d: _fields(d)[9].__setitem__("i32", -(2**31) - 1), "ops.decode.impl.launches[0].args[0].pack.fields[9].i32",
     "an integer in [-2147483648, 4294967295]"),
    (lambda d: _fields(d)[9].__setitem__("i32", 2**32), "ops.decode.impl.launches[0].args[0].pack.fields[9].i32",
     "an integer in [-2147483648, 4294967295]"),
    (lambda d: d["programs"]["decode"]["batch"].__setitem__("groups", 0), "programs.decode.batch.groups",
     "an integer in [1, 2147483647]"),
    (lambda d: d["ops"]["decode"].__setitem__("params", []), "ops.decode.params", "a list of at least 1 entry (got 0)"),
    (lambda d: d["programs"]["decode"].__setitem__("calls", []), "programs.decode.calls",
     "a list of at least 1 entry (got 0)"),
])
def test_manifest_parse_refuses(edit, path, text):
    with pytest.raises(FormatError) as e:
        loads(_manifest(edit), source="m.json")
    msg = str(e.value)
    assert msg.startswith(f"m.json: {path}") and text in msg, msg


def test_manifest_parse_accepts_the_other_side_of_its_limits():
    """The values just inside the limits above parse, and pack as written: an i32 field's 2^32 - 1 and -2^31, an
    explicit offset 0, one field, a 1-byte block, a buffer of exactly 2^40 bytes, an op without scratch; a tensor map
    without element_strides steps over every element (1s, as the driver is given)."""
    def edits(d):
        _fields(d)[9]["i32"], _fields(d)[24]["i32"] = 2**32 - 1, -(2**31)
        d["programs"]["decode"]["calls"][0]["args"][0]["offset"] = 0
    m = loads(_manifest(edits))
    assert [f.element_strides for f in m.ops["decode"].launches[0].args[0].fields[:4]] == [(1, 1, 1, 1)] * 3 + [
        (1, 1, 1, 1, 1)]
    blob = check(m, vars={"tokens": 2}, find_modules=False).plans[0].offline_blob
    assert blob[1112:1116] == b"\xff\xff\xff\xff" and blob[1208:1212] == struct.pack("<i", -(2**31))

    def small(d):
        launch = d["ops"]["decode"]["impl"]["launches"][0]
        launch.update(params=["bytes<1>"], args=[{"pack": {"size": 1, "fields": [{"at": 0, "i32": 1}]}}])
        del d["ops"]["decode"]["impl"]["scratch"]
        d["buffers"]["q"]["shape"] = [2**39]
    op = loads(_manifest(small)).ops["decode"]
    assert op.scratch == {} and op.launches[0].args[0].size == 1 and len(op.launches[0].args[0].fields) == 1
    assert loads(_manifest(small)).buffers["q"].nbytes == 2**40


@pytest.mark.parametrize("edit, vars, path, text", [
    (lambda d: _fields(d)[0]["tensormap"].update(dims=[], strides=[], box=[]), {"tokens": 2},
     "fields[0].tensormap.dims", "rank 0"),
    (lambda d: _fields(d)[1]["tensormap"].update(strides=[4096]), {"tokens": 2},
     "fields[1].tensormap.strides", "expected rank - 1 = 3"),
    (lambda d: _fields(d)[1]["tensormap"].update(strides=[4096, 0, 524288]), {"tokens": 2},
     "fields[1].tensormap.strides[1]", "non-zero multiple of 16"),
    (lambda d: None, {"seqs": 99999999999}, "vars.seqs", "value 99999999999 outside 1..max 2"),
    (lambda d: d["vars"]["seqs"].__setitem__("max", 2**32), {"seqs": 2**32},
     "programs.decode.calls[0].args[7].var", "does not fit param 7 (i32"),
])
def test_manifest_check_reports_and_never_packs_a_broken_launch(edit, vars, path, text):
    res = check(loads(_manifest(edit)), vars=vars, find_modules=False)
    assert any(path in i.path and text in i.message for i in res.errors), [str(i) for i in res.errors]
    assert res.plans == []  # the broken launch is not packed (packing it used to crash)


def test_lone_surrogate_names_are_refused_before_printing(tmp_path, capsys):
    from labkit import cli

    f = tmp_path / "m.json"
    f.write_text(SEED.read_text().replace('"label": "attention"', '"label": "\\udc80"'))
    assert cli.main(["manifest", "check", str(f), "--no-device"]) == 2
    assert "lone surrogate" in capsys.readouterr().err


# ---- cubins -----------------------------------------------------------------------------------
@pytest.mark.parametrize("cut", [0, 10, 63, 64, 1000, len(CUBIN) // 2, 128000])  # section headers end at 128784
def test_truncated_cubin_is_a_format_error(cut):
    with pytest.raises(FormatError):
        read_cubin(CUBIN[:cut])


@pytest.mark.parametrize("offset, value", [(40, 0xFFFFFFFF), (58, 0), (60, 0xFFFF), (62, 0xFFFF), (48, 0)])
def test_corrupt_header_is_a_format_error(offset, value):
    bad = bytearray(CUBIN)
    struct.pack_into("<H" if offset >= 58 else "<I", bad, offset, value)
    with pytest.raises(FormatError):
        read_cubin(bytes(bad))


def _section_headers(data):
    (shoff,), (size, count, names) = struct.unpack_from("<Q", data, 40), struct.unpack_from("<HHH", data, 58)
    return shoff, size, count, names


def test_corrupt_header_fields_are_named():
    """Found by a test audit: an ELF of another machine, a name table index one past the last header, a 63-byte
    header entry and SM 9 had not been tried (the first read as a cubin, the second raised IndexError)."""
    _, _, count, _ = _section_headers(CUBIN)
    (e_flags,) = struct.unpack_from("<I", CUBIN, 48)
    for offset, fmt, value, said in ((18, "<H", 62, "ELF machine 62 is not EM_CUDA (190): not a cubin"),
                                     (62, "<H", count, f"name table index {count}: corrupt cubin"),
                                     (58, "<H", 63, "entry size 63 (expected >= 64)"),
                                     (48, "<I", e_flags & ~0xFF00 | 9 << 8, "not a CUDA SM (corrupt cubin)")):
        bad = bytearray(CUBIN)
        struct.pack_into(fmt, bad, offset, value)
        with pytest.raises(FormatError, match=re.escape(said)):
            read_cubin(bytes(bad))


def test_a_cubin_s_section_name_table_may_lie_anywhere_in_the_file():
    """The seed's name table is its first section (byte 64); moved to the file's end it reads the same."""
    shoff, size, _, names = _section_headers(CUBIN)
    at = shoff + names * size + 24  # sh_offset, then sh_size
    off, n = struct.unpack_from("<QQ", CUBIN, at)
    moved = bytearray(CUBIN + CUBIN[off:off + n])
    struct.pack_into("<Q", moved, at, len(CUBIN))
    assert read_cubin(bytes(moved)) == read_cubin(CUBIN)


def test_eiattr_records_are_read_to_the_section_s_last_byte():
    from labkit.manifest.elf import _eiattrs

    blob = struct.pack("<BBH", 0x04, 0x17, 4) + b"abcd" + struct.pack("<BBH", 0x03, 0x19, 1280)
    assert list(_eiattrs(blob)) == [(0x17, b"abcd"), (0x19, 1280)]
    with pytest.raises(FormatError, match="EIATTR 0x17 of 5 B runs past its 8-byte .nv.info section"):
        list(_eiattrs(blob[:8].replace(b"\x04\x17\x04", b"\x04\x17\x05")))


def test_directory_and_fifo_named_like_the_cubin(tmp_path, capsys):
    from labkit import cli

    name = SEED_DOC["modules"][next(iter(SEED_DOC["modules"]))]["source"]
    d = copy.deepcopy(SEED_DOC)
    d["modules"][next(iter(d["modules"]))]["sha256"] = "0" * 64  # not the data/cubins copy
    m = tmp_path / "m.json"
    m.write_text(json.dumps(d))
    for make in (os.mkdir, os.mkfifo):
        cubins = tmp_path / f"c_{make.__name__}"
        cubins.mkdir()
        make(cubins / name)
        make(cubins / "other.cubin")
        assert cli.main(["manifest", "check", str(m), "--no-device", "--cubin-dir", str(cubins)]) == 2
        out = capsys.readouterr().out
        assert f"{cubins / name} is not a regular file (not opened)" in out and "the manifest expects 0000" in out


def test_a_cubin_too_large_to_read_is_named_once_with_the_reason(tmp_path, capsys):
    """The reader's message after the file's name, not the name twice: the split on ": $: " that had cut it would
    have kept the whole message once the whole-file errors lost their "$"."""
    from labkit import cli
    from labkit.manifest.modules import MAX_CUBIN_BYTES

    name = SEED_DOC["modules"][next(iter(SEED_DOC["modules"]))]["source"]
    d = copy.deepcopy(SEED_DOC)
    d["modules"][next(iter(d["modules"]))]["sha256"] = "0" * 64
    m = tmp_path / "m.json"
    m.write_text(json.dumps(d))
    cubins = tmp_path / "c"
    cubins.mkdir()
    with open(cubins / name, "wb") as f:  # sparse: no disk used
        f.truncate(MAX_CUBIN_BYTES + 1)
    assert cli.main(["manifest", "check", str(m), "--no-device", "--cubin-dir", str(cubins)]) == 2
    out = capsys.readouterr().out
    assert (f"{cubins / name} is not readable as a cubin: {MAX_CUBIN_BYTES + 1} bytes: expected a cubin of at most "
            f"{MAX_CUBIN_BYTES} bytes") in " ".join(out.split()), out


# ---- reports ----------------------------------------------------------------------------------
def _report(edit) -> str:
    d = copy.deepcopy(REPORT_DOC)
    edit(d)
    return json.dumps(d)


FM = ("phase_timings", "fused_mainloop")


@pytest.mark.parametrize("edit, path, text", [
    (lambda d: d.__setitem__("manual_checksum", float("nan")), "manual_checksum", "finite"),
    (lambda d: d["manual_decomposition_vs_public_sage2"].__setitem__("max_abs", float("inf")),
     "manual_decomposition_vs_public_sage2.max_abs", "finite"),
    (lambda d: d["phase_timings"]["fused_mainloop"].__setitem__("mean_s", float("inf")),
     "phase_timings.fused_mainloop.mean_s", "finite"),
    (lambda d: d["phase_timings"]["fused_mainloop"].__setitem__("mean_s", 5.0),
     "phase_timings.fused_mainloop.mean_s", "a mean within [min_s, max_s]"),
    (lambda d: d["tail_study"][0].__setitem__("q_row_efficiency", 7.5), "tail_study[0].q_row_efficiency",
     "a number in [0, 1]"),
    (lambda d: d["tail_study"][1].__setitem__("q_row_efficiency", 0.5), "tail_study[1].q_row_efficiency",
     "q_len / scheduled_q_rows"),
    (lambda d: d["phase_timings"]["fused_mainloop"].__setitem__("count", 10**39),
     "phase_timings.fused_mainloop.count", "an integer in [1, 2147483647]"),
    (lambda d: d.__setitem__("q_shape", [1, 37810, 56, 10**39]), "q_shape[3]", "an integer in"),
    # found by a mutation audit: a bool read as a number, p95 over p99 and an efficiency 1e-4 off all passed
    (lambda d: d["phase_timings"]["fused_mainloop"].__setitem__("mean_s", True),
     "phase_timings.fused_mainloop.mean_s", "expected a number"),
    (lambda d: d["phase_timings"]["fused_mainloop"].__setitem__("p95_s", 0.23793), "phase_timings.fused_mainloop",
     "p95_s 0.23793 <= p99_s 0.23792146347045898"),
    (lambda d: d["tail_study"][1].__setitem__("q_row_efficiency", 0.99675), "tail_study[1].q_row_efficiency",
     "q_len / scheduled_q_rows = 37761/37888 = 0.996648"),
])
def test_report_refuses(edit, path, text):
    with pytest.raises(FormatError) as e:
        report.loads(_report(edit), source="r.json")
    msg = str(e.value)
    assert msg.startswith(f"r.json: {path}") and text in msg, msg


def test_a_mean_of_equal_samples_an_ulp_past_them_reads_and_is_no_longer_written():
    """Found on the H200: three equal samples of 5.152e-06 s averaged to one ulp above them, and the strict reader
    refused the report that profile had just saved. Stats clamps the mean; the reader allows a few ulps."""
    x = 5.152000114321708e-06
    assert float(np.mean([x] * 3)) > x  # the rounding itself
    st = Stats.from_samples([x] * 3)
    assert st.min_s == st.mean_s == st.max_s == x

    def ulp_past(d):
        d["phase_timings"]["fused_mainloop"].update({k: x for k in STAT_FIELDS if k != "count"},
                                                    mean_s=5.152000114321709e-06)
    assert report.loads(_report(ulp_past)).phase_timings["fused_mainloop"].mean_s == 5.152000114321709e-06


def test_all_zero_p50_tables_do_not_divide_by_zero():
    def zero(d):
        for st in d["phase_timings"].values():
            for k in st:
                if k != "count":
                    st[k] = 0.0
    r = report.loads(_report(zero))
    seed = report.loads(json.dumps(REPORT_DOC))

    def last_column(table):  # each row's last cell, below the rule (any table holds a "-": its rule is dashes)
        lines = table.splitlines()
        rows = lines[next(i for i, line in enumerate(lines) if line.startswith("---")) + 1:]
        return {line.split()[-1] for line in rows}, len(rows)

    phases = len(r.phase_timings) + 1  # and the total
    assert last_column(report.phase_table(r)) == ({"-"}, phases)  # no share of a zero total
    assert last_column(report.diff_table(r, seed)) == ({"-"}, phases)  # no ratio over a zero A
    assert last_column(report.diff_table(seed, r)) == ({"0.000x"}, phases)


# ---- value types ------------------------------------------------------------------------------
def test_values_refuse_what_the_cli_refuses(tmp_path):
    from labkit.workloads.sage2.profile import profile

    assert tuple(Shape.parse("1,37810,56,128")) == (1, 37810, 56, 128)
    assert Shape(1, 100, 1, 128).length(None, "q") == 100  # None means N, 0 does not
    with pytest.raises(ArgumentError, match="q 0"):
        Shape(1, 100, 1, 128).length(0, "q")
    with pytest.raises(ArgumentError, match="head_dim 100"):
        profile((1, 64, 1, 100))  # the library refuses it before asking for a GPU
    with pytest.raises(ArgumentError, match="q_tails 65"):
        profile((1, 64, 1, 64), q_tails=[65])
    with pytest.raises(ArgumentError, match="is a directory"):
        OutputPath.parse(tmp_path)


def test_output_paths_probe_only_where_something_is_created(tmp_path, monkeypatch):
    """A review of the write probe: an existing directory may be only read (a finished sweep resumed for its
    counts), an existing file is written in place (its own permission counts, /dev/null), and a report path whose
    writer makes its parents (every one does, as --out directories are made) may name a folder that does not exist
    yet: only the nearest existing one is probed."""
    from labkit import values
    from labkit.errors import ArgumentError
    from labkit.values import OutputDir, OutputPath

    probed = []
    monkeypatch.setattr(values, "_check_writable", lambda d, what, shown: probed.append(d))
    (tmp_path / "done").mkdir()
    (tmp_path / "old.json").write_text("{}")
    OutputDir.parse(tmp_path / "done")
    OutputPath.parse(tmp_path / "old.json")
    OutputPath.parse("/dev/null")
    assert probed == []
    OutputDir.parse(tmp_path / "new" / "deeper")
    OutputPath.parse(tmp_path / "new.json")
    assert probed == [tmp_path, tmp_path]
    OutputPath.parse(tmp_path / "missing" / "rep")
    assert probed[-1] == tmp_path
    (tmp_path / "f").write_text("")
    with pytest.raises(ArgumentError, match="is not a directory"):
        OutputPath.parse(tmp_path / "f" / "rep")
    monkeypatch.undo()
    assert not list(tmp_path.glob(".labkit-write-check-*"))
    OutputPath.parse(tmp_path / "new.json")  # the real probe leaves nothing behind
    assert not list(tmp_path.glob(".labkit-write-check-*"))


@pytest.mark.parametrize("text, accepted, said", [
    ('{"n": ' + "7" * 40 + "}", True, None),
    ('{"n": -' + "7" * 40 + "}", True, None),
    ('{"n": ' + "7" * 41 + "}", False, "an integer of 41 digits: expected at most 40"),  # a review: 41 had passed
    ('{"n": -' + "7" * 41 + "}", False, "an integer of 41 digits: expected at most 40"),
    ("[" * MAX_DEPTH + "]" * MAX_DEPTH, True, None),
    ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), False, f"nested {MAX_DEPTH + 1} levels deep: expected at most 64"),
])
def test_json_reader_limits_at_their_edges(text, accepted, said):
    from labkit._json import parse_text

    if accepted:
        parse_text(text)
    else:
        with pytest.raises(FormatError, match=re.escape(said)):
            parse_text(text)


def test_an_integer_field_refuses_a_boolean():
    from labkit._json import parse_text

    for value in ("true", "false", "4.0"):
        with pytest.raises(FormatError, match=f"schema_version = {value}: expected an integer"):
            parse_text('{"schema_version": ' + value + "}")["schema_version"].int(1)


def test_a_file_name_that_cannot_be_opened_is_one_line_naming_it(tmp_path):
    """An empty name, an embedded NUL and a name with a newline: each a FormatError of one line, the name shown with
    its control characters escaped (found by a mutation audit: none of them was given)."""
    with pytest.raises(FormatError) as e:
        read_bytes("", what="manifest")
    assert str(e.value) == "'': an empty file name was given for the manifest"
    with pytest.raises(FormatError) as e:
        read_bytes("a\0b.json", what="manifest")
    assert str(e.value).startswith(r"a\x00b.json: cannot read the manifest (") and "\n" not in str(e.value)
    name = tmp_path / "new\nline.json"
    with pytest.raises(FormatError) as e:
        read_json(name, what="manifest")
    msg = str(e.value)
    assert msg == f"{str(tmp_path)}/new\\nline.json: cannot read the manifest (No such file or directory)", msg


def test_a_long_value_is_shown_cut_to_60_characters():
    from labkit._json import parse_text

    long = "x" * 100
    with pytest.raises(FormatError) as e:
        parse_text(json.dumps({"n": long}), source="r.json")["n"].int()
    shown = repr(long)[:57] + "..."
    assert len(shown) == 60 and str(e.value) == f"r.json: n = {shown}: expected an integer"


def test_scalar_fields_at_their_edges():
    """true/false only where a boolean is read; a string up to 4096 characters; a positive number with a cap names
    the cap (found by a mutation audit: none was given), also when the value is over it (a CLI review: it said
    "in [-inf, 10]"), and a range open at one end says only its bound."""
    from labkit._json import parse_text

    doc = parse_text(json.dumps({"equal": 1, "ok": True, "s": "a" * 4096, "long": "a" * 4097, "t": 0, "r": 11}),
                     source="r.json")
    assert doc["ok"].bool() is True and doc["s"].str() == "a" * 4096
    for field, read, said in (("equal", lambda n: n.bool(), "equal = 1: expected true or false"),
                              ("long", lambda n: n.str(), "expected a string of at most 4096 characters"),
                              ("t", lambda n: n.positive(10), "t = 0: expected a number above 0 and at most 10"),
                              ("t", lambda n: n.positive(), "t = 0: expected a number above 0"),
                              ("r", lambda n: n.positive(10), "r = 11: expected a number above 0 and at most 10"),
                              ("r", lambda n: n.num(None, 10), "r = 11: expected a number at most 10"),
                              ("t", lambda n: n.num(1), "t = 0: expected a number at least 1"),
                              ("r", lambda n: n.int(None, 10), "r = 11: expected an integer at most 10"),
                              ("r", lambda n: n.int(0, 10), "r = 11: expected an integer in [0, 10]")):
        with pytest.raises(FormatError) as e:
            read(doc[field])
        assert str(e.value).startswith("r.json: ") and str(e.value).endswith(said), str(e.value)


def test_number_arguments_name_the_value_and_the_rule():
    """A float that is not a number and an integer over a bound given alone (found by a mutation audit: the first was
    an UnboundLocalError once its raise went, the second said '>= None')."""
    from labkit.values import check_int, parse_float

    for text in ("abc", "", "1,5"):
        with pytest.raises(ArgumentError) as e:
            parse_float(text, what="--rate")
        assert str(e.value) == f"--rate {text!r}: expected a number"
    with pytest.raises(ArgumentError) as e:
        check_int(5, what="--splits", hi=3)
    assert str(e.value) == "--splits 5: expected <= 3"
    with pytest.raises(ArgumentError) as e:
        check_int(0, what="--splits", lo=1)
    assert str(e.value) == "--splits 0: expected >= 1"


def test_a_finite_number_check_and_the_head_dim_the_kernels_are_built_for():
    """check_finite refuses what parse_float refuses when given a Python value; 64 runs as 64, 72..128 pad to the 128
    kernel (found by a mutation audit: neither was called by a test)."""
    from labkit.values import HEAD_DIMS, check_finite, kernel_head_dim

    assert check_finite(3, what="--rate") == 3.0
    for value in (float("nan"), float("inf"), True, "1"):
        with pytest.raises(ArgumentError) as e:
            check_finite(value, what="--rate")
        assert str(e.value) == f"--rate {value!r}: expected a finite number"
    assert HEAD_DIMS == (64, 72, 80, 88, 96, 104, 112, 120, 128)
    assert [kernel_head_dim(d) for d in HEAD_DIMS] == [64] + [128] * 8
    assert [Shape(1, 16, 1, d).kernel_head_dim for d in (64, 72, 128)] == [64, 128, 128]
    # at most 2**33 elements per tensor: 2**26 rows of one head of 128 is 2**33, twice that is a typo
    assert tuple(Shape(1, 1 << 26, 1, 128)) == (1, 1 << 26, 1, 128)
    with pytest.raises(ArgumentError, match=re.escape(f"shape [2, {1 << 26}, 1, 128]: more than {2 ** 33} elements")):
        Shape(2, 1 << 26, 1, 128)
    for value in (5, None, "1,2,3"):  # not text of four integers: refused by name, not an AttributeError
        with pytest.raises(ArgumentError, match=re.escape(f"shape {value!r}: expected B,N,H,D (four integers)")):
            Shape.parse(value)


def test_a_path_the_os_will_not_look_at_is_refused_and_the_write_probe_leaves_no_descriptor(tmp_path):
    """A name the OS will not look at (too long) is one ArgumentError naming it, not an OSError later; the probe closes
    what it opened (found by a mutation audit: neither was checked)."""
    from labkit.values import OutputDir, OutputPath

    long = "x" * 5000
    for parse in (OutputPath.parse, OutputDir.parse):
        with pytest.raises(ArgumentError) as e:
            parse(long, "--out")
        assert str(e.value) == f"--out {long!r}: File name too long"  # the path once (a review: it was said twice)
    fds = Path("/proc/self/fd")
    if fds.is_dir():
        before = len(list(fds.iterdir()))
        for i in range(5):
            OutputDir.parse(tmp_path / f"new{i}", writes=True)
        assert len(list(fds.iterdir())) == before


def test_the_default_size_cap_and_a_parsed_text_refuse_as_a_file_does(tmp_path):
    """16 MiB by default; text parsed without a file is as strict about NaN as a file (found by a mutation audit:
    only a cap given by the caller, and NaN read from a file, were tried)."""
    from labkit._json import parse_text

    f = tmp_path / "big.json"
    f.write_bytes(b" " * (16 << 20))
    assert len(read_bytes(f)) == 16 << 20
    f.write_bytes(b" " * ((16 << 20) + 1))
    with pytest.raises(FormatError, match=f"{(16 << 20) + 1} bytes: expected a file of at most {16 << 20} bytes"):
        read_bytes(f)
    with pytest.raises(FormatError, match=re.escape("x[1] = nan: expected a finite number")):
        parse_text('{"x": [1, NaN]}')


@pytest.mark.parametrize("kind", ["OutputPath", "OutputDir"])
def test_an_output_name_with_a_nul_is_refused_before_anything_runs(kind, tmp_path):
    """pathlib's exists() answers False to a NUL, so the name passed the checks and its write failed after the run,
    a ValueError (a mutation audit). The API and notebooks can pass one; a command line cannot."""
    from labkit import values
    from labkit.errors import ArgumentError

    with pytest.raises(ArgumentError, match=r"^--out '.*a\\x00b': a (file|directory) name with a NUL character$"):
        getattr(values, kind).parse(str(tmp_path / "a\0b"), "--out")


def test_a_utf8_file_with_a_byte_order_mark_reads_as_without_one(tmp_path, capsys):
    """Found by a CLI review: a UTF-8 file saved with a BOM (as Windows editors do) was refused with json's 'Unexpected
    UTF-8 BOM (decode using utf-8-sig)', an instruction to Python, not to the user; a bad byte after the mark keeps
    its offset in the file."""
    from labkit import cli

    seed = ROOT / "data" / "sage2_report_seed.json"
    f = tmp_path / "bom.json"
    f.write_bytes(b"\xef\xbb\xbf" + seed.read_bytes())
    assert read_json(f) == REPORT_DOC
    assert cli.main(["report", "show", str(f)]) == 0
    with_bom = capsys.readouterr().out
    assert cli.main(["report", "show", str(seed)]) == 0
    assert with_bom.replace(str(f), str(seed)) == capsys.readouterr().out
    _refused(b'\xef\xbb\xbf{"a": "\xff"}', "$", "byte 0xff at offset 10 is not UTF-8", tmp_path)


def test_a_version_labkit_does_not_read_is_said_as_such_and_a_huge_integer_as_too_large(tmp_path):
    """A review: "decode_report_version = 2: expected an integer in [1, 1]" for a newer report, and "23 digits, out of
    range (expected >= 1)" for a value far too large, which read as one below 1."""
    from labkit.sched.timeline import Timeline
    from labkit.values import parse_int
    from labkit.workloads.decode import report as decode_report

    src = ROOT / "data" / "runs" / "20261206T020100Z-h200_bench_gpu_suite_83691f3" / "sweep.json"
    doc = json.loads(src.read_text())
    (tmp_path / "r.json").write_text(json.dumps({**doc, "decode_report_version": 2}))
    with pytest.raises(FormatError, match=r"decode_report_version = 2: expected 1 \(the version labkit reads\)$"):
        decode_report.load(tmp_path / "r.json")
    timeline = Timeline(np.array([(0, 0, 0, 32, 0, 0)]), sms=1, ctas_per_sm=1).to_dict()
    with pytest.raises(FormatError, match=r"timeline_version = 3: expected 1 \(the version labkit reads\)$"):
        Timeline.from_dict({**timeline, "timeline_version": 3}, source="t.json")
    with pytest.raises(ArgumentError, match=r"23 digits, too large \(expected >= 1\)$"):
        parse_int("9" * 23, what="--var tokens", lo=1)
    with pytest.raises(ArgumentError, match=r"23 digits, too small \(expected >= 1\)$"):
        parse_int("-" + "9" * 23, what="--var tokens", lo=1)
