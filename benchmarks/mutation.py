"""Mutation testing of the core modules with mutmut (not part of CI).

Usage::

    pip install -e ".[test,mutation]"
    python benchmarks/mutation.py                 # every target in MODULES
    python benchmarks/mutation.py ridge linsem    # a selection, by key
    python benchmarks/mutation.py --list          # the targets and their tests
    python benchmarks/mutation.py --listed        # the hand-written mutants of the issue
    python benchmarks/mutation.py --listed excbo  # only those of some targets (merged)

Each target is mutated in its own scratch copy of the repository (``--workdir``, by default
``$TMPDIR/causalbandits-mutation/<key>``), with a ``setup.cfg`` that tells mutmut to mutate only
that file and to run only the test files mapped to it below, so one mutant costs a few seconds
of tests rather than the whole suite. A target may name functions: mutmut then tests only
their mutants (the others of the file are neither run nor counted). The repository itself is
never modified and needs no mutmut configuration. Per target the script prints the number of
mutants, killed, survived, timeouts, the kill rate ((killed + timeouts) / all decided) and
every survivor as ``file:line`` with the mutated line and its class from
``mutation_survivors.py`` (equivalent / harmless, with the reason), and merges a summary into
``benchmarks/results/mutation.json`` (results of targets not rerun are kept; ``overall`` is
over the targets of the issue's acceptance set) and ``mutation_survivors.md`` beside it.
``--listed`` applies each hand-written mutant of ``mutation_survivors.LISTED`` to a scratch
copy, runs the target's tests and records whether they fail (every one must).
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
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path

from mutation_survivors import LISTED, classify

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "mutation.json"
PKG = "src/causalbandits"


@dataclass(frozen=True)
class Target:
    """One mutation target: a module, the tests run against its mutants and, optionally, the
    functions to mutate (``"name"`` or ``"Class.method"``; empty: the whole file).

    ``acceptance``: part of the issue's mutation-testing acceptance set (the overall rate is
    over these targets).
    """

    module: str
    tests: tuple[str, ...]
    functions: tuple[str, ...] = ()
    acceptance: bool = True


# Keep each test selection to a few seconds: a mutant costs one run of it.
MODULES: dict[str, Target] = {
    "ridge": Target(
        f"{PKG}/estimators/ridge.py",
        (
            "tests/test_estimators.py",
            "tests/test_pinned_linsem.py",
            "tests/test_pinned_ridge.py",
            "tests/test_policies.py",
        ),
    ),
    "linsem": Target(
        f"{PKG}/policies/linsem.py",
        (
            "tests/test_pinned_linsem.py",
            "tests/test_pinned_linsem_policies.py",
            "tests/test_policies.py",
            "tests/test_self_normalised_radius.py",
            # the solver and radius defaults, and replicates that are different systems
            "tests/test_interval_bounds.py",
            "tests/test_linear_instances.py",
        ),
    ),
    "propagation": Target(
        f"{PKG}/estimators/propagation.py",
        (
            "tests/test_estimators.py",
            "tests/test_pinned_linsem.py",
            "tests/test_pinned_environment.py",
            "tests/test_pinned_propagation.py",
        ),
    ),
    "discounted": Target(
        f"{PKG}/estimators/discounted.py",
        (
            "tests/test_discounted.py",
            "tests/test_delay.py",
            "tests/test_ndc_sem_policies.py",
            "tests/test_pinned_discounted.py",
            "tests/test_pinned_semibandit_baselines.py",
        ),
    ),
    "semibandit": Target(
        f"{PKG}/policies/semibandit.py",
        (
            "tests/test_pinned_semibandit_baselines.py",
            "tests/test_pinned_cucb_cts.py",
            "tests/test_ndc_sem_policies.py",
        ),
    ),
    "mutual_information": Target(
        f"{PKG}/estimators/mutual_information.py",
        (
            "tests/test_mutual_information.py",
            "tests/test_pinned_mutual_information.py",
            "tests/test_estimators.py",
            "tests/test_csl_speed_identity.py",
        ),
    ),
    "lasso": Target(
        f"{PKG}/estimators/lasso.py",
        ("tests/test_lasso.py", "tests/test_pinned_lasso.py", "tests/test_estimators.py"),
    ),
    "linear_bandit": Target(
        f"{PKG}/envs/linear_bandit.py",
        (
            "tests/test_environment.py",
            "tests/test_linear_sem.py",
            "tests/test_pinned_environment.py",
            "tests/test_pinned_linear_bandit.py",
            "tests/test_deviations.py",
            "tests/test_pinned_linsem.py",
        ),
    ),
    "ftrl": Target(
        f"{PKG}/policies/ftrl.py",
        (
            "tests/test_ftrl.py",
            "tests/test_pinned_ftrl.py",
            "tests/test_pinned_semibandit_baselines.py",
            "tests/test_ndc_sem_policies.py",
        ),
    ),
    # The claim checks: only the verdict functions and the summaries they read are mutated
    # (the rest of these files is plotting and report text).
    "robust_lcb_checks": Target(
        f"{PKG}/papers/robust_lcb/figures.py",
        ("tests/test_claims_robust_lcb.py",),
        ("_checks", "_late_slopes", "worst_case_regret"),
    ),
    "ndc_sem_synthetic_checks": Target(
        f"{PKG}/papers/ndc_sem/synthetic_report.py",
        ("tests/test_claims_ndc_sem.py",),
        (
            "claim_checks",
            "final_means",
            "_algorithm_order",
            "_delays",
            "optimality_ratio",
            "ratio_groups",
            "outcome",
            "paired_table",
        ),
    ),
    "ndc_sem_covid_checks": Target(
        f"{PKG}/papers/ndc_sem/covid_report.py",
        ("tests/test_claims_ndc_sem.py",),
        (
            "claim_checks",
            "selection_matrix",
            "day_rows",
            "primary_unit",
            "learned_start",
            "selection_dynamics",
            "reward_summary",
        ),
    ),
    # SEM-UCB (Nourani-Koliji et al.): the SEMSemiBandit skeleton with the undiscounted index;
    # its statistics are "discounted" above and its graph learner "lasso".
    "sem_ucb": Target(
        f"{PKG}/policies/ndc_sem.py",
        (
            "tests/test_pinned_sem_ucb.py",
            "tests/test_pinned_semibandit_baselines.py",
            "tests/test_ndc_sem_policies.py",
        ),
        (
            "SEMUCB.__init__",
            "SEMSemiBandit.__init__",
            "SEMSemiBandit.gamma",
            "SEMSemiBandit.xi",
            "SEMSemiBandit.reset",
            "SEMSemiBandit.select",
            "SEMSemiBandit.update",
            "SEMSemiBandit.adjacency",
            "DiscountedIndex.__post_init__",
            "DiscountedIndex.statistics",
            "LassoGraph.__post_init__",
            "LassoGraph.learner",
            "LassoGraph.feed",
            "initialisation_matrix",
            "_constant",
        ),
    ),
    # ---- issue 32: the causal-BO, SSEM-UCB, train-delay and pooled-testing modules.
    "jets": Target(
        f"{PKG}/estimators/jets.py",
        (
            "tests/test_ssem_helpers_equations.py",
            "tests/test_ssem_model.py",
            "tests/test_ssem_noise_and_derivatives.py",
            "tests/test_ssem_ucb.py",
            "tests/test_ssem_variants.py",
        ),
    ),
    "taylor_moments": Target(
        f"{PKG}/estimators/taylor_moments.py",
        (
            "tests/test_ssem_helpers_equations.py",
            "tests/test_ssem_ucb.py",
            "tests/test_ssem_variants.py",
        ),
    ),
    "dictionary_lasso": Target(
        f"{PKG}/estimators/dictionary_lasso.py",
        (
            "tests/test_mut_dictionary_lasso.py",
            "tests/test_ssem_helpers_equations.py",
            "tests/test_ssem_model.py",
            "tests/test_ssem_ucb.py",
            "tests/test_ssem_variants.py",
        ),
    ),
    "ssem_ucb": Target(
        f"{PKG}/policies/ssem_ucb.py",
        (
            "tests/test_mut_ssem_ucb.py",
            "tests/test_ssem_ucb.py",
            "tests/test_ssem_variants.py",
            "tests/test_ssem_noise_and_derivatives.py",
        ),
    ),
    # Every test of the simulator and its table; not the COVID problem's end-to-end optimum
    # (5 s per mutant through the table) nor its objective (torch only).
    "pooled_testing": Target(
        f"{PKG}/envs/pooled_testing.py",
        ("tests/test_mut_pooled_testing.py",)
        + tuple(
            f"tests/test_pooled_testing.py::{name}"
            for name in (
                "test_vectorised_simulator_agrees_with_the_loop_version",
                "test_infected_share_matches_the_prevalence",
                "test_group_size_one_is_one_test_per_person",
                "test_prevalence_zero_and_one_closed_forms",
                "test_deterministic_for_a_seed_and_common_random_numbers",
                "test_table_equals_the_simulator_on_the_grid",
                "test_table_interpolates_within_the_measured_error",
                "test_table_disk_cache",
                "test_bad_prevalence",
                "test_bad_group_size",
                "test_bad_fidelity",
                "test_bad_table_queries",
                "test_period_dynamics_by_hand",
                "test_pool_sizes",
                "test_network_structure_and_mechanisms",
            )
        ),
    ),
    # The loader's own tests (the environments' tests fit the simulator to the data: 10-15 s
    # per mutant, and they read only what the loader's tests check).
    "train_delays_data": Target(
        f"{PKG}/data/train_delays.py",
        ("tests/test_mut_train_delays.py", "tests/test_train_delays.py"),
    ),
    # The simulator and the fit: tests on small hand-built fits and data (fitting the real data
    # costs 10-40 s per mutant).
    "train_delays_env": Target(
        f"{PKG}/envs/train_delays.py",
        ("tests/test_mut_train_delays_env.py",),
    ),
    "train_delay_fit": Target(
        f"{PKG}/envs/train_delay_fit.py",
        ("tests/test_mut_train_delay_fit.py", "tests/test_mut_train_delays_env.py"),
    ),
    # The BO targets fit GPs in every test: the policy-level formula tests first (``--listed``
    # stops at the first failure), then only the cheap tests of test_causal_bo.py and
    # test_nmcbo.py that read each module (their comparison-grid, Monte Carlo noise and
    # batched-versus-looped tests cost 5 to 17 s each per mutant).
    "exogenous": Target(
        f"{PKG}/estimators/exogenous.py",
        (
            "tests/test_bo_policies_formulas.py",
            "tests/test_exogenous.py",
            "tests/test_mut_exogenous.py",
        ),
    ),
    "gp_network": Target(
        f"{PKG}/estimators/gp_network.py",
        ("tests/test_bo_policies_formulas.py", "tests/test_gp_network.py"),
    ),
    "excbo": Target(
        f"{PKG}/policies/excbo.py",
        (
            "tests/test_bo_policies_formulas.py",
            "tests/test_causal_bo.py::test_bad_input_is_refused",
        ),
    ),
    "bo_baselines": Target(
        f"{PKG}/policies/bo_baselines.py",
        (
            "tests/test_bo_policies_formulas.py",
            "tests/test_causal_bo.py::test_bad_input_is_refused",
            "tests/test_causal_bo.py::test_noise_knowledge_is_checked",
        ),
    ),
    "nmcbo": Target(
        f"{PKG}/policies/nmcbo.py",
        (
            "tests/test_bo_policies_formulas.py",
            "tests/test_nmcbo.py::test_stopping_rule_equals_botorch_per_element",
            # the training loop's stopping, step counts and chunking (about 5 s per mutant)
            "tests/test_nmcbo.py::test_batched_reinitialisations_equal_looped_ones",
            "tests/test_nmcbo.py::test_eta_lies_in_the_unit_interval_and_is_one_at_the_target",
            "tests/test_nmcbo.py::test_a_composite_objective_learns_every_eta",
            "tests/test_nmcbo.py::test_proposals_are_valid_deterministic_and_warm_started",
            "tests/test_nmcbo.py::test_warm_starts_join_the_random_initialisations",
            "tests/test_nmcbo.py::test_batch_size_follows_the_reference_runner",
            "tests/test_nmcbo.py::test_bad_input_is_refused",
            "tests/test_nmcbo.py::test_a_proposal_draws_starts_noise_and_selection_in_turn_from_one_seeded_stream",
            "tests/test_nmcbo.py::test_initialisations_follow_the_documented_laws_and_their_seed",
            "tests/test_nmcbo.py::test_every_node_network_takes_its_gp_inputs_on_alpine2",
            "tests/test_nmcbo.py::test_options_come_as_an_object_with_changes_on_top",
            "tests/test_nmcbo.py::test_training_refuses_an_unknown_stopping_rule",
        ),
    ),
    # Not in the list (CSL-UCB's paper module is another work item's).
    "csl_ucb_checks": Target(
        f"{PKG}/papers/csl_ucb/bandits.py",
        ("tests/test_csl_ucb.py",),
        ("claim_checks",),
        acceptance=False,
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


def prepare_workdir(work: Path, target: Target) -> None:
    """A fresh scratch copy of the sources and tests with a module-specific mutmut config."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    copy_tree(work)
    link_shared_data(work)
    conftest = work / "tests" / "conftest.py"
    conftest.write_text(conftest.read_text() + FRESH_CACHES)
    selection = "\n".join(f"    {t}" for t in target.tests)
    (work / "setup.cfg").write_text(
        "[mutmut]\n"
        "source_paths = src\n"
        f"only_mutate = {target.module}\n"
        f"pytest_add_cli_args_test_selection =\n{selection}\n"
        "pytest_add_cli_args =\n    -p\n    no:cacheprovider\n    -q\n"
    )


