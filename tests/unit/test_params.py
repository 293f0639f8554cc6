"""Typed notebook parameters: parsed by their declared type, refused before any cell runs."""

import re
import shlex

import pytest

from labkit import cli, notebooks
from labkit.errors import LabkitError, ParameterError
from labkit.params import Choice, DecodeHeads, File, Int, IntDict, IntList, Sage2Shape, Text


def test_types_parse_command_line_strings():
    assert Int(1, 10).parse("3") == 3
    assert Text().parse("1,37810,56,64") == "1,37810,56,64"  # strings stay strings
    assert Sage2Shape().parse("1,37810,56,64") == [1, 37810, 56, 64]  # shapes parse as shapes
    assert Sage2Shape().parse("[1, 2, 3, 128]") == [1, 2, 3, 128]
    assert IntList(1).parse("37760,37761") == [37760, 37761]
    assert IntList(1).parse("1k, 8K,3") == [1024, 8192, 3]  # lengths as the decode commands take them
    assert IntDict(0).parse("tokens=2,seqs=4") == {"tokens": 2, "seqs": 4}
    assert IntDict(0).parse("{'tokens': 2}") == {"tokens": 2}
    assert Choice("a", "b").parse("b") == "b"
    assert File().parse("data/sage2_report_seed.json") == "data/sage2_report_seed.json"


def test_a_file_under_the_repo_is_kept_as_its_path_from_the_root(tmp_path):
    """Found by a notebook review: `-p manifest /repo/data/x.json` was refused in recorded mode, the recorded run's
    `data/x.json` being the same file as other text. A file outside the repository stays as given."""
    from labkit._env import repo_root

    seed = "data/trtllm_gen_decode_manifest_v4.json"
    for given in (str(repo_root() / seed), f"./{seed}", f"data/../{seed}"):
        assert File(reads="manifest").parse(given) == seed
    outside = tmp_path / "m.json"
    outside.write_bytes((repo_root() / seed).read_bytes())
    assert File(reads="manifest").parse(str(outside)) == str(outside)


INT_1_10 = "expected an integer in 1..10"
LIST = "expected a list of 1..64 different integers >= 1"
PAIRS = "expected name=integer pairs (name=1,other=2) >= 0"
FILE = "expected an existing file (absolute or from the repo root)"


# the whole line: it had been checked only to start with "= " and hold "expected " or "take", which a message that
# named neither the value nor the name given twice (IntDict's) still did
@pytest.mark.parametrize("kind, text, said", [
    (Int(1, 10), "abc", f"= 'abc': {INT_1_10}"), (Int(1, 10), "3.5", f"= '3.5': {INT_1_10}"),
    (Int(1, 10), "-5", f"= -5: {INT_1_10}"), (Int(1, 10), "11", f"= 11: {INT_1_10}"),
    (Int(1, 10), "", f"= '': {INT_1_10}"),
    (Sage2Shape(), "1,37810,56", "= '1,37810,56': shape '1,37810,56': expected B,N,H,D (four integers)"),
    (Sage2Shape(), "0,1,1,128", "= '0,1,1,128': batch 0: expected 1..65535"),
    (Sage2Shape(), "a,b,c,d", "= 'a,b,c,d': shape 'a,b,c,d': B 'a': expected an integer"),
    (Sage2Shape(), "1,2,3,4,5", "= '1,2,3,4,5': shape '1,2,3,4,5': expected B,N,H,D (four integers)"),
    (Sage2Shape(), "1,37810,56,100", "= '1,37810,56,100': head_dim 100: the Sage2 kernels take 64..128 in steps of 8 "
                                     "(64, 72, 80, 88, 96, 104, 112, 120, 128)"),
    (IntList(1), "", f"= '': {LIST}"), (IntList(1), "1,x", f"= '1,x': {LIST}"), (IntList(1), "0", f"= [0]: {LIST}"),
    (IntList(1), "8kk", f"= '8kk': {LIST}"), (IntList(1), "k,1", f"= 'k,1': {LIST}"),
    # the CLI's own integers: int() took these, --batch refuses them
    (IntList(1), "1_000", f"= '1_000': {LIST}"), (IntList(1), "\uff18", f"= '\uff18': {LIST}"),
    (IntDict(0), "tokens=two", f"= 'tokens=two': {PAIRS}"), (IntDict(0), "{1: 2}", f"= {{1: 2}}: {PAIRS}"),
    # found by a CLI review: the last one won, unseen
    (IntDict(0), "tokens=1,tokens=2", "= 'tokens=1,tokens=2': tokens given twice; expected each name once"),
    (Choice("auto", "live"), "bogus", "= 'bogus': expected one of auto, live"),
    (File(), "no/such/file.json", f"= 'no/such/file.json': no such file ({{root}}/no/such/file.json); {FILE}"),
    (File(), "data", f"= 'data': a directory ({{root}}/data); {FILE}"),
])
def test_types_refuse_with_the_value_and_what_was_expected(kind, text, said):
    from labkit._env import repo_root

    with pytest.raises(ParameterError) as err:
        kind.parse(text)
    assert str(err.value) == said.replace("{root}", str(repo_root()))


