"""Property tests of the CLI's arguments: the commands that run without a GPU, each option given a value drawn from
the ones a typo, a shell or a script makes (0, -1, 8k, 1.5k, nan, '', '1,,2', 2**31, full-width digits...), through
the real CLI, in process. Same contract as test_properties.py: exit 0 with a result, or exit 2 with one
``labkit: error:`` line; never a traceback or another status."""

import shutil

from hypothesis import given, settings
from hypothesis import strategies as st

from ..conftest import ROOT
from .test_properties import CASES, assert_contract, run_cli, workdir  # noqa: F401 - fixture

SEED = str(ROOT / "data" / "trtllm_gen_decode_manifest_v4.json")
CUBIN = str(next((ROOT / "data" / "cubins").glob("fmha*.cubin")))
KERNEL = CUBIN.rsplit("/", 1)[-1].removesuffix(".cubin")  # the cubin's main kernel (its other is GetSmemSize)
# what a typo, a shell or a script puts where a count goes; then the counts each option takes
TYPED = ["0", "-1", "1", "2", "3", "7", "8", "16", "24", "32", "64", "128", "256", "100", "1000", "1k", "8k", "32k",
         "1.5k", "1e3", "3.5", "nan", "inf", "-inf", "", " ", "1,2", "1,,2", ",", "2147483648", "99999999999999999999",
         "0x10", "+5", " 7 ", "1_000", "\uff18", "\u0668", "ß", "--", "-5k", "8K", "8kb", "k"]


def _value(*good: str):
    return st.one_of(st.sampled_from(good), st.sampled_from(TYPED), st.integers(-3, 300).map(str))


def _options(**options) -> st.SearchStrategy[list[str]]:
    """Each ``--name value`` present or left out; hyphens in the option names as the CLI spells them."""
    return st.fixed_dictionaries({}, optional={k: v for k, v in options.items()}).map(
        lambda d: [a for k, v in d.items() for a in (f"--{k.replace('_', '-')}", v)])


def _property(name: str, argv: list[str]) -> int:
    rc, out, err = run_cli(argv)
    assert_contract(rc, out, err)
    CASES[f"{name}, exit {rc}"] = CASES.get(f"{name}, exit {rc}", 0) + 1
    return rc


@settings(max_examples=200)
@given(args=_options(batch=_value("1", "8", "1,8,64"), kv_len=_value("1k", "8k", "1k,8k"),
                     heads_q=_value("32", "24"), heads_kv=_value("8", "4"), head_dim=_value("128", "256"),
                     page_size=_value("16", "32", "64")))
def test_decode_plans_arguments(args):
    _property("decode plans", ["decode", "plans", *args])


@settings(max_examples=60)  # each new build is an NVRTC compile (cached after)
@given(batch=_value("1", "2", "8"), kv_len=_value("1k", "100", "8k"),
       args=_options(heads_q=_value("32", "24"), heads_kv=_value("8", "4"), head_dim=_value("128", "256"),
                     page_size=_value("16", "64"), max_q_len=_value("1", "3"), pool_pages=_value("64", "4"),
                     splits=_value("1", "2", "4"), layout=st.sampled_from(["plain", "interleaved", "", "Plain"])))
def test_decode_build_arguments(workdir, batch, kv_len, args):  # noqa: F811 - the fixture
    out = workdir / "build"
    shutil.rmtree(out, ignore_errors=True)
    rc = _property("decode build", ["decode", "build", "--batch", batch, "--kv-len", kv_len, *args, "--out", str(out)])
    if rc == 2:  # bad input writes nothing
        assert not out.exists() or not any(out.iterdir())


@settings(max_examples=200)
@given(ctas=_value("128", "16576"), args=_options(sms=_value("132", "114"), ctas_per_sm=_value("1", "2")))
def test_sched_waves_arguments(ctas, args):
    if "--ctas-per-sm" not in args:
        args = [*args, "--ctas-per-sm", "2"]
    _property("sched waves", ["sched", "waves", "--ctas", ctas, *args])


@settings(max_examples=200)
@given(shape=st.one_of(st.sampled_from(["1,37810,56,128", "1,1024,8,128", "1,1024,8", "1,0,8,128", "1,1024,8,100",
                                        "1,,8,128", "a,b,c,d", "1,1024,8,128,5"]), st.sampled_from(TYPED)),
       args=_options(q_len=_value("37760", "1"), kv_len=_value("37760", "1"), cta_q=_value("128", "64"),
                     cta_k=_value("64", "128"), warp_q=_value("32", "16"), pv_terms=_value("1", "2"),
                     schedule=st.sampled_from(["seed", "sm90", "SM90", ""])))
def test_sage2_schedule_arguments(shape, args):
    _property("sage2 schedule", ["sage2", "schedule", "--shape", shape, *args])


@settings(max_examples=150)
@given(kernel=st.sampled_from([KERNEL, KERNEL, KERNEL, KERNEL[:-1], "", "nope"]),
       args=_options(threads=_value("512", "128"), dynamic_smem=_value("144992", "0"), ctas=_value("304"),
                     sms=_value("132"), arch=st.sampled_from(["sm_100f", "sm_100", "sm_90", "sm90", "", "sm_100a"])))
def test_sched_occupancy_arguments(kernel, args):
    _property("sched occupancy", ["sched", "occupancy", CUBIN, "--kernel", kernel, *args])


@settings(max_examples=150)
@given(tokens=_value("2", "64"), seqs=_value("1", "2"))
def test_manifest_check_vars(tokens, seqs):
    _property("manifest check --var", ["manifest", "check", SEED, "--no-device", "--var", f"tokens={tokens}",
                                       "--var", f"seqs={seqs}"])


def test_zz_cli_case_counts(capsys):
    """Each property reached both sides of its contract: a generator whose every example was refused at parse
    would test nothing past the parser."""
    import pytest

    names = ["decode plans", "decode build", "sched waves", "sage2 schedule", "sched occupancy", "manifest check --var"]
    with capsys.disabled():
        print(f"\nhypothesis CLI cases: { {k: v for k, v in CASES.items() if k.rsplit(', exit ', 1)[0] in names} }")
    if not any(f"{n}, exit 0" in CASES or f"{n}, exit 2" in CASES for n in names):
        pytest.skip("the CLI property tests did not run in this session")
    assert [f"{n}, exit {rc}" for n in names for rc in (0, 2) if not CASES.get(f"{n}, exit {rc}")] == []