#: Appended to the scratch copy's ``tests/conftest.py``: mutmut forks every mutant's test run
#: from a process that has already imported (and run) the code, so a ``functools.cache`` filled
#: there (e.g. ``jets.monomials``) would hand the mutant the original code's results and hide
#: every mutant of the functions behind it. The caches are emptied when the mutant's session
#: starts (before any module- or session-scoped fixture, e.g. a cached table built for a whole
#: test module) and again before each test.
FRESH_CACHES = """

def _mutation_clear_caches():
    import sys

    for name, module in list(sys.modules.items()):
        if not name.startswith("causalbandits") or module is None:
            continue
        for value in list(vars(module).values()):
            members = list(vars(value).values()) if isinstance(value, type) else []
            for item in (value, *members):
                clear = getattr(item, "cache_clear", None)
                if callable(clear):
                    clear()


@pytest.fixture(autouse=True, scope="session")
def _mutation_fresh_caches_per_session():
    _mutation_clear_caches()
    yield


@pytest.fixture(autouse=True)
def _mutation_fresh_caches():
    _mutation_clear_caches()
    yield
"""


def link_shared_data(work: Path) -> None:
    """The shared data folder beside the repository (``../shared``: the train-delay and COVID
    files the tests read through ``parents[2] / "shared"`` or the working directory's
    ``../shared``) linked where the copied tests look for it: beside the scratch copy (tests
    run in it, ``--listed``) and inside it (mutmut runs them from its ``mutants`` copy).
    Without it those tests skip and every mutant they would catch survives."""
    shared = ROOT.parent / "shared"
    if not shared.is_dir():
        return
    for link in (work.parent / "shared", work / "shared"):
        if not link.exists():
            link.symlink_to(shared, target_is_directory=True)


