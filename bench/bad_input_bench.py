"""Bad-input benchmark: tfjob-kit's loader against PyYAML's CSafeLoader on hostile YAML, in one run.

The texts are the unit tests' own, so that what the tests check (a located error, never a
traceback) and what this times are the same inputs:

* bad input: the cases of tests/unit/test_bad_input.py (runs in values, keys, numbers, flow
  nesting and documents), each at 100,000 and 200,000 characters and at 3 MiB (just under the
  per-document limit, so that every byte is parsed);
* loader: tests/unit/test_manifests.py's alias bomb, deep nesting, long number-like runs and
  out-of-range numbers, at their size there.

Each is timed with:

* tfjob-kit load: ``manifests.load_text`` (the gate, yaml_rs or the careful PyYAML path, the
  limits on aliases, depth and size);
* tfjob-kit validate: ``load_text`` and ``validate_documents``, what ``tfjob-kit validate``
  runs (bad input only);
* PyYAML: ``yaml.load_all(text, Loader=yaml.CSafeLoader)``, consumed: libyaml's parser with
  PyYAML's safe constructor, the usual fast way to read YAML in Python. It has no limits of its
  own beyond libyaml's nesting depth; what it answers is shown beside its time.

Prints the best-of-R seconds (one run at 3 MiB), the growth when the input doubles (the time at
200,000 characters over the time at 100,000: about 2 when linear), the memory (the child's peak
resident memory beyond what it held once loaded, after the runs at each size: a peak, so it
never falls as the sizes grow), the ratio to PyYAML (the
tool's time over PyYAML's on the same text) and how each run ended. Read a ratio with the two
outcomes: PyYAML stops at the first error of a text, and libyaml at its nesting limit, where
tfjob-kit reads on to locate a finding in every document (20,001 of them in "many documents").
Each case and tool runs in a child process under a timeout, so a hang or a crash (of either
side) is a row of the table, not the end of the run. The machine's load average is printed
before and after: on a shared machine the ratios are steadier than the seconds. Results also
go to bench/results/bad_input.json.
Not a test: `make bench-bad-input` or
`python bench/bad_input_bench.py [--repeat R] [--timeout S] [--only TEXT]`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "unit"))
import test_bad_input
import test_manifests

from tfjob_kit.manifests import load_text
from tfjob_kit.validate import validate_documents

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"

LOAD, VALIDATE, PYYAML = "tfjob-kit load", "tfjob-kit validate", "PyYAML CSafeLoader"
SMALL, LARGE, BIG = 100_000, 200_000, test_bad_input.THREE_MIB
BAD, LOADER = "bad input", "loader"


def bad_input_texts(case: str, size: int) -> list[str]:
    return [test_bad_input.CASES[case](size)]


def loader_cases() -> dict[str, list[str]]:
    """test_manifests' texts, named by what they hold."""
    cases = {"alias bomb (9 levels of 9 aliases)": [test_manifests.alias_bomb()]}
    for text in [*test_manifests.DEEP, *test_manifests.VERY_DEEP]:
        cases[f"nesting {text[:8]!r}... ({len(text):,} chars)"] = [text]
    for run in test_manifests.NUMBER_LIKE_RUNS:
        text = test_manifests.number_like(run)
        cases[f"number-like run {run!r} ({len(text):,} chars)"] = [text]
    out_of_range = [
        test_manifests.out_of_range(value, careful)
        for value, _ in test_manifests.OUT_OF_RANGE
        for careful in (False, True)
    ]
    cases[f"numbers out of range ({len(out_of_range)} texts)"] = out_of_range
    return cases


def tools_of(group: str) -> list[str]:
    return [LOAD, VALIDATE, PYYAML] if group == BAD else [LOAD, PYYAML]


def sizes_of(group: str, case: str) -> list[int]:
    """The sizes a case is timed at (a loader case: its one text's, or its texts', length)."""
    if group == BAD:
        return [SMALL, LARGE, BIG]
    return [sum(len(text) for text in loader_cases()[case])]


# ------------------------------------------------------------------------------- the child


