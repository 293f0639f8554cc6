"""Bad command lines: each is refused with exit 2 and one line naming the problem, before any GPU
work (these run on CPU machines, so a refusal that only came from the missing GPU would show
'needs a CUDA GPU' instead of the expected text)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from labkit import cli

from ..conftest import ROOT

SEED = str(ROOT / "data" / "trtllm_gen_decode_manifest_v4.json")
REPORT = str(ROOT / "data" / "sage2_report_seed.json")
SEED_CUBIN = str(next((ROOT / "data" / "cubins").glob("*.cubin")))
S = ["sage2", "schedule", "--shape", "1,37810,56,128"]

# (argv, text the one error line must contain); {tmp} is a fresh directory
BAD = [
    # found by a new-user review: an unknown option was blamed on `labkit` itself, not the command that took it
    (["manifest", "check", "data/trtllm_gen_decode_manifest_v4.json", "--bogus"],
     "labkit manifest check: unrecognized arguments: --bogus (labkit manifest check -h lists what it takes)"),
    (["report", "diff", "a", "b", "c"], "labkit report diff: unrecognized arguments: c"),
    # a docs review: a third path was told it "starts with -" and to go after --
    (["report", "diff", "a.json", "b.json", "runs/c.json"], "labkit report diff: unrecognized arguments: runs/c.json "
                                                            "(labkit report diff -h lists what it takes)"),
    # found by a CLI review: a file named -x.json was an unknown option, with no word of how to name it
    (["report", "show", "-x.json"], "labkit report show: unrecognized arguments: -x.json (a path that starts with - "
                                    "goes after --, or as ./-x.json); the following arguments are required: file"),
    (["report", "diff", "a.json", "-runs/b"], "unrecognized arguments: -runs/b (a path that starts with - goes after "
                                              "--, or as ./-runs/b)"),
    (["report", "show", "-q"], "labkit report show: unrecognized arguments: -q (labkit report show -h lists what"),
    (["--bogus", "device"], "labkit: error: unrecognized arguments: --bogus (labkit -h lists what it takes)"),
    # found by a CLI review: 'labkit: error: labkit: ...' said it twice, `labkit --bogus` did not name --bogus, and
    # argparse's own names for the command ('argument cmd:', 'argument sub:') reached the user
    (["--bogus"], "labkit: error: unrecognized arguments: --bogus; expected a command: device, report,"),
    (["decode", "bogus"], "labkit: error: labkit decode: unknown command 'bogus' (choose from 'build',"),
    (["decode", "--bogus"], "labkit: error: labkit decode: unrecognized arguments: --bogus; expected a command: build"),
    (["--bogus", "decode"], "labkit: error: labkit decode: unrecognized arguments: --bogus; expected a command: build"),
    # found by a review: argparse took `--no-devic` for --no-device and `--batc` for --batch; a script written so would
    # break, or change meaning, once another option began the same way. An abbreviation is refused naming the option
    (["decode", "build", "--batc", "2", "--kv-len", "1k", "--out", "{tmp}/d"],
     "labkit: error: labkit decode build: unrecognized arguments: --batc (did you mean --batch?)"),
    (["decode", "build", "--batch", "2", "--kv-l", "1k", "--out", "{tmp}/d", "--spl=3"],
     "unrecognized arguments: --kv-l --spl=3 (did you mean --kv-len or --splits?)"),
    (["decode", "build", "--batch", "2", "--kvlen", "1k", "--out", "{tmp}/d"],  # a typo: the option it is close to
     "unrecognized arguments: --kvlen (did you mean --kv-len?)"),
    (["ncu", "run", "--outp", "x", "--", "prog", "--flag"],  # a program's options after -- are not labkit's
     "labkit ncu run: unrecognized arguments: --outp (did you mean --out?)\n"),
    (["decode", "build", "--batch", "2", "--kv-l", "1k"], "unrecognized arguments: --kv-l (did you mean --kv-len?); "
                                                          "the following arguments are required: --out"),
    (["device", "--ind=0"], "labkit device: unrecognized arguments: --ind=0 (did you mean --index?)"),
    (["--vers"], "labkit: error: unrecognized arguments: --vers (did you mean --version?); "
                 "expected a command: device,"),
    (["sage2", "profile", "--shape", "1,100,1,128", "--shape", "1,200,1,128", "--out", "{tmp}/r.json"],
     "--shape: given twice (1,100,1,128, then 1,200,1,128)"),  # as typed, not Shape(batch=1, ...)
    # found by a new-user review: the last of two values was taken with no word (-p and --var refused repeats)
    (["decode", "build", "--batch", "8", "--batch", "16", "--kv-len", "1024", "--out", "{tmp}/d"],
     "labkit decode build: --batch: given twice (8, then 16): give it once"),
    (["device", "--index=1", "--index=2"], "--index: given twice (1, then 2)"),
    (S + ["--cta-q", "0"], "--cta-q 0"),
    (S + ["--cta-k", "0"], "--cta-k 0"),
    (S + ["--warp-q", "0"], "--warp-q 0"),
    (S + ["--cta-q", "-128"], "--cta-q -128"),
    (S + ["--cta-q", "100"], "unsupported schedule 100/64/32/1: cta_q 100 is not a multiple of warp_q 32"),
    # each case breaks its rule alone (a rule of warp_q % 8 passed every test), and the line names that rule
    (S + ["--cta-k", "96"], "unsupported schedule 128/96/32/1: cta_k 96 is not a multiple of 64"),
    # a CLI review: at head_dim 64 the line named head_dim 128 and did not say why
    (["sage2", "schedule", "--shape", "1,1000,8,64", "--cta-k", "512"],
     "262144 B of shared memory at head_dim 128, above the 232448 B a CTA can have (sm_90 / sm_100); a schedule must "
     "fit the largest head_dim the kernels take, whatever the shape's"),
    (S + ["--cta-q", "64", "--warp-q", "8"], "unsupported schedule 64/64/8/1: warp_q 8 is not a multiple of 16"),
    (S + ["--cta-q", "1024", "--warp-q", "16"], "cta_q 1024 / warp_q 16 is 64 warps per CTA, above 8"),
    (S + ["--cta-k", "1024"], "shared memory"),
    (S + ["--q-len", "0"], "--q-len 0"),
    (S + ["--kv-len", "0"], "--kv-len 0"),
    (S + ["--q-len", "37811"], "--q-len 37811: expected 1..37810"),
    (S + ["--kv-len", "99999999"], "expected 1..37810"),
    (S + ["--q-len", "1.5"], "expected an integer"),
    (S + ["--pv-terms", "3"], "invalid choice"),
    (S + ["--schedule", "sm90", "--cta-q", "64"], "fixed tiles (192 q x 128 keys per CTA"),
    # found by a CLI review: a tile given at the seed's own value was ignored with sm90 (exit 0, cta_q 192)
    (S + ["--schedule", "sm90", "--cta-q", "128", "--pv-terms", "1"], "per warp): drop --cta-q"),
    # found by a new-user review: sm90's own one term, given, was refused as a "fixed tile"
    (S + ["--schedule", "sm90", "--pv-terms", "2"], "--schedule sm90 builds one P V term: drop --pv-terms 2"),
    # the CTA_Q/CTA_K/WARP_Q/PV_TERMS form labkit bench takes, and its tiles given twice (a fresh-user review)
    (S + ["--schedule", "128/64/32/2", "--warp-q", "16"], "--schedule 128/64/32/2 gives the tiles already: drop "
                                                          "--warp-q"),
    (S + ["--schedule", "128/96/32/1"], "unsupported schedule 128/96/32/1: cta_k 96 is not a multiple of 64"),
    (S + ["--schedule", "128/64"], "expected seed, sm90 or CTA_Q/CTA_K/WARP_Q/PV_TERMS (4 integers)"),
    (["nb", "params", ""], "notebook '': not found; available: 00_device_and_timing"),  # was "ambiguous"
    (["sage2", "precision", "--v-bias", "1e400", "--out", "{tmp}/p.json"],
     "--v-bias '1e400': expected a finite number (it overflows a double)"),  # was "--v-bias inf"
    (["sched", "timeline", SEED], "missing key 'timeline_version': this is a launch manifest (labkit manifest "
                                   "check), not a per-CTA timeline"),  # a CLI review: it named only the key
    (["nb", "params", "0"], "notebook '0': ambiguous, the start of 00_device_and_timing, 01_decode_manifest, "
                            "02_sage2_phases, 03_decode, 04_cta_scheduling, 05_ncu_correlation; give more of the name"),
    # found by a CLI review: "expected an integer" for a number too large to be one
    (["device", "--index", "99999999999999999999"], "20 digits, too large (expected 0..1023)"),
    # found by a CLI review: unchecked, each was "no row of this call"
    (["report", "spread", "data/runs", "--point", "64x8192", "--heads", "32/0"],
     "--heads '32/0': 32 query heads on 0 KV heads; expected at least 1 of each"),
    (["report", "spread", "data/runs", "--point", "64x8192", "--head-dim", "100"], "invalid choice: 100"),
    # a value that starts with a minus: its own check, not argparse's "expected one argument"
    (["sage2", "schedule", "--shape", "-1,37810,56,128"], "--shape: batch -1: expected 1..65535"),
    (["sage2", "schedule", "--shape", "-1"], "--shape: shape '-1'"),
    (["sage2", "schedule", "--shape", "1,100,1,7"], "head_dim 7"),
    (["sage2", "schedule", "--shape", "1,100,1,100"], "head_dim 100"),
    (["sage2", "schedule", "--shape", "1,100,1,127"], "head_dim 127"),
    (["sage2", "schedule", "--shape", "1,100,1,256"], "head_dim 256"),
    (["sage2", "schedule", "--shape", "1,100,1,1000000"], "head_dim 1000000"),
    (["sage2", "schedule", "--shape", "1,100,1"], "four integers"),
    (["sage2", "schedule", "--shape", "0,100,1,128"], "batch 0"),
    (["sage2", "schedule", "--shape", "1,0,1,128"], "sequence length N 0"),
    (["sage2", "schedule", "--shape", "1,100,70000,128"], "heads 70000"),
    (["sage2", "schedule", "--shape", "1,\uff11\uff10\uff10,1,128"], "expected an integer"),
    (["sage2", "schedule", "--shape", "1,1_000,1,128"], "expected an integer"),
    (["sage2", "schedule"], "required: --shape"),
    (["sage2", "precision", "--schedules", "128/64/0/1"], "warp_q 0"),
    (["sage2", "precision", "--schedules", "128/64/32"], "4 integers"),
    (["sage2", "precision", "--schedules", "128/64/32/1,"], "4 integers"),
    (["sage2", "precision", "--k-bias", "nan"], "finite"),
    (["sage2", "precision", "--k-bias", "1e308"], "--k-bias 1e308: expected -10000..10000"),  # had said k_bias
    (["sage2", "precision", "--iterations", "0"], "--iterations 0"),
    (["sage2", "profile", "--q-tail", "a,b", "--out", "{tmp}/r.json"], "--q-tail 'a'"),
    (["sage2", "profile", "--q-tail", "0", "--out", "{tmp}/r.json"], "--q-tail 0"),
    # a list that names one item twice: refused before the GPU (the report refused it only after the run; a review)
    (["sage2", "profile", "--kv-tail", "5,5", "--out", "{tmp}/r.json"], "--kv-tail: 5 given twice"),
    (["sage2", "precision", "--schedules", "seed,sm90,seed"], "--schedules: 128/64/32/1 given twice"),
    (["sched", "launches", "--shape", "1,100,2,128", "--shape", "1,100,2,128", "--out", "{tmp}/l.json"],
     "--shape 1,100,2,128 given twice"),
    (["sage2", "profile", "--kv-tail", "99999", "--shape", "1,64,1,64", "--out", "{tmp}/r.json"], "expected 1..64"),
    (["sage2", "profile", "--q-tail", "", "--out", "{tmp}/r.json"], "--q-tail ''"),
    (["sage2", "profile", "--out", "{tmp}"], "is a directory"),
    (["sage2", "profile", "--out", ""], "sage2 profile: --out: an empty file name\n"),  # once (a review: twice)
    (["decode", "build", "--batch", "8", "--kv-len", "8k", "--out", ""],
     "decode build: --out: an empty directory name\n"),
    (["sage2", "profile", "--out", "{tmp}/r.json", "--warmup", "-1"], "--warmup -1"),
    (["sage2", "profile", "--out", "{tmp}/r.json", "--seed", "-5"], "--seed -5"),
    (["sage2", "profile"], "required: --out"),
    (["sage2", "profile", "--out", "{tmp}/r.json", "--warmup", "1000001"], "--warmup 1000001: expected 0..1000000"),
    (["sage2", "profile", "--out", "{tmp}/r.json", "--iterations", "1000001"],
     "--iterations 1000001: expected 1..1000000"),
    (["sage2", "precision", "--iterations", "1000001"], "--iterations 1000001: expected 1..1000000"),
    (["manifest", "pack", SEED, "--out", SEED + "/x.bin", "--var", "tokens=2"], "is not a directory"),
    (["manifest", "pack", SEED, "--out", "{tmp}"], "is a directory"),
    (["manifest", "pack", str(ROOT / "tests" / "data" / "manifests" / "wrong_sha256.json"), "--out", "{tmp}/x.bin"],
     "wrong_sha256.json: 1 error(s), nothing written: error: modules."),  # pack launches nothing (found by a review)
    (["manifest", "pack", SEED, "--out", ""], "empty file name"),
    (["manifest", "pack", SEED, "--var", "seqs=99999999999", "--out", "{tmp}/x.bin"], "value 99999999999"),
    (["manifest", "check", SEED, "--var", "seqs=99999999999", "--no-device"], "cannot run: vars.seqs"),
    (["manifest", "check", SEED, "--var", "seqs"], "NAME=INTEGER"),
    (["manifest", "check", SEED, "--var", "seqs=x"], "expected an integer"),
    (["manifest", "check", SEED, "--var", "seqs=0"], "--var seqs 0"),
    (["manifest", "check", SEED, "--var", "seqs=1", "--var", "seqs=2"],
     # the whole line: "given twice" alone named no --var
     "labkit: error: labkit manifest check: --var seqs given twice (1 and 2)\n"),
    (["manifest", "check", SEED, "--program", "", "--no-device"], "cannot run"),
    # the one line names the first error (it had said only "the report above lists them", on stdout; a CLI review)
    (["manifest", "check", SEED, "--program", "nosuch", "--no-device"],
     "1 error(s): " + SEED + " cannot run: programs: no program 'nosuch' (have decode)"),
    (["manifest", "check", "{tmp}", "--no-device"], "is a directory"),
    (["manifest", "check", "{tmp}/nope.json", "--no-device"], "No such file"),
    (["manifest", "check", "/dev/zero", "--no-device"], "character device"),
    (["manifest", "check", SEED, "--cubin-dir", "{tmp}/nope"], "/nope': does not exist"),
    (["manifest", "check", SEED, "--cubin-dir", REPORT], "not a directory"),
    (["manifest", "run", SEED, "--iters", "0"], "--iters 0"),
    (["manifest", "run", SEED, "--mode", "warm"], "invalid choice"),
    (["manifest", "run", SEED, "--json", "{tmp}"], "is a directory"),
    (["manifest", "run", SEED, "--var", "seqs=3"], "value 3 outside 1..max 2"),  # checked before the GPU is asked
    (["bench", "--iterations", "0"], "--iterations 0"),
    (["bench", "--shape", "1,2,3"], "four integers"),
    (["bench", "--out", "{tmp}"], "is a directory"),
    (["device", "--index", "-1"], "--index -1"),
    (["report", "show", "{tmp}/nope.json"], "No such file"),
    (["report", "show", "/dev/zero"], "character device"),
    (["report", "diff", REPORT], "required: b"),
    (["report", "show", SEED], "not a labkit report: a Sage2 report (labkit sage2 profile --out) has 'metadata'"),
    (["decode", "build", "--batch", "1", "--kv-len", "64", "--splits", "300", "--out", "{tmp}"], "expected 1..256"),
    (["decode", "build", "--batch", "8", "--kv-len", "4096", "--out", REPORT], "is a file; expected a directory"),
    (["decode", "from-manifest", SEED, "--out", REPORT], "is a file; expected a directory"),
    (["decode", "build", "--batch", "1", "--kv-len", "64", "--out", "/proc/labkit-x"],
     "cannot create a file in '/proc'"),
    # found by a CLI review: an existing directory that cannot be written was found after the compile
    (["decode", "build", "--batch", "1", "--kv-len", "64", "--out", "/proc"],
     "--out '/proc': cannot create a file in '/proc'"),
    (["decode", "from-manifest", SEED, "--out", "/proc"], "--out '/proc': cannot create a file in '/proc'"),
    (["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=1", "--out", REPORT + "/x"], "is not a directory"),
    # found by a CLI review: each passed the up-front check and failed at every point on a GPU (or skipped them all)
    (["sweep", "run", "--workload", "decode.point", "--grid", "batch=1", "--grid", "kv_len=1024", "--grid",
      "iterations=0", "--out", "{tmp}/s"], "iterations 0: expected 1..100000"),
    (["sweep", "run", "--workload", "decode.point", "--grid", "batch=1", "--grid", "kv_len=1024", "--grid",
      "max_kv_bytes=-1", "--out", "{tmp}/s"], "max_kv_bytes -1: expected a number of bytes above 0"),
    (["sweep", "run", "--workload", "decode.timeline", "--grid", "batch=1", "--grid", "kv_len=1024", "--grid",
      "launches=0", "--out", "{tmp}/s"], "launches 0: expected 1..100"),
    (["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=1", "--workers", "4", "--out", "{tmp}/s"],
     "--workers 4: the local executor runs one point at a time; use --executor processes or dask"),
    (["sage2", "precision", "--k-bias", "1e300"],
     "--k-bias 1e300: expected -10000..10000 (inputs stay finite in bf16)"),
    (["sweep", "status", "{tmp}/nope"], "/nope: no such directory"),
    (["sched", "occupancy", "{tmp}/nope.cubin"], "cannot read the cubin (No such file"),
    (["sched", "occupancy", "{tmp}"], "is a directory; expected the cubin"),
    (["sched", "occupancy", REPORT], "sage2_report_seed.json: not a 64-bit little-endian ELF file"),
    (["sched", "occupancy", SEED_CUBIN, "--arch", "banana"], "arch 'banana': labkit knows the limits of sm_80, sm_89"),
    (["decode", "build", "--batch", "1", "--kv-len", "2147483600", "--out", "{tmp}/b"],
     "--kv-len 2147483600: expected 1..2147483392"),  # the kernels' stage count would wrap (kernel review)
    (["decode", "build", "--batch", "8", "--kv-len", "4096", "--max-q-len", "0", "--out", "{tmp}/b"],
     "--max-q-len 0: expected 1..8"),
    # the options without a bound of their own stop at int32's, as the kernel's parameters do
    (["decode", "build", "--batch", "2147483648", "--kv-len", "64", "--out", "{tmp}/b"],
     "--batch 2147483648: expected 1..2147483647"),
    (["decode", "build", "--batch", "8", "--kv-len", "64", "--pool-pages", "2147483648", "--out", "{tmp}/b"],
     "--pool-pages 2147483648: expected 1..2147483647"),
    (["decode", "from-manifest", SEED, "--splits", "0", "--out", "{tmp}/b"], "--splits 0: expected 1..256"),
    (["decode", "from-manifest", SEED], "the following arguments are required: --out"),
    (["decode", "bench", "--sweep-tails"], "--sweep-tails records per-CTA timelines saved beside --out FILE"),
    (["decode", "bench", "--variant", "mma", "--variant", "fma", "--variant", "mma"],
     "--variant mma given twice: each kernel variant is timed once"),
    (["nosuch"], "unknown command 'nosuch'"),
    ([], "labkit: error: expected a command: device, report, nb, lab, bench, manifest, sage2, decode, sched, ncu, "
         "sweep (labkit -h says what each does)"),
    (["report"], "labkit report: expected a command: show, diff, map, spread (labkit report -h says what each does)"),
    (["report", "spread", "data/runs"], "the following arguments are required: --point"),
    # a CLI review: these ended in 'no row of this call' after reading every report
    (["report", "spread", "data/runs", "--point", "64x8k", "--heads", "32/8 page 17"], "page 17; expected page 16, 32"),
    (["report", "spread", "data/runs", "--point", "64x8k", "--heads", "33/8"],
     "33 query heads on 8 KV heads; expected a multiple of the KV heads"),
    (["report", "spread", "data/runs", "--point", "64x8192", "--out", "{tmp}/no/such/dir/f", "--head-dim", "0"],
     "--head-dim: invalid choice: 0 (choose from 128, 256)"),
    # found by a CLI review: each was dropped silently, refused only after the GPU check, or written after the run
    (["sage2", "profile", "--out", "{tmp}/r.json", "--schedule", "sm90", "--pv-terms", "2"],
     "--schedule sm90 builds one P V term"),
    (["decode", "compare", "--batch", "8", "--kv-len", "8192", "--build", "warps=3"],
     "build 'warps=3' at batch 8 x 8192 d128: warps 3"),
    (["decode", "compare", "--batch", "8", "--kv-len", "8192", "--build", "splits=200"],
     "splits 200: expected 1..128 (at most one per page of the 128, and at most 256)"),
    (["decode", "build", "--batch", "8", "--kv-len", "8192", "--pool-pages", "2000000000", "--out", "{tmp}/o"],
     "a pool of 2000000000 pages is a 262.1 TB buffer; at most 1.1 TB"),
    (["sched", "overhead", "--shape", "1,1024,8,128", "--shape", "1,2048,8,128"], "overhead times one shape; 2 given"),
    # an SM holds at most 32 CTAs: 33 had been taken by argparse and gave waves of an impossible GPU
    (["sched", "waves", "--ctas", "100", "--ctas-per-sm", "33"], "--ctas-per-sm 33: expected 1..32"),
    (["sched", "launches"], "labkit sched launches: the following arguments are required: --out"),
    (["sched"], "labkit sched: expected a command: occupancy, waves, timeline, launches, crosscheck, overhead"),
    (["ncu", "run", "--out", "/proc/labkit-x", "--", "true"],
     "--out '/proc/labkit-x': cannot create a file in '/proc'"),
    (["ncu", "run", "--out", "{tmp}", "--", "true"], "is a directory; expected a file name"),
    # found by a review: ncu's log goes beside the report as NAME.log, which replaced an unrelated bench.log
    (["ncu", "run", "--out", "{tmp}/bench.json", "--", "true"],
     "/bench.json': expected NAME or NAME.ncu-rep (ncu writes NAME.ncu-rep and NAME.log)"),
    (["ncu", "run", "--out", "{tmp}/r", "--source-folder", "{tmp}/nope", "--", "true"], "does not exist"),
    (["bench", "--out", "/proc/labkit-x.json"], "cannot create a file in '/proc'"),
    (["nb", "run", "05", "-p", "source", "recorded", "-p", "recorded_root", "{tmp}/nope"],
     "/nope: no such directory"),  # not a FAILED run that then says it showed data/runs
    (["nb", "run", "03", "-p", "batch", "8", "-p", "batch", "64"], "-p batch given twice ('8', then '64')"),
    (["nb", "run", "04", "-p", "decode_heads", "32,7"], "decode_heads = [32, 7]: heads_q 32 is not a multiple of"),
]


def _fill(argv, tmp):
    return [a.replace("{tmp}", str(tmp)) for a in argv]


def test_a_report_path_with_another_suffix_leaves_the_file_its_log_would_replace(tmp_path, capsys):
    from labkit.errors import NcuError
    from labkit.ncu.command import NcuOptions
    from labkit.ncu.runner import profile

    (tmp_path / "bench.log").write_text("the user's log")
    assert cli.main(["ncu", "run", "--out", str(tmp_path / "bench.json"), "--", "true"]) == 2
    with pytest.raises(NcuError, match=r"bench.json': expected NAME or NAME.ncu-rep"):
        profile(["true"], NcuOptions(output=tmp_path / "bench.json"))
    assert (tmp_path / "bench.log").read_text() == "the user's log"


@pytest.mark.parametrize("argv, expected", BAD, ids=[" ".join(a)[:60] or "(none)" for a, _ in BAD])
def test_bad_invocation_is_one_line_exit_2(argv, expected, tmp_path, capsys):
    filled = _fill(argv, tmp_path)
    rc = cli.main(filled)
    out, err = capsys.readouterr()
    assert rc == 2, (rc, out, err)
    assert err.count("\n") == 1 and err.startswith("labkit: error: "), err
    # a reader's message inside one that names the file again ("sched occupancy: /tmp: /tmp: is a directory")
    assert not any(f"{a}: {a}: " in err for a in filled), err
    assert "needs a CUDA GPU" not in err and "Traceback" not in err
    assert expected in err, err
    assert not any(p.is_file() for p in tmp_path.rglob("*")), "a refused command wrote a file"


@pytest.mark.parametrize("tiles, line", [
    (["--cta-q", "64", "--warp-q", "24"], "unsupported schedule 64/64/24/1: cta_q 64 is not a multiple of warp_q 24; "
                                          "warp_q 24 is not a multiple of 16"),
    (["--cta-k", "96"], "unsupported schedule 128/96/32/1: cta_k 96 is not a multiple of 64"),
    # found by a review: both compiled and ran wrong. V's swizzle maps a row's chunks one to one only for a power of
    # two (cta_k 192: 1536 chunks into 1284 slots, 4 past the tile); quant_int8.cu's block takes whole shares of 64
    # rows, so Q rows 64..79 of each group of 80 were never quantized
    (["--cta-k", "192"], "unsupported schedule 128/192/32/1: cta_k 192 is not a power of two (64, 128, 256)"),
    (["--cta-q", "160", "--warp-q", "80"], "unsupported schedule 160/64/80/1: warp_q 80 is above 64 and not a "
                                           "multiple of 64")])
def test_a_refused_schedule_names_only_the_rules_it_breaks(tiles, line, capsys):
    """Found by a UX review: the line listed all four rules whichever one broke, so the user had to work out which."""
    assert cli.main(S + tiles) == 2
    assert capsys.readouterr().err.splitlines() == [f"labkit: error: labkit sage2 schedule: {line}"]


def test_a_file_where_an_output_directory_should_be_is_named_as_a_file(tmp_path, capsys):
    """Found by a CLI review: ``--out report.json/x`` said the directory 'report.json' does not exist."""
    (tmp_path / "f.json").write_text("{}")
    for argv in (["bench", "--out", f"{tmp_path}/f.json/x.json"], ["sched", "timeline", f"{tmp_path}/f.json",
                                                                  "--trace", f"{tmp_path}/f.json/t.json"]):
        assert cli.main(argv) == 2
        assert f"'{tmp_path}/f.json' is not a directory" in capsys.readouterr().err


def test_manifest_run_of_the_seed_is_refused_for_its_errors_not_the_gpu(capsys):
    """The seed checks fine offline (warnings only), so run gets as far as asking for the GPU: the
    'seqs=3' row above is refused by the manifest check, not by the missing GPU."""
    rc = cli.main(["manifest", "run", SEED, "--var", "tokens=2"])
    err = capsys.readouterr().err
    from labkit.cuda import gpu_available

    if gpu_available():
        pytest.skip("has a GPU")
    assert rc == 1 and "needs a CUDA GPU" in err  # 1: the machine, not the input


def _labkit(*args, timeout=30):
    return subprocess.run([sys.executable, "-m", "labkit", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("argv", [S + ["--cta-q", "0"], ["sage2", "schedule", "--shape", "1,100,1,100"],
                                  ["manifest", "pack", SEED, "--out", "/proc/labkit/x.bin"]])
def test_real_user_path_is_one_line(argv):
    out = _labkit(*argv)
    assert out.returncode == 2 and out.stdout == "", out
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("labkit: error: "), out.stderr


@pytest.mark.parametrize("argv, what", [
    (["sage2", "profile", "--out", "{tmp}/r.json"], "sage2 profile"), (["decode", "bench", "--quick"], None),
    (["manifest", "run", SEED, "--var", "tokens=2"], None),
    # found by a CLI review: these named an inner step ("the timing-overhead probe", "making Sage2 inputs")
    (["bench"], "the Sage2 bench"), (["sage2", "precision"], "the Sage2 precision study"),
    (["sched", "overhead"], "the timeline overhead A/B"),
    (["sched", "launches", "--out", "{tmp}/l.json"], "the instrumented Sage2 launch"),
    (["sched", "crosscheck", "--out", "{tmp}/cc"], "sched crosscheck")])
def test_a_gpu_command_without_a_gpu_says_so_in_one_line(argv, what, tmp_path):
    """Found by a review: sage2 profile printed its first progress line before it asked for the GPU."""
    from labkit.cuda import gpu_available

    if gpu_available():
        pytest.skip("has a GPU")
    out = _labkit(*[a.replace("{tmp}", str(tmp_path)) for a in argv], timeout=120)
    assert out.returncode == 1 and out.stdout == "", out  # 1: the machine is wrong; 2 is kept for bad input
    assert out.stderr.count("\n") == 1 and f"{what or ''} needs a CUDA GPU" in out.stderr, out.stderr
    assert not any(tmp_path.iterdir())  # nothing made (crosscheck had left its --out directory)


@pytest.mark.parametrize("command", [["manifest", "check", "--no-device"], ["sched", "occupancy"]])
def test_fifo_is_refused_not_waited_on(tmp_path, command):
    fifo = tmp_path / "m.json"
    os.mkfifo(fifo)
    out = _labkit(*command[:2], str(fifo), *command[2:], timeout=20)  # a hang fails here
    assert out.returncode == 2 and "is a FIFO" in out.stderr and out.stderr.count("\n") == 1, out.stderr


def test_device_json_without_gpu_is_json(capsys):
    import json

    from labkit.cuda import gpu_available

    if gpu_available():
        pytest.skip("has a GPU")
    assert cli.main(["device", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["gpu"] is False


def test_schedule_defaults_and_explicit_lengths(capsys):
    import json

    assert cli.main(S + ["--q-len", "37761", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["q_len"], d["kv_len"], d["tail"]["q_tail_rows"]) == (37761, 37810, 1)


def test_version_names_the_package_and_the_git_sha(capsys, monkeypatch):
    import labkit

    monkeypatch.setenv("LABKIT_GIT_SHA", "0123abcd")
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"labkit {labkit.__version__} (git 0123abcd)\n"


def test_a_value_may_start_with_a_minus_and_a_point():
    """'-.5' stays a value (argparse's own pattern takes it; labkit's wider one must too)."""
    args = cli.build_parser().parse_args(["sage2", "precision", "--k-bias", "-.5"])
    assert args.k_bias == -0.5
    assert cli.build_parser().parse_args(["sage2", "precision", "--k-bias", "-1e-3"]).k_bias == -0.001


def test_sage2_profile_checks_its_tail_dir_before_any_measurement(tmp_path, capsys):
    """Found by a CLI review: --tail-dir was first used by the tail study, after minutes of phase timings, so a file
    there or another sweep there lost everything measured; now refused with the other arguments, before the GPU."""
    (tmp_path / "sage.json").write_text("{}")
    assert cli.main(["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=1", "--out", str(tmp_path / "sw")]) == 0
    capsys.readouterr()
    for tail_dir, said in ((tmp_path / "sage.json", "sage.json': is a file; expected a directory"),
                           (tmp_path / "sw",
                            'sw holds a sweep of demo.sleep over {"ms": [1]}, not of sage2.tail_round; resume it')):
        assert cli.main(["sage2", "profile", "--out", str(tmp_path / "r.json"), "--tail-dir", str(tail_dir)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and said in err and "CUDA GPU" not in err, err
    assert not (tmp_path / "r.json").exists()


def test_ncu_cases_of_an_empty_plan_is_refused(tmp_path, capsys):
    """Found by a CLI review: it exited 0 having launched nothing (under ncu: 'no kernel profiled', no reason)."""
    from labkit.ncu.cases import CasePlan

    spec = CasePlan().save(tmp_path / "empty.json")
    assert cli.main(["ncu", "cases", str(spec)]) == 2
    # found by a second CLI review: the line did not name the file
    assert capsys.readouterr().err == (f"labkit: error: labkit ncu cases: {spec}: the case plan holds no cases (its "
                                       f"sage2 and decode "
                                       "lists are empty): nothing to launch\n")


def test_ncu_cases_given_another_labkit_document_says_which_it_is(tmp_path, capsys):
    """Found by a CLI review: a manifest or a report given as the case plan got only "missing key 'sage2'", where
    every other reader says what the file is."""
    from labkit._env import data_dir

    for path, kind in ((data_dir() / "trtllm_gen_decode_manifest_v4.json", "a launch manifest"),
                       (data_dir() / "sage2_report_seed.json", "a Sage2 report")):
        assert cli.main(["ncu", "cases", str(path)]) == 2
        assert capsys.readouterr().err == (f"labkit: error: labkit ncu cases: {path}: missing key 'sage2': this "
                                           f"is {kind} "
                                           f"(labkit {'manifest check' if 'manifest' in kind else 'report show'}), "
                                           "not an ncu case plan\n")


def test_a_kernel_cache_that_cannot_be_made_names_labkit_cache(tmp_path):
    """Found by a new-user review: the error named `blob.bin/kernels`, a path the user never gave, and not the knob."""
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"x")
    out = subprocess.run([sys.executable, "-m", "labkit", "sage2", "schedule", "--shape", "1,100,1,128"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT), "LABKIT_CACHE": str(blob)})
    assert out.returncode == 2 and out.stdout == "" and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith(f"labkit: error: labkit sage2 schedule: LABKIT_CACHE {blob}: cannot make "
                                 f"{blob}/kernels in it (Not a "
                                 "directory); point LABKIT_CACHE at a writable directory")


def test_every_option_and_argument_of_every_command_says_what_it_is():
    """Found by a new-user review: 25 options and arguments had no help text (defaults unstated)."""
    import argparse

    from labkit.cli import build_parser

    bare = []

    def walk(parser, path):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{path} {name}")
            elif isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                continue
            elif not action.help:
                bare.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
            elif (action.option_strings and not action.required and action.default not in (None, False, [])
                  and "default" not in action.help and str(action.default) not in action.help):
                bare.append(f"{path} {action.option_strings[-1]}: default {action.default!r} unstated")

    walk(build_parser(), "labkit")
    assert not bare, bare


def test_the_command_line_of_the_console_script_is_read_from_sys_argv(monkeypatch, capsys):
    """``labkit`` as installed calls main() with no argv: the unknown option before the command is still labkit's."""
    monkeypatch.setattr(sys, "argv", ["labkit", "--bogus", "device"])
    assert cli.main() == 2
    assert capsys.readouterr().err == "labkit: error: unrecognized arguments: --bogus (labkit -h lists what it takes)\n"
    monkeypatch.setattr(sys, "argv", ["labkit", "--bogus"])
    assert cli.main() == 2
    assert capsys.readouterr().err.startswith("labkit: error: unrecognized arguments: --bogus; expected a command: ")


