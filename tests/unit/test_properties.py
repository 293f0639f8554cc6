"""Property tests: mutated manifests, reports and cubins through the real CLI, in process.

The contract for every input: exit 0 with a valid result, or exit 2 with exactly one line on
stderr starting ``labkit: error:``; never another exception, never a hang. Hypothesis runs a
fixed number of derandomized examples per property (profile ``ci``, the default) so CI time and
results are the same on every run; ``LABKIT_HYPOTHESIS=dev`` explores more, randomly.
"""

import contextlib
import copy
import hashlib
import io
import json
import os
import signal
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labkit import cli, report

from ..conftest import ROOT

settings.register_profile("ci", max_examples=300, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=1000, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("LABKIT_HYPOTHESIS", "ci"))

SEED_MANIFEST = ROOT / "data" / "trtllm_gen_decode_manifest_v4.json"
SEED_REPORT = ROOT / "data" / "sage2_report_seed.json"
V1_REPORT = sorted((ROOT / "data" / "runs").glob("*-02_sage2_phases/data/report.json"))[-1]
CUBIN = next((ROOT / "data" / "cubins").glob("fmha*.cubin"))
CASES: dict[str, int] = {}  # property -> examples run (printed by test_zz_case_counts)


@contextlib.contextmanager
def _no_hang(seconds: int = 20):
    """A hang fails the example instead of stalling CI (SIGALRM: main thread, POSIX)."""
    def boom(*_):
        raise TimeoutError(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``labkit.cli.main`` in process; any exception other than a clean exit fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with _no_hang(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(argv)
    return rc, out.getvalue(), err.getvalue()


def assert_contract(rc: int, out: str, err: str) -> None:
    assert "Traceback" not in out + err
    if rc == 0:
        assert err == "", err
        return
    assert rc == 2, (rc, err)
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n") and lines[0].startswith("labkit: error: "), err


# ---- mutations of a JSON document -------------------------------------------------------------
def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*path, i))


NASTY = st.one_of(
    st.sampled_from([0, -1, 1, 2, 3, 4, 64, 128, 1280, 2**31 - 1, 2**31, 2**32, 2**32 - 1, 2**63, 10**12, 10**39,
                     10**40, 10**400, -(2**31) - 1, 4.0, 0.5, -0.0, 1e308, 1e-300, float("nan"), float("inf"), True,
                     False, None, "", "x", "\ud800", "\uff11\uff12", "bytes<\uff11\uff12\uff18\uff10>", "bytes<1280>",
                     "i32", "in buffer<bf16>", "seqs", "tokens", [], {}, [0], [0, 0, 0], {"a": 1}, {"max": 2}]),
    st.integers(), st.floats(), st.text(max_size=6),
    st.lists(st.integers(min_value=-2, max_value=300), max_size=6),
)


EDGE_INTS = st.sampled_from([0, 1, 2, 3, 7, 8, 15, 16, 63, 64, 127, 128, 255, 256, 1024, 1279, 1280, 1281, 4096,
                             65535, 65536, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**40, 2**63 - 1, -1, -(2**31)])
NAMES = st.sampled_from(["seqs", "tokens", "kv", "q", "out", "cuq", "counter", "partial", "stats", "decode", "x"])


def _same_type(v):
    """A value of the same JSON type as ``v`` (edge values first)."""
    if isinstance(v, bool):
        return st.booleans()
    if isinstance(v, int):
        return st.one_of(EDGE_INTS, st.integers(-(2**33), 2**33), st.integers(v - 70, v + 70))
    if isinstance(v, float):
        return st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.just(v * 2), st.just(-v))
    if isinstance(v, str):
        return st.one_of(NAMES, st.just(v[:-1]), st.just(v + "0"), st.text(max_size=6))
    if isinstance(v, list):
        ints = all(isinstance(x, int) and not isinstance(x, bool) for x in v)
        if ints:
            return st.lists(st.one_of(EDGE_INTS, st.integers(0, 300)), max_size=6)
        return st.just(v[:-1]) if v else st.just([])
    return st.just({} if isinstance(v, dict) else v)


def _set(doc, path, value):
    if not path:
        return value
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    parent[path[-1]] = value
    return doc


def _delete(doc, path):
    if not path:
        return doc
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    del parent[path[-1]]
    return doc


def _get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