@pytest.mark.parametrize("text, expected", [
    ("32,7", "= [32, 7]: heads_q 32 is not a multiple of heads_kv 7"),
    ("8,32", "= [8, 32]: heads_q 8 is not a multiple of heads_kv 32"),
    ("64,2", "= [64, 2]: 32 query heads per KV head: expected 1..16"),
    ("32", "= [32]: expected query heads, KV heads"), ("0,8", "= [0, 8]: expected query heads, KV heads")])
def test_decode_heads_take_the_kernels_head_groups_only(text, expected):
    """A decode head group is checked by the decode geometry's own rule when the parameter is parsed: before any cell
    of notebook 03 or 04 runs (a bad group had failed in notebook 04's first cell, on the GPU)."""
    assert DecodeHeads().parse("24,4") == [24, 4] and DecodeHeads().check([32, 8]) == [32, 8]
    with pytest.raises(ParameterError) as err:
        DecodeHeads().parse(text)
    assert str(err.value).startswith(expected), str(err.value)


@pytest.mark.parametrize("value", [True, 3.0, "3", None, [3]])
def test_int_check_refuses_other_python_types(value):
    with pytest.raises(ParameterError):
        Int(0, 10).check(value)


@pytest.mark.parametrize("name", notebooks.list_notebooks())
def test_every_notebook_declares_typed_parameters_with_help(name):
    declared = notebooks.declared_parameters(name)
    assert {"source", "out_dir"} <= set(declared)
    for key, p in declared.items():
        assert p.help, f"{name}: parameter {key} has no help comment"
        assert p.type.check(p.default) == p.default
    assert not declared["out_dir"].measured


def test_malformed_parameters_cell_names_the_line(tmp_path):
    src = tmp_path / "99_bad.py"
    src.write_text('# %% tags=["parameters"]\nx: Int(1, 5) = 3  # ok\ny = 4\n')
    with pytest.raises(LabkitError, match=r"99_bad.py:3: a parameters cell holds only"):
        notebooks.declared_parameters(str(src))
    src.write_text('# %% tags=["parameters"]\nx: Int(1, 5) = 9  # out of range\n')
    with pytest.raises(LabkitError, match=r"99_bad.py:2: default of x = 9: expected an integer in 1..5"):
        notebooks.declared_parameters(str(src))
    # a bound naming a parameter that is not there had been a KeyError at run time (found by a review)
    for bound in ("shpe[1]", "shape[7]", "n[0]"):
        src.write_text(f'# %% tags=["parameters"]\nshape: IntList(1) = [1, 64]  # s\nn: Int(1) = 4  # n\n'
                       f'lens: IntList(1, at_most="{bound}") = [4]  # lengths\n')
        with pytest.raises(LabkitError, match=rf"99_bad.py:4: lens's at_most='{re.escape(bound)}': expected "):
            notebooks.declared_parameters(str(src))
    for manifest in ("mani", "n"):  # not declared above, or not a manifest file
        src.write_text(f'# %% tags=["parameters"]\nn: Int(1) = 4  # n\n'
                       f'vs: IntDict(1, vars_of="{manifest}") = {{}}  # vars\n'
                       f'mani: File(reads="manifest") = "data/trtllm_gen_decode_manifest_v4.json"  # m\n')
        with pytest.raises(LabkitError, match=rf"99_bad.py:3: vs's vars_of='{manifest}': expected a File"):
            notebooks.declared_parameters(str(src))
    src.write_text('# %% tags=["parameters"]\nx: Int(1, 5) = 3  # ok\ny: Intt(1, 5) = 3  # a typo\n')
    with pytest.raises(LabkitError, match=r"99_bad.py:3: cannot read the declaration of y: name 'Intt'"):
        notebooks.declared_parameters(str(src))
    src.write_text('# %% [markdown]\n# no parameters here\n# %%\nx = 3\n')  # the tag left off
    with pytest.raises(LabkitError, match=r"99_bad.py: no cell tagged parameters"):
        notebooks.declared_parameters(str(src))


