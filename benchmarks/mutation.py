"""Mutation testing of the core modules with mutmut (not part of CI).

Usage::

    pip install -e ".[test,mutation]"
    python benchmarks/mutation.py                 # every module in MODULES
    python benchmarks/mutation.py ridge linsem    # a selection, by key
    python benchmarks/mutation.py --list          # the module keys and their tests

Each module is mutated in its own scratch copy of the repository (``--workdir``, by default
``$TMPDIR/causalbandits-mutation/<key>``), with a ``setup.cfg`` that tells mutmut to mutate only
that file and to run only the test files mapped to it below, so one mutant costs a few seconds
of tests rather than the whole suite. The repository itself is never modified and needs no
mutmut configuration. Per module the script prints the number of mutants, killed, survived,
timeouts, the kill rate (killed / (killed + survived + timeouts)) and every survivor as
``file:line`` with the mutated line, and merges a summary into
``benchmarks/results/mutation.json`` (results of modules not rerun are kept).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "mutation.json"
PKG = "src/causalbandits"

# key -> (module file, test files that exercise it). Keep each test selection to a few seconds.
MODULES: dict[str, tuple[str, list[str]]] = {
    "ridge": (
        f"{PKG}/estimators/ridge.py",
        ["tests/test_estimators.py", "tests/test_pinned_linsem.py", "tests/test_policies.py"],
    ),
    "linsem": (
        f"{PKG}/policies/linsem.py",
        ["tests/test_pinned_linsem.py", "tests/test_policies.py"],
    ),
    "propagation": (
        f"{PKG}/estimators/propagation.py",
        [
            "tests/test_estimators.py",
            "tests/test_pinned_linsem.py",
            "tests/test_pinned_environment.py",
        ],
    ),
    "discounted": (
        f"{PKG}/estimators/discounted.py",
        [
            "tests/test_discounted.py",
            "tests/test_delay.py",
            "tests/test_ndc_sem_policies.py",
            "tests/test_pinned_semibandit_baselines.py",
        ],
    ),
    "semibandit": (
        f"{PKG}/policies/semibandit.py",
        ["tests/test_pinned_semibandit_baselines.py", "tests/test_ndc_sem_policies.py"],
    ),
    "mutual_information": (
        f"{PKG}/estimators/mutual_information.py",
        ["tests/test_mutual_information.py", "tests/test_estimators.py"],
    ),
    "lasso": (
        f"{PKG}/estimators/lasso.py",
        ["tests/test_lasso.py", "tests/test_estimators.py"],
    ),
    "linear_bandit": (
        f"{PKG}/envs/linear_bandit.py",
        [
            "tests/test_environment.py",
            "tests/test_linear_sem.py",
            "tests/test_pinned_environment.py",
            "tests/test_deviations.py",
            "tests/test_pinned_linsem.py",
        ],
    ),
    "ftrl": (
        f"{PKG}/policies/ftrl.py",
        [
            "tests/test_ftrl.py",
            "tests/test_pinned_semibandit_baselines.py",
            "tests/test_ndc_sem_policies.py",
        ],
    ),
    # The claim checks (robust_lcb/figures.py `_checks`, csl_ucb/bandits.py `claim_checks`) live
    # in larger files; the whole file is mutated. No unit test imports robust_lcb/figures.py; the
    # CLI tests only reach its catalogue entries.
    "robust_lcb_checks": (
        f"{PKG}/papers/robust_lcb/figures.py",
        ["tests/test_cli.py", "tests/test_cli_errors.py"],
    ),
    "csl_ucb_checks": (
        f"{PKG}/papers/csl_ucb/bandits.py",
        ["tests/test_csl_ucb.py"],
    ),
}

STATUS_BY_EXIT_CODE = {
    1: "killed",
    3: "killed",
    0: "survived",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    36: "timeout",
    24: "timeout",
    -24: "timeout",
    152: "timeout",
    255: "timeout",
    37: "caught by type check",
    None: "not checked",
}


def prepare_workdir(work: Path, module: str, tests: list[str]) -> None:
    """A fresh scratch copy of the sources and tests with a module-specific mutmut config."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache")
    shutil.copytree(ROOT / "src", work / "src", ignore=ignore)
    shutil.copytree(ROOT / "tests", work / "tests", ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", work / "pyproject.toml")
    selection = "\n".join(f"    {t}" for t in tests)
    (work / "setup.cfg").write_text(
        "[mutmut]\n"
        "source_paths = src\n"
        f"only_mutate = {module}\n"
        f"pytest_add_cli_args_test_selection =\n{selection}\n"
        "pytest_add_cli_args =\n    -p\n    no:cacheprovider\n    -q\n"
    )


def mutmut_exe() -> str:
    exe = Path(sys.executable).with_name("mutmut")
    return str(exe) if exe.exists() else "mutmut"


def function_spans(source: str) -> dict[str, tuple[int, int]]:
    """mutmut's mangled function names (``f``, ``xǁClassǁmethod``) -> (first line, last line)."""
    spans: dict[str, tuple[int, int]] = {}
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            spans[node.name] = (node.lineno, node.end_lineno or node.lineno)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    key = f"xǁ{node.name}ǁ{item.name}"
                    spans[key] = (item.lineno, item.end_lineno or item.lineno)
    return spans


def describe(work: Path, name: str, module: str, spans: dict, lines: list[str]) -> dict:
    """file:line and the changed line(s) of one mutant, from ``mutmut show``."""
    out = subprocess.run(
        [mutmut_exe(), "show", name], cwd=work, capture_output=True, text=True
    ).stdout
    removed = [ln[1:] for ln in out.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    added = [ln[1:] for ln in out.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    func = name.split(".")[-1].rsplit("__mutmut_", 1)[0]
    lo, hi = spans.get(func, (1, len(lines)))
    line = None
    if removed:
        target = removed[0].strip()
        for i in range(lo, hi + 1):
            if lines[i - 1].strip() == target:
                line = i
                break
    return {
        "mutant": name,
        "location": f"{module}:{line if line is not None else lo}",
        "original": " | ".join(r.strip() for r in removed),
        "mutated": " | ".join(a.strip() for a in added),
    }


def collect(work: Path, module: str) -> dict:
    meta = work / "mutants" / (module + ".meta")
    data = json.loads(meta.read_text())
    codes = data.get("exit_code_by_key", {})
    counts: dict[str, int] = {}
    survivors = []
    source = (ROOT / module).read_text()
    spans = function_spans(source)
    lines = source.splitlines()
    for name, code in sorted(codes.items(), key=lambda kv: natural_key(kv[0])):
        status = STATUS_BY_EXIT_CODE.get(code, "suspicious")
        counts[status] = counts.get(status, 0) + 1
        if status in ("survived", "no tests"):
            entry = describe(work, name, module, spans, lines)
            entry["status"] = status
            survivors.append(entry)
    survivors.sort(key=lambda e: int(e["location"].rsplit(":", 1)[1]))
    killed = counts.get("killed", 0) + counts.get("caught by type check", 0)
    survived = counts.get("survived", 0)
    timeouts = counts.get("timeout", 0)
    decided = killed + survived + timeouts + counts.get("no tests", 0)
    return {
        "module": module,
        "mutants": len(codes),
        "killed": killed,
        "survived": survived,
        "timeouts": timeouts,
        "no_tests": counts.get("no tests", 0),
        "other": {
            k: v
            for k, v in counts.items()
            if k not in ("killed", "survived", "timeout", "no tests", "caught by type check")
        },
        # Timeouts count as killed (the mutant made the tests hang); no-tests count as survived.
        "kill_rate": round((killed + timeouts) / decided, 4) if decided else None,
        "survivors": survivors,
    }


def natural_key(name: str) -> tuple:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def run_module(key: str, workroot: Path, max_children: int, rerun: bool = True) -> dict:
    module, tests = MODULES[key]
    work = workroot / key
    if not rerun:  # re-read the results of an earlier run in the same work directory
        result = collect(work, module)
        result.update(key=key, tests=tests, wall_seconds=None)
        return result
    prepare_workdir(work, module, tests)
    # No PYTHONPATH to mutants/src: mutmut puts it on sys.path itself, and a path that does
    # not exist yet at start-up would be cached as unimportable.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    start = time.perf_counter()
    proc = subprocess.run(
        [mutmut_exe(), "run", "--max-children", str(max_children)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    (work / "mutmut-run.log").write_text(proc.stdout + "\n" + proc.stderr)
    if not (work / "mutants" / (module + ".meta")).exists():
        tail = (proc.stdout + proc.stderr)[-3000:]
        raise RuntimeError(f"mutmut run failed for {key} (exit {proc.returncode}):\n{tail}")
    result = collect(work, module)
    result.update(key=key, tests=tests, wall_seconds=round(wall, 1))
    return result


def report(r: dict) -> None:
    rate = "n/a" if r["kill_rate"] is None else f"{100 * r['kill_rate']:.1f}%"
    print(
        f"{r['key']:<20} {r['module']}\n"
        f"    mutants {r['mutants']}, killed {r['killed']}, survived {r['survived']}, "
        f"timeouts {r['timeouts']}, no tests {r['no_tests']}, other {r['other'] or 0}; "
        f"kill rate {rate}; {r['wall_seconds']} s"
    )
    for s in r["survivors"]:
        print(f"    {s['status'].upper():<9} {s['location']}: {s['original']}  ->  {s['mutated']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help=f"keys among: {', '.join(MODULES)}")
    parser.add_argument("--list", action="store_true", help="print the module/test mapping")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "causalbandits-mutation",
    )
    parser.add_argument("--max-children", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument(
        "--collect-only",
        action="store_true",
        help="re-read the results left in --workdir by an earlier run instead of rerunning",
    )
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)
    if args.list:
        for key, (module, tests) in MODULES.items():
            print(f"{key:<20} {module}  <-  {' '.join(tests)}")
        return 0
    keys = args.modules or list(MODULES)
    unknown = [k for k in keys if k not in MODULES]
    if unknown:
        parser.error(f"unknown module key(s) {unknown}; choose from {list(MODULES)}")
    summary = json.loads(args.output.read_text()) if args.output.exists() else {"modules": {}}
    for key in keys:
        result = run_module(key, args.workdir, args.max_children, rerun=not args.collect_only)
        if result["wall_seconds"] is None:  # --collect-only keeps the recorded wall time
            result["wall_seconds"] = summary["modules"].get(key, {}).get("wall_seconds")
        report(result)
        result["finished_utc"] = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        summary["modules"][key] = result
        summary["tool"] = f"mutmut {version('mutmut')}"
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