@st.composite
def mutated_json(draw, seed_text: str) -> bytes:
    """The seed with 1-3 structural mutations, then possibly one byte-level one."""
    doc = json.loads(seed_text)
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(doc))[1:][::-1] or [()]  # leaves first: Hypothesis starts from the first choices
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(["same_type"] * 6 + ["set", "set", "delete", "add_key", "wrap", "deep", "empty"]))
        target = _get(doc, path)
        if op == "same_type":  # keeps the parser happy: reaches the checks behind it
            doc = _set(doc, path, draw(_same_type(target)))
        elif op == "set":
            doc = _set(doc, path, copy.deepcopy(draw(NASTY)))  # NASTY shares its lists and dicts
        elif op == "delete":
            doc = _delete(doc, path)
        elif op == "add_key" and isinstance(target, dict):
            key = draw(st.sampled_from(["bogus", "max", "offset", "at", "i32", "param"]))
            target[key] = copy.deepcopy(draw(NASTY))
        elif op == "wrap":
            doc = _set(doc, path, [target])
        elif op == "deep":
            doc = _set(doc, path, _nest(draw(st.integers(60, 1100))))
        elif op == "empty":
            doc = _set(doc, path, type(target)() if isinstance(target, (dict, list, str)) else 0)
    text = _dump(doc)
    data = text.encode("utf-8", "surrogatepass")
    tail = draw(st.sampled_from(["none"] * 10 + ["truncate", "flip", "insert", "dup_key", "utf16", "bom"]))
    if tail == "truncate":
        data = data[:draw(st.integers(0, len(data)))]
    elif tail == "flip" and data:
        i = draw(st.integers(0, len(data) - 1))
        data = data[:i] + bytes([draw(st.integers(0, 255))]) + data[i + 1:]
    elif tail == "insert":
        i = draw(st.integers(0, len(data)))
        data = data[:i] + draw(st.binary(min_size=1, max_size=4)) + data[i:]
    elif tail == "dup_key" and data.startswith(b"{"):
        first = next(iter(doc)) if isinstance(doc, dict) and doc else "k"
        data = b"{" + json.dumps(first).encode() + b": 3, " + data[1:]
    elif tail == "utf16":
        data = text.encode("utf-16", "surrogatepass")
    elif tail == "bom":
        data = b"\xef\xbb\xbf" + data
    return data


@st.composite
def mutated_values(draw, seed_text: str) -> bytes:
    """The seed with 1-4 leaf values changed to values of the same type: the document still parses
    as often as not, so the checks behind the parser (packing, tensor maps, family rules) get hit."""
    doc = json.loads(seed_text)
    for _ in range(draw(st.integers(1, 4))):  # leaves re-listed each time: a list may have changed length
        leaves = [p for p in _paths(doc) if p and isinstance(_get(doc, p), (int, str, float))
                  or p and isinstance(_get(doc, p), list) and all(isinstance(x, int) for x in _get(doc, p))]
        path = draw(st.sampled_from(leaves))
        doc = _set(doc, path, draw(_same_type(_get(doc, path))))
    return json.dumps(doc).encode()


def _nest(depth: int):
    v = 0
    for _ in range(depth):
        v = [v]
    return v


def _dump(doc) -> str:
    try:
        return json.dumps(doc, indent=1)
    except RecursionError:  # the writer has its own limit: build the text by hand
        return "[" * 2000 + "0" + "]" * 2000


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory() as d:
        yield Path(d)


def _write(workdir: Path, name: str, data: bytes) -> Path:
    p = workdir / name
    p.write_bytes(data)
    return p


# ---- the properties ---------------------------------------------------------------------------
@given(data=mutated_json(SEED_MANIFEST.read_text()),
       var=st.one_of(st.none(), st.sampled_from(["seqs", "tokens", "nope"]).flatmap(
           lambda n: st.one_of(st.integers(), st.sampled_from([2**32, 99999999999, 0])).map(lambda v: f"{n}={v}"))))
def test_mutated_manifest_check(workdir, data, var):
    _manifest_property(workdir, data, var, "manifest check")


@given(data=mutated_values(SEED_MANIFEST.read_text()),
       var=st.one_of(st.none(), st.sampled_from(["seqs=1", "seqs=2", "tokens=2", "tokens=64", "tokens=1"])))
def test_manifest_value_changes(workdir, data, var):
    _manifest_property(workdir, data, var, "manifest values")