def test_an_existing_directory_option_takes_the_directory(tmp_path):
    from labkit._cliargs import existing_dir

    assert existing_dir("--dir")(str(tmp_path)) == tmp_path


def test_device_on_a_gpu_prints_its_description_as_json_or_one_fact_a_line(capsys, monkeypatch):
    """A faked GPU: --json is the description's JSON (what a record's device holds), else one 'key value' line each."""
    import json

    import labkit.cuda
    import labkit.device
    from labkit.device import DeviceInfo

    old = json.loads((ROOT / "data" / "runs" / "20261204T185600Z-decode_bench_targets" / "sweep.json").read_text())
    info = DeviceInfo.from_dict(old["provenance"]["device"])
    monkeypatch.setattr(labkit.cuda, "gpu_status", lambda: (True, "a faked GPU (test)"))
    monkeypatch.setattr(labkit.device, "describe", lambda index=0: info)
    assert cli.main(["device", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == info.to_dict()
    assert cli.main(["device"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(info.to_dict()) and f"{'name':28s} NVIDIA H200" in lines


@pytest.mark.parametrize("argv", [["device", "--index", "1"], ["device", "--index", "1", "--json"]])
def test_device_index_past_the_gpus_of_the_machine_is_one_line_exit_2(argv, capsys, monkeypatch):
    """A faked one-GPU host: --index 1 (0..1023 passes the parser) is refused by describe, naming the devices there
    are (no test had reached this refusal: a check that let index == count through passed every test)."""
    from types import SimpleNamespace

    import labkit.cuda
    import labkit.device

    runtime = SimpleNamespace(getDeviceCount=lambda: 1)
    monkeypatch.setattr(labkit.cuda, "gpu_status", lambda: (True, "1 CUDA device(s)"))
    monkeypatch.setattr(labkit.device, "cupy", lambda: SimpleNamespace(cuda=SimpleNamespace(runtime=runtime)))
    assert cli.main(argv) == 2
    assert capsys.readouterr() == ("", "labkit: error: labkit device: device index 1: this machine has devices 0..0\n")


def test_a_name_the_terminal_cannot_encode_is_escaped_not_a_traceback(tmp_path):
    """An ASCII-only stdout (a C locale, a CI log): a report's path is printed with backslash escapes, not a
    UnicodeEncodeError's traceback."""
    import shutil

    named = shutil.copyfile(REPORT, tmp_path / "n\u00f6_report.json")
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    out = subprocess.run([sys.executable, "-m", "labkit", "report", "show", str(named)],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert out.stdout.startswith(str(tmp_path / "n\\xf6_report.json: "))


def test_an_os_error_is_one_line_naming_its_file(capsys, monkeypatch):
    from labkit import notebooks

    def denied():
        raise PermissionError(13, "Permission denied", "/srv/notebooks")

    monkeypatch.setattr(notebooks, "list_notebooks", denied)
    assert cli.main(["nb", "list"]) == 2
    assert capsys.readouterr().err == "labkit: error: labkit nb list: /srv/notebooks: Permission denied\n"


def test_a_workload_whose_own_import_fails_is_not_hidden_from_the_command_line(monkeypatch):
    """A workload package that is absent leaves its subcommand out; one present whose dependency is missing fails
    loudly, naming it (its subcommand quietly gone would read as 'no such command')."""
    import importlib

    real = importlib.import_module

    def missing_dependency(name, *args):
        if name == "labkit.ncu.cli":
            raise ModuleNotFoundError("No module named 'some_dependency'", name="some_dependency")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", missing_dependency)
    with pytest.raises(ModuleNotFoundError, match="some_dependency"):
        cli.build_parser()

    def absent(name, *args):
        if name == "labkit.ncu.cli":
            raise ModuleNotFoundError("No module named 'labkit.ncu'", name="labkit.ncu")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", absent)
    assert "ncu" not in cli.build_parser()._subparsers._group_actions[0].choices


def test_an_option_that_names_itself_in_its_error_is_not_named_twice(capsys):
    """argparse put "argument --kv-len: " before "--kv-len 'x': expected an integer" (seen in a review of
    `decode plans`); a message that does not name its option starts with the option alone (a review: "argument
    --ctas: given twice" beside runtime errors that name the option bare)."""
    assert cli.main(["decode", "build", "--batch", "1", "--kv-len", "x", "--out", "/tmp/never"]) == 2
    assert capsys.readouterr().err.strip() == ("labkit: error: labkit decode build: --kv-len 'x': expected an integer, "
                                               "or whole 1024s such as 8k")
    assert cli.main(["decode", "bench", "--point", "64x"]) == 2
    assert "labkit decode bench: --point: point '64x'" in capsys.readouterr().err


def test_an_output_that_is_a_fifo_or_a_link_to_nowhere_is_refused_before_any_work(tmp_path):
    """Found by a review: an existing FIFO passed as writable and manifest pack then waited for a reader for ever; a
    link into a missing directory passed, and the write failed after the work."""
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link.bin").symlink_to(tmp_path / "missing" / "file.bin")
    for name, said in (("fifo", "is a FIFO; expected a regular file"),
                       ("link.bin", f"a link to {str(tmp_path / 'missing' / 'file.bin')!r}, whose directory does not "
                                    "exist")):
        out = _labkit("manifest", "pack", SEED, "--out", str(tmp_path / name), timeout=20)
        assert out.returncode == 2 and said in out.stderr and out.stderr.count("\n") == 1, out.stderr


def test_an_output_file_in_a_folder_not_made_yet_is_written_there_as_output_directories_are(tmp_path, capsys):
    """Found by a CLI review: ``--out runs/new/x`` was made by the figure, script and ncu commands and refused by the
    others ("directory ... does not exist"), while every ``--out`` directory is made with its parents."""
    out = tmp_path / "new" / "deeper" / "blob.bin"
    assert cli.main(["manifest", "pack", SEED, "--var", "tokens=2", "--out", str(out)]) == 0
    assert out.stat().st_size > 0 and str(out) in capsys.readouterr().out
    from labkit.sched import Timeline

    tl = Timeline(np.array([[0, 0, 0, 1000, 0, 0], [1, 1, 0, 2000, 0, 0]], dtype=np.int64), sms=2, ctas_per_sm=1)
    trace = tmp_path / "traces" / "t.json"
    assert cli.main(["sched", "timeline", str(tl.save(tmp_path / "saved" / "tl.json")), "--trace", str(trace)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert json.loads(trace.read_text())["traceEvents"] and any(line.startswith(f"trace: {trace} ") for line in out)
    # a new-user review: makespan_ns 2000.0 and busy_ns as bare floats, where notebook 04 shows times in their unit
    assert "makespan               2 us" in out and "busy                   3 us summed over slots" in out, out
    assert not any("_ns" in line for line in out)


def test_a_file_labkit_writes_over_a_link_or_a_device_goes_through_it(tmp_path):
    """Every file is written whole, through a temporary file renamed into place; a rename over a link would replace
    the link and over /dev/null (a review: ``decode bench --out /dev/null`` as root) the device itself."""
    import stat

    from labkit._write import write_json

    (tmp_path / "real.json").write_text("old")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    write_json(tmp_path / "link.json", {"a": 1})
    assert (tmp_path / "link.json").is_symlink() and json.loads((tmp_path / "real.json").read_text()) == {"a": 1}
    if os.geteuid() != 0:
        pytest.skip("making a device node (the /dev/null stand-in) needs root")
    node = tmp_path / "null"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    write_json(node, {"a": 1})
    assert stat.S_ISCHR(node.stat().st_mode) and node.read_bytes() == b""


def test_an_existing_file_of_another_kind_is_not_replaced_by_an_output(tmp_path, capsys):
    """Found by a README walk-through: ``sched timeline --trace`` and ``manifest pack --out`` given the Sage2 report
    replaced it, exit 0. An output replaces only what its command writes: a JSON output a JSON file that is no other
    labkit document (its own earlier output), a report output a report of its kind, a parameter block a binary file
    (not a cubin); /dev/null and an empty file are written."""
    import shutil

    timeline = next((ROOT / "data" / "runs").glob("*-04_cta_scheduling/data/decode_timeline.json"))
    report = str(shutil.copy(REPORT, tmp_path / "report.json"))
    before = (tmp_path / "report.json").read_bytes()
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000)
    refused = [
        (["sched", "timeline", str(timeline), "--trace", report], "exists and is a Sage2 report"),
        (["manifest", "pack", SEED, "--var", "tokens=2", "--out", report], "exists and is a text file, not a parameter "
                                                                           "block"),
        (["manifest", "pack", SEED, "--var", "tokens=2", "--out", SEED_CUBIN], "exists and is an ELF file"),
        (["sched", "timeline", str(timeline), "--trace", str(ROOT / "README.md")], "exists and is not a JSON file"),
        (["sched", "timeline", str(timeline), "--trace", SEED], "exists and is a launch manifest"),
        # a second review: a NUL byte had made any binary file a parameter block, and nesting a traceback
        (["manifest", "pack", SEED, "--var", "tokens=2", "--out", str(next((ROOT / "data" / "runs").rglob("*.png")))],
         "exists and is a PNG image"),
        (["sched", "timeline", str(timeline), "--trace", str(deep)], "exists and is not a JSON file"),
    ]
    for argv, said in refused:
        assert cli.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert said in err and "refusing to overwrite it (delete it, or name another file)" in err, err
    assert (tmp_path / "report.json").read_bytes() == before
    trace, blob, empty = tmp_path / "t.json", tmp_path / "b.bin", tmp_path / "empty.json"
    empty.write_text("")
    for argv in (["sched", "timeline", str(timeline), "--trace", str(trace)],) * 2 + (
            ["sched", "timeline", str(timeline), "--trace", str(empty)],
            ["sched", "timeline", str(timeline), "--trace", os.devnull]) + (
            ["manifest", "pack", SEED, "--var", "tokens=2", "--out", str(blob)],) * 2:
        assert cli.main(argv) == 0, (argv, capsys.readouterr().err)
    assert json.loads(empty.read_text())["traceEvents"] and blob.stat().st_size == 1280


def test_a_replaced_file_keeps_its_mode_and_links_and_a_folder_that_refuses_the_rename_is_written_in_place(
        tmp_path, monkeypatch):
    """A review of the atomic writes: the temporary file's 0600 had become every output's mode, a hard link kept the
    old text, and a writable file in a folder that refuses a new file (read-only, or sticky with another owner) was
    refused only after the run."""
    import stat
    import tempfile

    from labkit import _write

    old = tmp_path / "old.json"
    old.write_text("{}")
    old.chmod(0o664)
    os.link(old, tmp_path / "hard.json")
    _write.write_json(old, {"a": 1})
    assert stat.S_IMODE(old.stat().st_mode) == 0o664 and json.loads((tmp_path / "hard.json").read_text()) == {"a": 1}
    mask = os.umask(0o027)
    try:
        _write.write_json(tmp_path / "new.json", {"b": 2})
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o640
    for refused in ("mkstemp", "replace"):
        with monkeypatch.context() as m:
            def no(*a, **k):
                raise PermissionError(13, "Permission denied")
            m.setattr(tempfile if refused == "mkstemp" else os, refused, no)
            _write.write_json(tmp_path / "new.json", {"c": refused})
        assert json.loads((tmp_path / "new.json").read_text()) == {"c": refused}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hard.json", "new.json", "old.json"]  # no temporary left


def test_a_switch_set_to_anything_but_0_or_1_is_refused_before_the_command_runs(monkeypatch, capsys):
    """A fresh-user review: LABKIT_BATCH=maybe passed silently (as on)."""
    monkeypatch.setenv("LABKIT_BATCH", "maybe")
    assert cli.main(["sched", "waves", "--ctas", "100", "--sms", "132", "--ctas-per-sm", "2"]) == 2
    assert capsys.readouterr().err == ("labkit: error: labkit sched waves: environment LABKIT_BATCH='maybe': expected "
                                       "0 or 1 (or unset)\n")
    monkeypatch.setenv("LABKIT_BATCH", "1")
    assert cli.main(["sched", "waves", "--ctas", "100", "--sms", "132", "--ctas-per-sm", "2"]) == 0
