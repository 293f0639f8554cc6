"""Printed output lines over 100 characters in the executed notebooks of a live run (the wrap fix, live)."""
import json, pathlib, sys
for f in sorted(pathlib.Path("runs").rglob("*.ipynb")):
    if f.name.endswith(".input.ipynb") or f.stat().st_mtime < pathlib.Path("/tmp/start").stat().st_mtime:
        continue
    nb = json.loads(f.read_text()); long = []; errs = 0; pngs = 0
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            if o.get("output_type") == "error": errs += 1
            d = o.get("data", {}); pngs += "image/png" in d
            t = "".join(o.get("text", "")) if o.get("output_type") == "stream" else ("" if "text/html" in d or "image/png" in d else "".join(d.get("text/plain", "")))
            long += [l for l in t.splitlines() if len(l) > 100]
    print(f"{f}: {len(long)} printed lines over 100 chars, {errs} errors, {pngs} figures")
    for l in long[:5]: print("   ", len(l), l[:140])
