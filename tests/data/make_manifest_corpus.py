"""Regenerate tests/data/manifests/*.json: the seed manifest with one defect each.

Run from the repo root: python tests/data/make_manifest_corpus.py. The files are committed;
expected.json (kept by hand) says what error each must produce.
"""

import copy
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEED = json.loads((ROOT / "data" / "trtllm_gen_decode_manifest_v4.json").read_text())
OUT = Path(__file__).with_name("manifests")


def launch(d):
    return d["ops"]["decode"]["impl"]["launches"][0]


def fields(d):
    return launch(d)["args"][0]["pack"]["fields"]


def tm(d, i=1):
    return fields(d)[i]["tensormap"]


MUTATIONS = {
    "schema_v3": lambda d: d.__setitem__("schema_version", 3),
    "overlap": lambda d: fields(d).append({"at": 1114, "i32": 5}),
    "tensormap_misaligned": lambda d: fields(d)[0].__setitem__("at", 96),
    "pointer_misaligned": lambda d: fields(d)[4].__setitem__("at", 913),
    "field_past_end": lambda d: fields(d).append({"at": 1278, "i32": 1}),
    "param_out_of_range": lambda d: fields(d)[5].__setitem__("param", 12),
    "tensormap_dtype": lambda d: tm(d, 0).__setitem__("dtype", "f16"),
    "tensormap_stride": lambda d: tm(d, 1)["strides"].__setitem__(0, 4004),
    "tensormap_box": lambda d: tm(d, 1)["box"].__setitem__(1, 300),
    "tensormap_swizzle_span": lambda d: tm(d, 1)["box"].__setitem__(0, 128),
    "tensormap_rank": lambda d: tm(d, 0).update(dims=[256, 6, 4, 64, 1, 1], strides=[512, 3072, 12288, 16, 16],
                                                box=[64, 6, 1, 1, 1, 1]),
    "wrong_sha256": lambda d: next(iter(d["modules"].values())).__setitem__("sha256", "0" * 64),
    "missing_cubin": lambda d: next(iter(d["modules"].values())).update(source="nope.cubin", sha256="1" * 64),
    "grid_var_undeclared": lambda d: launch(d)["grid"].__setitem__(2, "pages"),
    "offset_out_of_bounds": lambda d: d["programs"]["decode"]["calls"][0]["args"][2].__setitem__("offset", 99999999),
    "call_arg_count": lambda d: d["programs"]["decode"]["calls"][0]["args"].pop(),
    "unknown_key": lambda d: launch(d).__setitem__("sharedmem", 0),
    "scratch_undeclared": lambda d: fields(d)[-3].__setitem__("scratch", "ctr"),
    "pack_size_mismatch": lambda d: launch(d)["args"][0]["pack"].__setitem__("size", 1024),
    "buffer_dtype": lambda d: d["buffers"]["q"].__setitem__("dtype", "f16"),
    "block_type": lambda d: launch(d)["block"].__setitem__(0, "512"),
    "entry_missing": lambda d: launch(d).__setitem__("entry", "fmhaSm100fKernel_DoesNotExist"),
    "two_kinds_in_field": lambda d: fields(d)[6].__setitem__("i32", 3),
}

if __name__ == "__main__":
    OUT.mkdir(exist_ok=True)
    for name, fn in MUTATIONS.items():
        d = copy.deepcopy(SEED)
        fn(d)
        (OUT / f"{name}.json").write_text(json.dumps(d, indent=2) + "\n")
    text = json.dumps(SEED, indent=2)
    (OUT / "truncated.json").write_text(text[: len(text) // 2])
    print(f"wrote {len(MUTATIONS) + 1} manifests to {OUT}")