def copy_tree(work: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache")
    shutil.copytree(ROOT / "src", work / "src", ignore=ignore)
    shutil.copytree(ROOT / "tests", work / "tests", ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", work / "pyproject.toml")


def mutmut_environment() -> dict[str, str]:
    """The environment of a mutmut run: no PYTHONPATH to mutants/src (mutmut puts it on
    sys.path itself, and a path that does not exist yet at start-up would be cached as
    unimportable), and one OpenMP/MKL thread: mutmut forks every mutant's test run from a
    parent that has run the tests, and a forked child of a parent whose torch thread pool is
    up can hang in it until mutmut's timeout, which counts as a kill (NMCBO's 39 timeouts and
    GP-network's 36 before this)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {**env, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def mutmut_exe() -> str:
    exe = Path(sys.executable).with_name("mutmut")
    return str(exe) if exe.exists() else "mutmut"


def mangled(function: str) -> str:
    """mutmut's name of a function (``f`` -> ``x_f``, ``C.m`` -> ``xǁCǁm``)."""
    if "." in function:
        cls, method = function.split(".")
        return f"xǁ{cls}ǁ{method}"
    return f"x_{function}"


def dotted(module: str) -> str:
    """``src/causalbandits/a/b.py`` -> ``causalbandits.a.b`` (mutmut's mutant-name prefix)."""
    return module.removeprefix("src/").removesuffix(".py").replace("/", ".")


def selected(target: Target, name: str) -> bool:
    """Whether mutant ``name`` lies in one of the target's functions (all when none given)."""
    if not target.functions:
        return True
    func = name.split(".")[-1].rsplit("__mutmut_", 1)[0]
    return func in {mangled(f) for f in target.functions}


def function_spans(source: str) -> dict[str, tuple[int, int]]:
    """mutmut's mangled function names (``x_f``, ``xǁClassǁmethod``) -> (first line, last line)."""
    spans: dict[str, tuple[int, int]] = {}
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            spans[f"x_{node.name}"] = (node.lineno, node.end_lineno or node.lineno)
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


def collect(work: Path, target: Target) -> dict:
    module = target.module
    meta = work / "mutants" / (module + ".meta")
    data = json.loads(meta.read_text())
    codes = {k: v for k, v in data.get("exit_code_by_key", {}).items() if selected(target, k)}
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
        "functions": list(target.functions) or None,
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
    target = MODULES[key]
    work = workroot / key
    if not rerun:  # re-read the results of an earlier run in the same work directory
        result = collect(work, target)
        result.update(key=key, tests=list(target.tests), wall_seconds=None)
        return result
    prepare_workdir(work, target)
    env = mutmut_environment()
    # Restricted to some functions: mutmut still generates every mutant of the file but
    # tests only those matching these patterns (the others stay "not checked").
    patterns = [f"{dotted(target.module)}.{mangled(f)}__mutmut_*" for f in target.functions]
    start = time.perf_counter()
    proc = subprocess.run(
        [mutmut_exe(), "run", "--max-children", str(max_children), *patterns],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    (work / "mutmut-run.log").write_text(proc.stdout + "\n" + proc.stderr)
    if not (work / "mutants" / (target.module + ".meta")).exists():
        tail = (proc.stdout + proc.stderr)[-3000:]
        raise RuntimeError(f"mutmut run failed for {key} (exit {proc.returncode}):\n{tail}")
    result = collect(work, target)
    result.update(key=key, tests=list(target.tests), wall_seconds=round(wall, 1))
    return result


def classify_survivors(key: str, result: dict) -> None:
    """Attach the recorded class (equivalent / harmless) and reason to every survivor."""
    for s in result["survivors"]:
        verdict = classify(key, s["original"], s["mutated"])
        s["class"], s["reason"] = verdict if verdict else ("unclassified", "")


def overall(modules: dict) -> dict:
    """Totals over the acceptance targets present in the results."""
    keys = [k for k in MODULES if MODULES[k].acceptance and k in modules]
    total = {f: sum(modules[k][f] for k in keys) for f in ("mutants", "killed", "survived")}
    total["timeouts"] = sum(modules[k]["timeouts"] for k in keys)
    total["no_tests"] = sum(modules[k]["no_tests"] for k in keys)
    decided = total["killed"] + total["survived"] + total["timeouts"] + total["no_tests"]
    detected = total["killed"] + total["timeouts"]
    total["kill_rate"] = round(detected / decided, 4) if decided else None  # no target run
    classes: dict[str, int] = {}
    for k in keys:
        for s in modules[k]["survivors"]:
            classes[s.get("class", "unclassified")] = (
                classes.get(s.get("class", "unclassified"), 0) + 1
            )
    total["survivor_classes"] = classes
    total["keys"] = keys
    total["wall_seconds"] = round(sum(modules[k]["wall_seconds"] or 0 for k in keys), 1)
    return total


def report(r: dict) -> None:
    rate = "n/a" if r["kill_rate"] is None else f"{100 * r['kill_rate']:.1f}%"
    print(
        f"{r['key']:<20} {r['module']}\n"
        f"    mutants {r['mutants']}, killed {r['killed']}, survived {r['survived']}, "
        f"timeouts {r['timeouts']}, no tests {r['no_tests']}, other {r['other'] or 0}; "
        f"kill rate {rate}; {r['wall_seconds']} s"
    )
    for s in r["survivors"]:
        print(
            f"    {s['status'].upper():<9} {s['location']}: {s['original']}  ->  {s['mutated']}"
            f"  [{s.get('class', '?')}]"
        )


# --------------------------------------------------------------------- the listed mutants


def run_listed(workroot: Path, keys: list[str] | None = None) -> dict:
    """Apply each hand-written mutant of :data:`LISTED` (of the targets ``keys``; all when
    empty) to a scratch copy and run the tests of its target; every one must make them fail."""
    work = workroot / "listed"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    copy_tree(work)
    link_shared_data(work)
    env = mutmut_environment()
    env["PYTHONPATH"] = str(work / "src")
    results = {}
    for mutant in LISTED:
        if keys and mutant.key not in keys:
            continue
        path = work / MODULES[mutant.key].module
        original = path.read_text()
        if original.count(mutant.old) != 1:
            raise RuntimeError(f"{mutant.name}: {mutant.old!r} must occur exactly once")
        path.write_text(original.replace(mutant.old, mutant.new))
        try:
            start = time.perf_counter()
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-x",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    *MODULES[mutant.key].tests,
                ],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
            )
            wall = time.perf_counter() - start
        finally:
            path.write_text(original)
        failed = re.findall(r"^FAILED (\S+)", proc.stdout, flags=re.MULTILINE)
        killed = proc.returncode == 1 and bool(failed)
        results[mutant.name] = {
            "key": mutant.key,
            "original": mutant.old.strip(),
            "mutated": mutant.new.strip(),
            "killed": killed,
            "killed_by": failed[:1],
            "wall_seconds": round(wall, 1),
        }
        print(f"{'KILLED' if killed else 'SURVIVED':<9} {mutant.name}: {failed[:1]}")
    return results


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
    parser.add_argument(
        "--listed",
        action="store_true",
        help="(only) check that every hand-written mutant of LISTED is killed",
    )
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)
    if args.list:
        for key, target in MODULES.items():
            only = f" [{', '.join(target.functions)}]" if target.functions else ""
            print(f"{key:<26} {target.module}{only}  <-  {' '.join(target.tests)}")
        return 0
    summary = json.loads(args.output.read_text()) if args.output.exists() else {"modules": {}}
    summary["tool"] = f"mutmut {version('mutmut')}"
    keys = args.modules or list(MODULES)
    unknown = [k for k in keys if k not in MODULES]
    if unknown:
        parser.error(f"unknown module key(s) {unknown}; choose from {list(MODULES)}")
    if args.listed:  # with keys: only their listed mutants, merged into the recorded ones
        ran = run_listed(args.workdir, args.modules)
        recorded = summary.get("listed", {}) if args.modules else {}
        order = [m.name for m in LISTED]
        merged = {**recorded, **ran}
        summary["listed"] = {n: merged[n] for n in order if n in merged}
        write(summary, args.output)
        return 0 if all(r["killed"] for r in ran.values()) else 1
    for key in keys:
        result = run_module(key, args.workdir, args.max_children, rerun=not args.collect_only)
        if result["wall_seconds"] is None:  # --collect-only keeps the recorded wall time
            result["wall_seconds"] = summary["modules"].get(key, {}).get("wall_seconds")
        classify_survivors(key, result)
        report(result)
        result["finished_utc"] = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        summary["modules"][key] = result
        write(summary, args.output)
    return 0