def _manifest_property(workdir, data, var, name):
    CASES[name] = CASES.get(name, 0) + 1
    path = _write(workdir, "m.json", data)
    argv = ["manifest", "check", str(path), "--no-device"] + (["--var", var] if var is not None else [])
    rc, out, err = run_cli(argv)
    assert_contract(rc, out, err)
    outcome = "exit 0" if rc == 0 else "exit 2 after a full check" if out else "exit 2 at parse"
    CASES[f"{name}, {outcome}"] = CASES.get(f"{name}, {outcome}", 0) + 1
    if rc == 0:
        assert "verdict: can run" in out
    elif out:  # the check ran and printed its report: it names every error
        assert "verdict: CANNOT run" in out and "\n  error: " in out


@given(data=mutated_json(SEED_REPORT.read_text()))
def test_mutated_seed_report(workdir, data):
    _report_property(workdir, data, "seed report")


@given(data=mutated_json(V1_REPORT.read_text()))
def test_mutated_v1_report(workdir, data):
    _report_property(workdir, data, "v1 report")


def _report_property(workdir, data, name):
    CASES[name] = CASES.get(name, 0) + 1
    path = _write(workdir, "r.json", data)
    rc, out, err = run_cli(["report", "show", str(path)])
    assert_contract(rc, out, err)
    CASES[f"{name}, exit {rc}"] = CASES.get(f"{name}, exit {rc}", 0) + 1
    if rc == 0:  # a valid result: the report re-reads itself and the table has every phase
        r = report.load(path)
        assert report.loads(report.dumps(r)) == r
        assert all(name in out for name in r.phase_timings)
        rc, out, err = run_cli(["report", "diff", str(SEED_REPORT), str(path)])
        assert_contract(rc, out, err)
        assert rc == 0


def _cubin_mutations():
    image = CUBIN.read_bytes()
    n = len(image)
    header_offsets = st.sampled_from([18, 40, 41, 44, 48, 49, 58, 59, 60, 61, 62, 63])
    return st.one_of(
        st.integers(0, n - 1).map(lambda k: image[:k]),  # truncated
        st.tuples(st.one_of(header_offsets, st.integers(0, n - 1)), st.integers(0, 255)).map(
            lambda t: image[:t[0]] + bytes([t[1]]) + image[t[0] + 1:]),  # one byte changed
        st.tuples(st.integers(0, n - 8), st.binary(min_size=8, max_size=8)).map(
            lambda t: image[:t[0]] + t[1] + image[t[0] + 8:]),  # eight bytes changed
        st.binary(max_size=256),  # not a cubin at all
    )


@given(image=_cubin_mutations())
def test_corrupt_cubin_with_matching_sha(workdir, image):
    """A cubin whose sha256 the manifest names, but whose bytes are damaged."""
    CASES["cubin"] = CASES.get("cubin", 0) + 1
    doc = json.loads(SEED_MANIFEST.read_text())
    (mod,) = doc["modules"].values()
    mod["sha256"] = hashlib.sha256(image).hexdigest()
    cubins = workdir / "cubins"
    cubins.mkdir(exist_ok=True)
    (cubins / mod["source"]).write_bytes(image)
    path = _write(workdir, "mc.json", json.dumps(doc).encode())
    rc, out, err = run_cli(["manifest", "check", str(path), "--no-device", "--var", "tokens=2",
                            "--cubin-dir", str(cubins)])
    assert_contract(rc, out, err)
    CASES[f"cubin, exit {rc}"] = CASES.get(f"cubin, exit {rc}", 0) + 1
    if image == CUBIN.read_bytes():
        assert rc == 0


def test_zz_case_counts(capsys):
    """How many generated cases each property ran (printed for the record), and that each reached both sides of its
    contract: a generator that only ever made files refused at parse would test nothing past the parser."""
    with capsys.disabled():
        print(f"\nhypothesis cases: {CASES}")
    wanted = ["manifest check, exit 0", "manifest check, exit 2 after a full check", "manifest values, exit 0",
              "manifest values, exit 2 after a full check", "seed report, exit 0", "seed report, exit 2",
              "v1 report, exit 0", "v1 report, exit 2", "cubin, exit 0", "cubin, exit 2"]
    if len(CASES) <= 1:  # this test alone (-k): the properties did not run before it
        pytest.skip("the property tests did not run in this session")
    assert [k for k in wanted if not CASES.get(k)] == []
