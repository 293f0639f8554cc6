import json
import re
import subprocess
import sys

import pytest

from labkit import notebooks
from labkit.errors import LabkitError, ParameterError
from labkit.session import Session, recorded_runs

from ..conftest import ROOT


def test_parameters_are_read_from_the_parameters_cell():
    params = notebooks.parameters("00_device_and_timing")
    assert list(params) == ["source", "out_dir", "copy_mib", "launches", "seed_report"]
    assert params["copy_mib"]["default"] == "1024" and params["copy_mib"]["type"] == "int"
    assert "MiB" in params["copy_mib"]["help"]


def test_unknown_parameter_stops_before_any_cell(tmp_path):
    with pytest.raises(ParameterError) as err:
        notebooks.run("00", {"copy_mb": 5}, out_root=tmp_path)
    msg = str(err.value)
    assert "'copy_mb'" in msg and "copy_mib (default 1024)" in msg and 'source (default "auto")' in msg
    assert list(tmp_path.iterdir()) == []  # nothing executed, nothing left behind


def test_cli_unknown_parameter_exit_2_no_traceback():
    out = subprocess.run([sys.executable, "-m", "labkit", "nb", "run", "00", "-p", "nope", "1"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2
    assert "no parameter 'nope'" in out.stderr and "Traceback" not in out.stderr


def test_resolve_and_coerce():
    assert notebooks.resolve("00").name == "00_device_and_timing.py"
    with pytest.raises(LabkitError, match="not found"):
        notebooks.resolve("99")
    assert notebooks.coerce("3") == 3 and notebooks.coerce("[1, 2]") == [1, 2]
    assert notebooks.coerce("auto") == "auto" and notebooks.coerce("1e-3") == 1e-3


def test_session_recorded_mode_reads_the_latest_run(tmp_path, capsys):
    root = tmp_path / "runs"
    for stamp, value in (("20260101T000000Z", 1), ("20260201T000000Z", 2)):
        run = root / f"{stamp}-nbx"
        (run / "data").mkdir(parents=True)
        (run / "run.json").write_text(json.dumps({"provenance": {"device": {"name": "GPU X"}}}))
        (run / "data" / "probe.json").write_text(json.dumps({"value": value}))
    s = Session.start("nbx", source="recorded", out_dir=tmp_path / "out", runs_root=root)
    assert "RECORDED mode" in capsys.readouterr().out
    assert s.measure("probe", lambda: pytest.fail("must not run in recorded mode")) == {"value": 2}
    assert json.loads((tmp_path / "out" / "data" / "probe.json").read_text()) == {"value": 2}
    with pytest.raises(LabkitError, match="no missing.json"):
        s.measure("missing", lambda: None)


def test_session_without_recorded_runs_says_how_to_get_one(tmp_path):
    with pytest.raises(LabkitError, match="no recorded run of nby"):
        Session.start("nby", source="recorded", out_dir=tmp_path / "o", runs_root=tmp_path)


def test_recorded_runs_exist_for_every_notebook():
    """Each notebook renders on CPU from a real GPU run kept in data/runs/."""
    for name in notebooks.list_notebooks():
        runs = recorded_runs(name)
        assert runs, f"no recorded run of {name} in data/runs"
        prov = json.loads((runs[-1] / "run.json").read_text())["provenance"]
        assert prov["device"]["name"]
        assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?", prov["git_sha"]), prov["git_sha"]


OUTPUTS = {
    "00_device_and_timing": (("launch_overhead", "seed_phase_bars", "seed_tail_study"),
                             ("device.json", "copy_bandwidth.json", "launch_overhead.json", "copy_bandwidth.csv")),
    "01_decode_manifest": (("param_block",), ("device_run.json", "proof_run.json", "param_block.csv")),
    "02_sage2_phases": (("phase_bars_vs_seed", "tail_study"), ("report.json", "checks.csv", "scheduler.csv",
                                                               "tail_study.csv", "precision.csv")),
}


def test_every_notebook_has_expected_outputs_listed():
    assert set(OUTPUTS) == set(notebooks.list_notebooks())


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_notebook_executes_in_recorded_mode(name, tmp_path):
    if not recorded_runs(name):
        pytest.fail(f"no recorded run of {name} in data/runs")
    res = notebooks.run(name, {"source": "recorded"}, out_root=tmp_path, timeout_s=600)
    assert res.ok, res.error
    run = json.loads((res.run_dir / "run.json").read_text())
    assert run["session"]["mode"] == "recorded" and run["parameters"]["source"] == "recorded"
    nb = json.loads(res.notebook.read_text())
    first = next(c for c in nb["cells"] if c["cell_type"] == "code" and c.get("outputs"))
    assert "RECORDED mode" in "".join(first["outputs"][0].get("text", ""))
    figs, data = OUTPUTS[name]
    for fig in figs:
        assert (res.run_dir / "figs" / f"{fig}.png").stat().st_size > 1000
    for d in data:
        assert (res.run_dir / "data" / d).is_file()
