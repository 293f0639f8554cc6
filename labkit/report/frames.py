"""The DataFrames notebook 02 shows of a Sage2 report beside the tables: its checks and its scheduler fields."""

from .model import Sage2Report

LONG_TEXT = 40  # characters: a value longer than this is said under the checks table, not in its column


def checks_frame(r: Sage2Report):
    """A labkit report's correctness checks as one ``value`` column: accuracy against the fp32 reference, the one-shot
    call against the phase-by-phase one (bitwise and max difference), the checksums and how they are defined."""
    import pandas as pd

    named = {"nan": "NaN elements"}  # a count: "accuracy nan 0" read as a missing value (a review)
    d = r.decomposition
    rows = {**{f"accuracy {named.get(k, k)}": v for k, v in (r.accuracy or {}).items()},
            "one-shot == phase-by-phase (bitwise)": d.equal if d else None,
            "max |one-shot - phases|": d.max_abs if d else None,
            # the seed's names (manual, reference) for these two outputs, not the fp32 reference's
            "checksum, phase-by-phase (manual)": r.manual_checksum,
            "checksum, one-shot (reference)": r.reference_checksum,
            "checksum definition": r.checksum_definition}
    # a check the report does not record (the user's seed report: no accuracy, no definition) is left out; it had
    # been an AttributeError (an API walk)
    return pd.Series({k: v for k, v in rows.items() if v is not None}, dtype=object).to_frame("value")


def shown_checks(checks) -> tuple:
    """``checks_frame`` as notebook 02 shows it: (the table, the lines under it). A value of more than ``LONG_TEXT``
    characters (the reference, the checksums' definition) is a line under the table, not a cell: the definition's
    190 characters had pushed every value of the column that far right. Yes / no for True / False, counts with
    thousands separators, sums to 6 decimals, other numbers to 6 significant digits; the saved CSV keeps the values."""
    def cell(v):
        if isinstance(v, bool):
            return "yes" if v else "no"
        if isinstance(v, int):
            return f"{v:,}"
        if isinstance(v, float):  # a checksum of 19542.037109 to its fp32 digits, a ratio to 6 significant ones
            return f"{v:.6f}" if abs(v) >= 1000 else f"{v:.6g}"
        return str(v)

    long = {k: v for k, v in checks["value"].items() if isinstance(v, str) and len(v) > LONG_TEXT}
    table = checks.drop(index=list(long)).assign(value=lambda f: [cell(v) for v in f["value"]])
    return table, [f"{k}: {v}" for k, v in long.items()]


def scheduler_frame(**reports: Sage2Report):
    """The reports' scheduler fields side by side, one column per keyword (``labkit=ours, seed=seed``)."""
    from dataclasses import asdict

    import pandas as pd

    frame = pd.DataFrame({name: asdict(r.scheduler) for name, r in reports.items()})
    frame.index.name = "field"
    return frame
