"""One meaning per label (issue 28): across the catalogue's specs and every paper's table of
legend names, a label names one policy class of the registry (two labels may share a class;
no label names two)."""

from __future__ import annotations

from collections import defaultdict

from causalbandits.experiments.protocol import SpecExperiment
from causalbandits.experiments.spec import resolve_policy
from causalbandits.papers.catalogue import EXPERIMENTS, load_experiment
from causalbandits.papers.excbo.comparison import METHODS as EXCBO_METHODS
from causalbandits.papers.ndc_sem.covid import POLICY_ENTRIES as COVID_ENTRIES
from causalbandits.papers.ndc_sem.paper import POLICY_ENTRIES as NDC_SEM_ENTRIES
from causalbandits.papers.ssem_ucb.paper import FAMILY_POLICIES
from causalbandits.policies import POLICIES


def label_classes() -> dict[str, set[str]]:
    """Every label of the catalogue's specs and the papers' label tables -> the names of the
    registry classes it builds."""
    seen: dict[str, set[str]] = defaultdict(set)
    for name in EXPERIMENTS:
        experiment = load_experiment(name, True)
        if isinstance(experiment, SpecExperiment):
            for algorithm in experiment.spec.algorithms:
                seen[algorithm.label].add(resolve_policy(algorithm.policy).__name__)
    tables = {
        **{label: entry for label, (entry, _) in NDC_SEM_ENTRIES.items()},
        **COVID_ENTRIES,
        **FAMILY_POLICIES,
        **EXCBO_METHODS,
    }
    for label, entry in tables.items():
        seen[label].add(POLICIES[entry].__name__)
    return seen


def test_no_label_names_two_policy_classes() -> None:
    seen = label_classes()
    assert {"UCB", "GP-UCB", "SEM-UCB", "SEM-UCB (linear dictionary)"} <= set(seen)
    collisions = {label: classes for label, classes in seen.items() if len(classes) > 1}
    assert collisions == {}


def test_the_causal_bo_ucb_is_labelled_apart_from_ucb1() -> None:
    seen = label_classes()
    assert seen["UCB"] == {"UCB1"} and seen["GP-UCB"] == {"GPUCB"}