def write(summary: dict, output: Path) -> None:
    """The JSON summary (with the overall rate over the acceptance targets) and, beside it,
    the survivors' classification as markdown."""
    summary["modules"] = {k: summary["modules"][k] for k in MODULES if k in summary["modules"]}
    for key, result in summary["modules"].items():
        classify_survivors(key, result)
    summary["overall"] = overall(summary["modules"])
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    output.with_name(output.stem + "_survivors.md").write_text(survivors_markdown(summary))


def survivors_markdown(summary: dict) -> str:
    lines = [
        "# Mutation testing: the surviving mutants and why each is acceptable",
        "",
        "Written by `benchmarks/mutation.py` from `mutation.json`; the classes and reasons come "
        "from `benchmarks/mutation_survivors.py`. *equivalent*: no input can tell the mutant "
        "from the original (same results, at most a different speed or memory use); "
        "*harmless*: observable only outside the documented use (inputs the callers never "
        "pass, floating-point ties of measure zero, a convergence loop's speed).",
        "",
    ]
    total = summary.get("overall")
    if total and total["kill_rate"] is not None:
        lines += [
            f"Overall (the issue's targets): {total['mutants']} mutants, kill rate "
            f"{100 * total['kill_rate']:.1f}%; survivors: "
            + ", ".join(f"{n} {c}" for c, n in sorted(total["survivor_classes"].items()))
            + ".",
            "",
        ]
    for key, r in summary["modules"].items():
        rate = "n/a" if r["kill_rate"] is None else f"{100 * r['kill_rate']:.1f}%"
        lines += [
            f"## {key} (`{r['module']}`): {r['survived'] + r['no_tests']} survivors of "
            f"{r['mutants']}, kill rate {rate}",
            "",
        ]
        if not r["survivors"]:
            continue
        lines += ["| line | original -> mutated | class | why |", "|---|---|---|---|"]
        for s in r["survivors"]:
            line = s["location"].rsplit(":", 1)[1]
            change = f"`{s['original']}` -> `{s['mutated']}`".replace("|", "\\|")
            reason = s["reason"].replace("|", "\\|")
            lines.append(f"| {line} | {change} | {s['class']} | {reason} |")
        lines.append("")
    listed = summary.get("listed")
    if listed:
        lines += ["## The listed mutants (hand-written, `--listed`)", ""]
        lines += ["| mutant | killed | by |", "|---|---|---|"]
        for name, r in listed.items():
            escaped = name.replace("|", "\\|")
            killed = "yes" if r["killed"] else "NO"
            lines.append(f"| {escaped} | {killed} | {', '.join(r['killed_by'])} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