BAD_OVERRIDES = [
    ("02", "iterations", "abc", "parameter iterations = 'abc': expected an integer in 1..10000"),
    ("02", "iterations", "3.5", "parameter iterations = '3.5': expected an integer"),
    ("00", "copy_mib", "-5", "parameter copy_mib = -5: expected an integer in 1..16384"),
    ("00", "copy_mib", "abc", "parameter copy_mib = 'abc'"),
    ("02", "source", "bogus", "parameter source = 'bogus': expected one of auto, live, recorded"),
    ("02", "shape", "1,37810,56", "expected B,N,H,D"),
    ("02", "shape", "1,37810,56,100", "head_dim 100: the Sage2 kernels take 64..128 in steps of 8"),
    ("02", "layout", "nhd", "expected one of NHD, HND"),
    ("02", "q_tail", "a,b", "parameter q_tail = 'a,b'"),
    ("01", "manifest_vars", "tokens=x", "parameter manifest_vars"),
    # vars against the manifest's own, before any cell (recorded mode had only said no run was recorded with them)
    ("01", "manifest_vars", "tokens=99", "parameter manifest_vars = tokens=99: expected vars that manifest = "
     "'data/trtllm_gen_decode_manifest_v4.json' declares, each in 1..its max; vars.tokens value 99 outside 1..max 64"),
    ("01", "manifest_vars", "foo=3", "vars.foo not declared; declared vars: tokens"),
    # text that is not a mapping or a list is named as given (a README walk-through saw "= None")
    ("01", "manifest_vars", "{tokens: 2}", "parameter manifest_vars = '{tokens: 2}': expected name=integer pairs"),
    ("02", "shape", "[1,2", "parameter shape = '[1,2': expected B,N,H,D"),
    ("01", "manifest", "missing.json", "expected a schema_version 4 launch manifest (absolute or from the repo root)"),
    ("03", "seed_manifest", "data/sage2_report_seed.json",
     "data/sage2_report_seed.json: missing key 'schema_version'"),
    ("02", "seed_report", "data/trtllm_gen_decode_manifest_v4.json", "expected a Sage2 report; "),
    ("00", "copy_mb", "5", "has no parameter 'copy_mb'"),
    # lengths against the shape's N, before any cell (a cell had failed there on a GPU; found by a review)
    ("02", "q_tail", "37760,99999", "parameter q_tail = [37760, 99999]: expected values at most shape[1] = 37810"),
    ("05", "q_tail", "40000", "parameter q_tail = [40000]: expected values at most shape[1] = 37810"),
    ("04", "gantt_q_len", "99999999", "parameter gantt_q_len = 99999999: expected a value at most shape[1] = 37810"),
]