def outcome_of(tool: str, text: str) -> str:
    """Runs ``tool`` on ``text``; what it ended in, in a few words."""
    if tool == PYYAML:
        try:
            docs = list(yaml.load_all(text, Loader=yaml.CSafeLoader))
        except Exception as error:  # whatever PyYAML answers is its outcome
            problem = getattr(error, "problem", None) or str(error)
            return f"{type(error).__name__}: {problem.splitlines()[0][:60]}"
        return f"loaded {len(docs)} doc(s)"
    loaded = load_text(text, "bad.yaml")
    if tool == VALIDATE:
        findings = validate_documents(loaded).findings
        if not findings:
            return "no finding"
        return f"{len(findings)} finding(s), first {findings[0].rule} at {findings[0].path}"
    errors = [doc.error for doc in loaded if doc.error is not None]
    if not errors:
        return f"loaded {len(loaded)} doc(s)"
    first = errors[0]
    return f"{first.rule} (line {first.line}, {first.path}), {len(errors)} of {len(loaded)} doc(s)"


def best_seconds(action: Callable[[], list[str]], repeat: int) -> tuple[float, list[str]]:
    """The best of ``repeat`` runs; a run under 10 ms is repeated in a loop of at least 50 ms
    and its mean taken, so that the clock's resolution does not decide."""
    best, outcomes = float("inf"), []
    for _ in range(repeat):
        start = time.perf_counter()
        outcomes = action()
        seconds = time.perf_counter() - start
        if seconds < 0.01:
            loops = int(0.05 / max(seconds, 1e-6)) + 1
            start = time.perf_counter()
            for _ in range(loops):
                action()
            seconds = (time.perf_counter() - start) / loops
        best = min(best, seconds)
    return best, outcomes


