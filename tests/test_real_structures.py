import warnings

import networkx as nx
import numpy as np
import pytest

from causalbandits.assumptions import AssumptionWarning
from causalbandits.envs.linear_bandit import LinearSEMBandit
from causalbandits.envs.mixed_sign import mixed_sign_bandit
from causalbandits.envs.real_structures import real_structure_bandit
from causalbandits.graphs.zoo import NAMES, PARENTS, structure

SIZES = {
    "asia": (8, 8),
    "sachs": (11, 17),
    "child": (20, 25),
    "insurance": (27, 52),
    "alarm": (37, 46),
}
# Read in the BIF files: (first node, last node) and some nodes' parents.
ENDS = {
    "asia": ("asia", "dysp"),
    "sachs": ("Akt", "Raf"),
    "child": ("BirthAsphyxia", "Sick"),
    "insurance": ("GoodStudent", "DrivHist"),
    "alarm": ("HISTORY", "BP"),
}
FACTS = {
    "asia": {
        "either": {"lung", "tub"},
        "dysp": {"bronc", "either"},
        "tub": {"asia"},
        "asia": set(),
    },
    "sachs": {"Mek": {"PKA", "PKC", "Raf"}, "Akt": {"Erk", "PKA"}, "PKC": set(), "Plcg": set()},
    "child": {
        "Disease": {"BirthAsphyxia"},
        "LowerBodyO2": {"HypDistrib", "HypoxiaInO2"},
        "Age": {"Disease", "Sick"},
    },
    "insurance": {
        "ThisCarCost": {"ThisCarDam", "CarValue", "Theft"},
        "MedCost": {"Accident", "Age", "Cushioning"},
        "PropCost": {"OtherCarCost", "ThisCarCost"},
        "Mileage": set(),
    },
    "alarm": {
        "CATECHOL": {"ARTCO2", "INSUFFANESTH", "SAO2", "TPR"},
        "VENTLUNG": {"INTUBATION", "KINKEDTUBE", "VENTTUBE"},
        "HISTORY": {"LVFAILURE"},
        "BP": {"CO", "TPR"},
    },
}


def _intervenable(bandit: LinearSEMBandit) -> set[str]:
    """The nodes of the arm that intervenes on every intervenable node."""
    return {bandit.sem.dag.names[i] for i in np.flatnonzero(bandit.actions.masks[-1])}


def test_the_networks_come_by_size_with_their_published_node_and_edge_counts():
    assert NAMES == ("asia", "sachs", "child", "insurance", "alarm") == tuple(SIZES)
    for name, (nodes, edges) in SIZES.items():
        graph = structure(name)
        assert (graph.number_of_nodes(), graph.number_of_edges()) == (nodes, edges)
        assert nx.is_directed_acyclic_graph(graph)


@pytest.mark.parametrize("name", NAMES)
def test_the_structures_match_the_bif_files(name):
    graph = structure(name)
    assert (list(graph)[0], list(graph)[-1]) == ENDS[name]
    assert list(graph) == list(PARENTS[name])
    for node, parents in FACTS[name].items():
        assert set(graph.predecessors(node)) == parents


def test_an_unknown_network_is_refused_with_the_known_names():
    with pytest.raises(ValueError, match="asia, sachs, child, insurance, alarm"):
        structure("andes")
    with pytest.raises(ValueError, match="unknown network"):
        real_structure_bandit(name="Asia")


@pytest.mark.parametrize("name", NAMES)
def test_each_name_and_instance_is_one_fixed_instance(name):
    bandit, again = real_structure_bandit(100, name, 3), real_structure_bandit(100, name, 3)
    np.testing.assert_array_equal(bandit.sem.weights, again.sem.weights)
    np.testing.assert_array_equal(bandit.sem.intervention_weights, again.sem.intervention_weights)
    np.testing.assert_array_equal(bandit.sem.noise.loc, again.sem.noise.loc)
    np.testing.assert_array_equal(bandit.expected_rewards, again.expected_rewards)
    other = real_structure_bandit(100, name, 4)
    assert not np.array_equal(bandit.sem.weights, other.sem.weights)
    assert not np.array_equal(bandit.sem.noise.loc, other.sem.noise.loc)


@pytest.mark.parametrize("name", NAMES)
def test_the_bandit_follows_the_documented_rule(name):
    graph = structure(name)
    bandit = real_structure_bandit(100, name)
    names = bandit.sem.dag.names
    weights = np.concatenate([bandit.sem.weights.ravel(), bandit.sem.intervention_weights.ravel()])
    assert (weights < 0).any() and (weights > 0).any()
    assert np.all((np.abs(weights) >= 0.4) | (weights == 0)) and np.abs(weights).max() <= 1
    counts = [len(nx.ancestors(graph, v)) for v in graph]
    latest = max(i for i, count in enumerate(counts) if count == max(counts))
    reward = names[bandit.reward_node]
    assert reward == list(graph)[latest]
    inner = {v for v in nx.ancestors(graph, reward) if graph.in_degree(v) > 0}
    assert _intervenable(bandit) <= inner
    assert bandit.n_actions == 2 ** min(5, len(inner))
    assert np.ptp(bandit.expected_rewards) > 1e-6
    assert np.all(np.abs(bandit.sem.noise.loc) <= 2)
    assert np.all((bandit.sem.noise.scale >= 0.5) & (bandit.sem.noise.scale <= 1.5))


@pytest.mark.parametrize("name", NAMES)
def test_roots_are_never_intervenable(name):
    graph = structure(name)
    bandit = real_structure_bandit(100, name, n_intervenable=2)
    assert bandit.n_actions == 4
    assert all(graph.in_degree(v) > 0 for v in _intervenable(bandit))


def test_no_network_has_duplicate_arms_at_the_defaults():
    with warnings.catch_warnings():
        warnings.simplefilter("error", AssumptionWarning)
        arms = [real_structure_bandit(100, name).n_actions for name in NAMES]
    assert arms == [16, 16, 32, 32, 32]


def test_the_mixed_sign_networks_are_unchanged_by_the_shared_drawing():
    bandit = mixed_sign_bandit(5000, 0)
    names = bandit.sem.dag.names
    at = {name: i for i, name in enumerate(names)}
    weights, star = bandit.sem.weights, bandit.sem.intervention_weights
    recorded = {("V0", "V1"): -0.42458411436171684, ("V0", "V5"): 0.4169918026872778}
    recorded[("V2", "V3")] = 0.8895121324729193
    for (source, target), value in recorded.items():
        assert weights[at[source], at[target]] == pytest.approx(value, abs=1e-12)
    assert star[at["V21"], at["V22"]] == pytest.approx(0.6535770378548688, abs=1e-12)
    assert star[at["V40"], at["V41"]] == pytest.approx(0.650468867322628, abs=1e-12)
    assert names[bandit.reward_node] == "V49"
    assert bandit.sem.noise.loc[at["V49"]] == pytest.approx(1.9021319137072816, abs=1e-12)
    assert bandit.sem.noise.scale[at["V49"]] == pytest.approx(0.6074772283861473, abs=1e-12)
    assert bandit.actions.labels[-1] == "{V17,V22,V27,V29,V41}"
    assert bandit.expected_rewards.max() == pytest.approx(0.14416041141666236, abs=1e-12)
    other = mixed_sign_bandit(5000, 101)
    assert other.actions.labels[-1] == "{V5,V12,V10,V41,V45}"
    assert other.expected_rewards[0] == pytest.approx(0.5257823309053333, abs=1e-12)