@pytest.mark.parametrize("nb, key, value, message", BAD_OVERRIDES)
def test_cli_refuses_bad_overrides_before_any_cell(nb, key, value, message, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LABKIT_OUT", str(tmp_path / "runs"))
    assert cli.main(["nb", "run", nb, "-p", key, value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("labkit: error: ") and message in err[-1], err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())  # nothing ran


def test_defaults_past_a_smaller_shape_follow_it_and_a_length_given_past_it_is_refused(tmp_path, capsys):
    """Found by a CLI review: `-p shape 1,1024,8,128` alone was refused for the seed's tails of 37810 (and notebook
    04's gantt_q_len 640), where `sage2 profile --shape` takes the seed's kind of tails for any N."""
    follow = notebooks.follow_bounds
    assert follow("02", {"shape": [1, 1024, 8, 128]}) == (
        {"shape": [1, 1024, 8, 128], "q_tail": [896, 897, 1024], "kv_tail": [960, 961, 1024]},
        ["q_tail = 896,897,1024 (its default, 37760,37761,37810, lies past shape[1] = 1024)",
         "kv_tail = 960,961,1024 (its default, 37760,37761,37810, lies past shape[1] = 1024)"])
    # as many points as the default has (05's two); an Int takes the bound; a value given is never replaced
    assert follow("05", {"shape": [1, 1000, 8, 128], "kv_tail": [5]})[0] == {
        "shape": [1, 1000, 8, 128], "kv_tail": [5], "q_tail": [896, 897]}
    assert follow("04", {"shape": [1, 500, 8, 128]})[0] == {
        "shape": [1, 500, 8, 128], "q_lens": [384, 385, 500], "kv_lens": [448, 449, 500], "gantt_q_len": 500}
    assert follow("04", {"shape": [1, 37810, 8, 128]}) == ({"shape": [1, 37810, 8, 128]}, [])  # defaults fit
    assert follow("04", {}) == ({}, [])
    # the followed values are the tail study's own defaults for that N (sage2 profile --shape without --q-tail)
    from labkit.values import Shape
    from labkit.workloads.sage2.tails import tail_configs

    configs = tail_configs(Shape.parse("1,1024,8,128"))
    assert [q for s, q, _ in configs if s.startswith("q_")] == [896, 897, 1024]
    assert [k for s, _, k in configs if s.startswith("kv_")] == [960, 961, 1024]
    # a length given past the shape's N is still refused, before any cell
    assert cli.main(["nb", "run", "04", "-p", "shape", "1,1000,8,128", "-p", "kv_lens", "37760"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["labkit: error: labkit nb run: notebook 04_cta_scheduling: parameter kv_lens = [37760]: expected "
                   "values at most shape[1] = 1000"], err
    # nb script says what followed, and the script holds it
    assert cli.main(["nb", "script", "02", "-p", "shape", "1,1024,8,128", "--out", str(tmp_path / "02.py")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[:2] == ["02_sage2_phases: q_tail = 896,897,1024 (its default, 37760,37761,37810, lies past shape[1] = "
                       "1024)", "02_sage2_phases: kv_tail = 960,961,1024 (its default, 37760,37761,37810, lies past "
                                "shape[1] = 1024)"], err
    script = (tmp_path / "02.py").read_text()
    assert "\nq_tail = [896, 897, 1024]\n" in script and "\nkv_tail = [960, 961, 1024]\n" in script
    with pytest.raises(ValueError, match="tile=64.*with at_most"):
        IntList(1, tile=64)


def test_record_on_a_machine_without_a_gpu_is_refused_before_any_cell(tmp_path, monkeypatch, capsys):
    from labkit.cuda import gpu_available

    if gpu_available():
        pytest.skip("has a GPU: the run would be live")
    monkeypatch.setenv("LABKIT_OUT", str(tmp_path / "runs"))
    assert cli.main(["nb", "run", "03", "--record"]) == 1  # the machine, not the input
    assert "--record keeps real GPU runs only; 03_decode cannot run live here: no " in capsys.readouterr().err
    # a review: parameters no recorded run was measured with had exited 2, the missing recorded run said instead
    assert cli.main(["nb", "run", "03", "-p", "batch", "7", "--record"]) == 1
    assert "--record keeps real GPU runs only; 03_decode cannot run live here" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())  # nothing ran


def test_record_of_a_run_asked_to_be_recorded_is_bad_input_on_any_machine(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LABKIT_OUT", str(tmp_path / "runs"))
    assert cli.main(["nb", "run", "03", "-p", "source", "recorded", "--record"]) == 2
    assert capsys.readouterr().err == ("labkit: error: labkit nb run: --record keeps real GPU runs only; 03_decode is "
                                       "given source='recorded'\n")
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_api_overrides_are_checked_by_type_too(tmp_path):
    with pytest.raises(ParameterError, match="parameter iterations = 'abc'"):
        notebooks.run("02", {"iterations": "abc"}, out_root=tmp_path)
    with pytest.raises(ParameterError, match="has no parameter 'copy_mb'.*copy_mib \\(an integer in 1..16384"):
        notebooks.run("00", {"copy_mb": 5}, out_root=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_an_int_can_require_a_multiple():
    """Found by a CLI review: notebook 01's proof_cols said 'x 4 B must be a multiple of 16' and took 5."""
    cols = Int(4, 65536, multiple_of=4)
    assert cols.parse("1000") == 1000 and cols.describe() == "an integer in 4..65536, a multiple of 4"
    with pytest.raises(ParameterError, match="= 5: expected an integer in 4..65536, a multiple of 4"):
        cols.parse("5")
    with pytest.raises(ParameterError, match="= 1002: expected an integer in 4..65536, a multiple of 4"):
        cols.check(1002)


def test_a_length_can_be_bounded_by_another_parameter():
    lens = IntList(1, at_most="shape[1]")
    assert lens.describe() == "a list of 1..64 different integers >= 1, at most shape[1]"
    lens.check_beside([4, 64], {"shape": [1, 64, 8, 128]})
    with pytest.raises(ParameterError, match=r"= \[4, 65\]: expected values at most shape\[1\] = 64"):
        lens.check_beside([4, 65], {"shape": [1, 64, 8, 128]})
    one = Int(1, at_most="n")
    one.check_beside(3, {"n": 3})
    with pytest.raises(ParameterError, match="= 4: expected a value at most n = 3"):
        one.check_beside(4, {"n": 3})
    Int(1).check_beside(10**9, {})  # no bound: nothing to check


def test_a_session_started_in_jupyterlab_checks_the_parameters_against_each_other_too(tmp_path):
    """Found by a review: only `labkit nb run` checked them; a notebook run cell by cell in JupyterLab
    (Session.start) took q_lens past the shape's N and went on to pick live or recorded mode."""
    from labkit.session import Session

    params = {k: p.default for k, p in notebooks.parameters("04").items()}
    params.update(shape=[1, 100, 56, 128], source="recorded")
    # each default past N is named with the value labkit nb run would set (nb run's defaults follow the shape)
    with pytest.raises(ParameterError, match=r"parameter q_lens = \[37760, 37761, 37810\] \(the default; for this "
                                             r"shape: \[1, 100\]\): expected values at most shape\[1\] = 100; "
                                             r"parameter kv_lens = .* \(the default; for this shape: "
                                             r"\[64, 65, 100\]\)"):
        Session.start("04_cta_scheduling", out_dir=tmp_path / "o", parameters=params)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("name, key, text", [("02", "shape", "1,37810,56,128"), ("02", "q_tail", "37760,37810"),
                                              ("01", "manifest_vars", "tokens=2"),
                                              ("02", "shape", "[1, 37810, 56, 128]")])
def test_text_from_plain_papermill_is_refused_with_the_yaml_that_works(name, key, text):
    """Found by a review: ``papermill 02.ipynb o.ipynb -p shape 1,37810,56,128`` (papermill's -p passes text) was
    refused as "parameter shape = '1,37810,56,128': expected B,N,H,D, e.g. 1,37810,56,128", its own value."""
    import yaml

    with pytest.raises(ParameterError, match="is text, where the notebook's cells need") as info:
        notebooks.check_parameters(name, {key: text})
    (suggested,) = re.findall(r"papermill -y '(.+?)'\)", str(info.value))
    assert notebooks.check_parameters(name, yaml.safe_load(suggested)) == notebooks.parse_parameters(name, {key: text})
    # a docs review: the suggested command, copied into a shell, split "[1, 37810, 56, 128]" at its blanks
    (command,) = re.findall(r"run the notebook with (labkit nb run .+)$", str(info.value))
    assert shlex.split(command) == ["labkit", "nb", "run", name, "-p", key, text]


def test_a_swept_list_refuses_a_value_given_twice_and_a_fixed_pair_allows_it():
    """Found by a new-user review: -p batch 1,1 passed the check and would have failed in the sweep's cell, mid-run."""
    with pytest.raises(ParameterError, match=r"= \[1, 8, 1\]: 1 given twice; expected a list of 1..64 different"):
        IntList(1, 4096).parse("1,8,1")
    assert IntList(1, 4096, length=2).parse("8,8") == [8, 8]  # (batch, kv_len) of one call
    # p is a declaration and p.type its IntList (isinstance(p, IntList) had been false for all, so nothing was checked)
    swept = {(n, key): p.default for n in notebooks.list_notebooks() for key, p in notebooks.parameters(n).items()
             if isinstance(p.type, IntList) and p.type.distinct}
    assert ("03_decode", "batch") in swept and ("03_decode", "splits_at") not in swept, sorted(swept)
    for (name, key), default in swept.items():
        assert len(set(default)) == len(default), (name, key)


def test_names_take_ncu_section_and_metric_names_only():
    """Found by a new-user review: notebook 05's sections and metrics were free strings that reached ncu's command
    line unchecked ('not a metric;rm' included)."""
    from labkit.params import Names

    assert Names().parse("SpeedOfLight,LaunchStats") == "SpeedOfLight,LaunchStats"
    # a notebook review: "A, B", as a sentence lists them, was refused for its blank
    assert Names().parse(" SpeedOfLight, LaunchStats ") == "SpeedOfLight,LaunchStats"
    assert Names(allow_empty=True).parse("") == "" and Names(allow_empty=True).parse(
        "dram__bytes_read.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active").count(",") == 1
    for bad, said in (("not a metric;rm", "'not a metric;rm' is not a name"), ("", "'' is not a name"),
                      ("A,,B", "'' is not a name"), ("Occupancy,Occupancy", "Occupancy given twice")):
        with pytest.raises(ParameterError, match=re.escape(said)):
            Names().parse(bad)
    assert isinstance(notebooks.parameters("05")["metrics"].type, Names)


def test_a_number_bounded_on_one_side_names_that_bound_alone():
    """``None``: unbounded; a one-sided range is said as one bound, not as 'in 1..None'."""
    assert Int(1).describe() == "an integer >= 1" and Int(hi=5).describe() == "an integer <= 5"
    assert Int().describe() == "an integer"
    assert Int(hi=5).parse("-7") == -7
    with pytest.raises(ParameterError, match=r"^= 6: expected an integer <= 5$"):
        Int(hi=5).parse("6")


def test_declarations_are_checked_where_declared():
    """A multiple of 0 would divide by zero at the first value checked; a format with no reader would check nothing;
    a choice may cover every option, itself too."""
    for bad in (0, -4, True):
        with pytest.raises(ValueError, match=re.escape(f"Int(multiple_of={bad!r}): expected an integer >= 1")):
            Int(1, 10, multiple_of=bad)
    with pytest.raises(ValueError, match=r"File\(reads='csv'\): expected one of manifest, sage2_report"):
        File(reads="csv")
    assert Choice("a", "both", covers={"both": ("a", "both")}).answers("both", "a")  # every option, itself too


@pytest.mark.parametrize("kind, value, expected", [
    (Text(), 3, "= 3: expected a string"),
    (File(), None, "= None: expected an existing file (absolute or from the repo root)"),
    (File(), "", "= '': expected an existing file (absolute or from the repo root)"),
    (IntList(1), 5, "= 5: expected a list of 1..64 different integers >= 1"),
    (IntList(1), [], "= []: expected a list of 1..64 different integers >= 1"),
    (IntList(1, max_items=2), [1, 2, 3], "= [1, 2, 3]: expected a list of 1..2 different integers >= 1"),
    # shown as -p takes them, not as a dict's repr (a review)
    (IntDict(0), {"tokens": -1}, "= tokens=-1: expected name=integer pairs (name=1,other=2) >= 0"),
    (IntDict(0), {"tokens": "2"}, "= tokens='2': expected name=integer pairs"),
])
def test_python_values_of_the_wrong_kind_are_refused_by_check(kind, value, expected):
    """``check`` takes Python values (the API, papermill's yaml): a value of the wrong kind is one ParameterError
    naming it, not a TypeError or a value taken."""
    with pytest.raises(ParameterError) as err:
        kind.check(value)
    assert str(err.value).startswith(expected), str(err.value)


def test_an_int_list_takes_a_python_list_on_the_command_line():
    assert IntList(1).parse("[1, 2, 3]") == [1, 2, 3] and IntList(1).parse(" [4,5] ") == [4, 5]
    assert IntList(1, length=2).parse("[8, 8]") == [8, 8]


def test_a_missing_file_is_said_to_be_missing_and_where_it_was_looked_for(tmp_path):
    """A relative path is looked for under the repository root, and the error says where; an absolute one as given."""
    from labkit._env import repo_root

    with pytest.raises(ParameterError) as err:
        File().check("no/such/file.json")
    where = repo_root() / "no/such/file.json"
    assert str(err.value) == (f"= 'no/such/file.json': no such file ({where}); expected an existing file (absolute or "
                              "from the repo root)")
    with pytest.raises(ParameterError) as err:
        File().check(str(tmp_path / "gone.json"))
    assert str(err.value) == (f"= {str(tmp_path / 'gone.json')!r}: no such file; expected an existing file (absolute "
                              "or from the repo root)")
    with pytest.raises(ParameterError, match=re.escape(f"= 'data': a directory ({repo_root() / 'data'}); expected")):
        File().check("data")
    import os

    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ParameterError, match=re.escape(f"= {str(tmp_path / 'pipe')!r}: not a regular file; expected")):
        File().check(str(tmp_path / "pipe"))


def test_list_and_map_types_say_what_they_take():
    """A fixed-length list is a tuple (batch, kv_len) whose items may be equal: its count, not 'different'."""
    assert IntList(1, 4096, length=2).describe() == "a list of 2 integers in 1..4096"
    assert IntList(1, max_items=2).describe() == "a list of 1..2 different integers >= 1"
    assert IntList(1, max_items=2).check([1, 2]) == [1, 2]  # max_items items: the most it takes
    assert IntDict(1).describe() == "name=integer pairs (name=1,other=2) >= 1"
    assert IntDict(1, 64, vars_of="manifest").describe() == ("name=integer pairs (name=1,other=2) in 1..64, vars the "
                                                             "manifest declares")


@pytest.mark.parametrize("text, expected", [("1,1", [1, 1]), ("256,16", [256, 16]), ("256,256", [256, 256])])
def test_decode_heads_take_1_to_256_heads(text, expected):
    assert DecodeHeads().parse(text) == expected


def test_decode_heads_past_256_are_refused_by_their_range():
    with pytest.raises(ParameterError, match=re.escape("= [257, 257]: expected query heads, KV heads: 2 integers in "
                                                       "1..256")):
        DecodeHeads().parse("257,257")


def test_a_shape_given_as_a_python_list_is_checked_as_the_cli_checks_it():
    assert Sage2Shape().check((1, 37810, 56, 128)) == [1, 37810, 56, 128]
    with pytest.raises(ParameterError, match=re.escape("= [1, 37810, 56, 100]: head_dim 100: the Sage2 kernels take "
                                                       "64..128 in steps of 8")):
        Sage2Shape().check([1, 37810, 56, 100])
    with pytest.raises(ParameterError, match=re.escape("= '1,37810,56,128': expected B,N,H,D")):
        Sage2Shape().check("1,37810,56,128")


def test_a_long_value_is_named_cut_at_60_characters():
    with pytest.raises(ParameterError) as err:
        Int(1, 10).check("x" * 100)
    # repr: a quote and 100 x's and a quote (102 characters); cut to its first 57 and '...'
    assert str(err.value) == "= '" + "x" * 56 + "...: expected an integer in 1..10"


def test_a_value_answers_for_itself_only_and_is_measured_unless_declared_not():
    """Recorded mode: a run recorded with a value answers that value (a Choice's ``covers`` aside)."""
    assert Int(1).answers(3, 3) and not Int(1).answers(3, 4) and not Text().answers("a", "b")
    assert Int(1).measured and Text().measured and not Int(1, measured=False).measured
    # a file too: a recorded run that checked another manifest does not answer this one
    assert File().measured and notebooks.declared_parameters("01")["manifest"].measured


def test_vars_the_manifest_declares_pass_the_check_beside_it():
    manifest = "data/trtllm_gen_decode_manifest_v4.json"  # declares tokens, 1..64
    IntDict(1, vars_of="manifest").check_beside({"tokens": 64}, {"manifest": manifest})
    IntDict(1).check_beside({"anything": 3}, {})  # no manifest named: nothing to check


def test_a_numeric_choice_takes_the_int_plain_papermill_gives_it():
    """A fresh-user review: `papermill 03_decode.ipynb out.ipynb -p head_dim 128` (or -y 'head_dim: 128') was refused
    with "head_dim = 128: expected one of 128, 256"; the int of a numeric option is that option."""
    from labkit import notebooks
    from labkit.errors import ParameterError

    assert Choice("128", "256").check(128) == "128" and Choice("16", "32", "64").check(64) == "64"
    assert notebooks.check_parameters("03_decode", {"head_dim": 256, "page_size": 16}) == {"head_dim": "256",
                                                                                            "page_size": "16"}
    for bad in (100, True, 128.0, "0128"):
        with pytest.raises(ParameterError, match="expected one of 128, 256"):
            Choice("128", "256").check(bad)