def peak_mib() -> float:
    """This process's peak resident memory so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(group: str, case: str, tool: str, repeat: int, repeat_big: int) -> None:
    """Times one tool on one case at each of its sizes; one JSON line each, as it goes."""
    loaded = peak_mib()
    for index, size in enumerate(sizes_of(group, case)):
        texts = bad_input_texts(case, size) if group == BAD else loader_cases()[case]
        if index == 0:
            [outcome_of(tool, text) for text in texts]  # imports, caches and compiled patterns

        def action(texts: list[str] = texts) -> list[str]:
            return [outcome_of(tool, text) for text in texts]

        seconds, outcomes = best_seconds(action, repeat_big if size == BIG else repeat)
        counted = Counter(outcomes).most_common()
        said = "; ".join(o if n == 1 else f"{n}x {o}" for o, n in counted)
        memory = peak_mib() - loaded
        line = {"size": size, "seconds": seconds, "mib": memory, "outcome": said}
        print(json.dumps(line), flush=True)


# ------------------------------------------------------------------------------- the parent


@dataclass
class Row:
    group: str
    case: str
    tool: str
    size: int
    seconds: float | None  # None: the run did not end (timeout) or crashed
    outcome: str
    mib: float | None = None  # peak resident memory beyond the loaded child, after this size


def measure(group: str, case: str, tool: str, args: argparse.Namespace) -> list[Row]:
    command = [sys.executable, __file__, "--child", group, case, tool]
    command += ["--repeat", str(args.repeat), "--repeat-big", str(args.repeat_big)]
    try:
        proc = subprocess.run(
            command, capture_output=True, text=True, timeout=args.timeout, check=False
        )
        out, ended = proc.stdout, (f"crashed (exit {proc.returncode})" if proc.returncode else "")
        if proc.returncode:
            print(proc.stderr[-1000:], file=sys.stderr)
    except subprocess.TimeoutExpired as expired:
        raw = expired.stdout or b""
        out = raw.decode() if isinstance(raw, bytes) else raw
        ended = f"not ended after {args.timeout:g}s (killed)"
    rows = []
    for line in out.splitlines():
        got = json.loads(line)
        rows.append(Row(group, case, tool, got["size"], got["seconds"], got["outcome"], got["mib"]))
    done = {row.size for row in rows}
    rows += [
        Row(group, case, tool, size, None, ended or "no result")
        for size in sizes_of(group, case)
        if size not in done
    ]
    return rows


def seconds_text(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.4f}"


def ratio_text(mine: Row | None, peer: Row | None) -> str:
    """``mine`` over ``peer``; "-" where either has no time (the peer's row says why)."""
    if mine is None or mine.seconds is None or peer is None or peer.seconds is None:
        return "-"
    return f"{mine.seconds / peer.seconds:.2f}x"


def mib_text(row: Row | None) -> str:
    return "-" if row is None or row.mib is None or row.seconds is None else f"{row.mib:.0f}"


def report_bad_input(rows: list[Row]) -> None:
    print(
        f"\nBad input (tests/unit/test_bad_input.py): seconds at {SMALL:,} and {LARGE:,} chars "
        f"(growth: their ratio) and at 3 MiB ({BIG:,} chars); peak memory (MiB) beyond the "
        "loaded child at each size; ratio to PyYAML at 3 MiB"
    )
    print(
        f"{'case':<27} {'tool':<19} {'100k s':>8} {'200k s':>8} {'growth':>6} {'3 MiB s':>8} "
        f"{'MiB':>14} {'vs PyYAML':>9}  outcome at 3 MiB"
    )
    for case in sorted({row.case for row in rows}):
        at = {(row.tool, row.size): row for row in rows if row.case == case}
        for tool in tools_of(BAD):
            small, large, big = (at.get((tool, size)) for size in (SMALL, LARGE, BIG))
            growth = (
                f"{large.seconds / small.seconds:.1f}"
                if small and large and small.seconds and large.seconds
                else "-"
            )
            print(
                f"{case if tool == LOAD else '':<27} {tool:<19} "
                f"{seconds_text(small.seconds if small else None):>8} "
                f"{seconds_text(large.seconds if large else None):>8} {growth:>6} "
                f"{seconds_text(big.seconds if big else None):>8} "
                f"{'/'.join(mib_text(row) for row in (small, large, big)):>14} "
                f"{ratio_text(big, at.get((PYYAML, BIG))):>9}  {big.outcome if big else '-'}"
            )


def report_loader(rows: list[Row]) -> None:
    print("\nLoader (tests/unit/test_manifests.py): seconds for each text; ratio to PyYAML")
    print(f"{'case':<44} {'tool':<19} {'seconds':>8} {'vs PyYAML':>9}  outcome")
    measured = {row.case for row in rows}
    for case in [case for case in loader_cases() if case in measured]:
        at = {row.tool: row for row in rows if row.case == case}
        for tool in tools_of(LOADER):
            row = at.get(tool)
            print(
                f"{case if tool == LOAD else '':<44} {tool:<19} "
                f"{seconds_text(row.seconds if row else None):>8} "
                f"{ratio_text(row, at.get(PYYAML)):>9}  {row.outcome if row else '-'}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per size, best kept")
    parser.add_argument("--repeat-big", type=int, default=1, help="runs at 3 MiB (default 1)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per case and tool")
    parser.add_argument("--only", default="", help="the cases whose name holds this text")
    parser.add_argument("--child", nargs=3, metavar=("GROUP", "CASE", "TOOL"), help="internal")
    args = parser.parse_args()
    if args.child:
        group, case, tool = args.child
        child(group, case, tool, args.repeat, args.repeat_big)
        return 0
    cases = [(BAD, case) for case in sorted(test_bad_input.CASES)]
    cases += [(LOADER, case) for case in loader_cases()]
    cases = [(group, case) for group, case in cases if args.only in case]
    before = os.getloadavg()
    print(f"{len(cases)} cases, {os.cpu_count()} CPUs, load average {before[0]:.2f}", flush=True)
    started = time.perf_counter()
    rows: list[Row] = []
    for group, case in cases:
        for tool in tools_of(group):
            rows += measure(group, case, tool, args)
        print(f"  {group}: {case}", flush=True)
    for group, report in ((BAD, report_bad_input), (LOADER, report_loader)):
        if any(row.group == group for row in rows):
            report([row for row in rows if row.group == group])
    after = os.getloadavg()
    print(
        f"\n{time.perf_counter() - started:.0f}s in all; load average {before[0]:.2f} before, "
        f"{after[0]:.2f} after (1 minute), {os.cpu_count()} CPUs"
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bad_input.json").write_text(
        json.dumps([row.__dict__ for row in rows], indent=2) + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
