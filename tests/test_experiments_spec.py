"""Experiment specs: validation, YAML round trip, fingerprints."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from causalbandits.experiments import AlgorithmSpec, ExperimentSpec


def make_spec(**changes: object) -> ExperimentSpec:
    spec = ExperimentSpec(
        name="demo",
        environment="robust-lcb",
        env_params={"design": "negate", "placement": "start"},
        settings=[{"deviation_budget": 2}, {"deviation_budget": 200.0}],
        algorithms=[
            AlgorithmSpec("random", "random"),
            AlgorithmSpec("custom", "my.module:MyPolicy", {"beta": 0.5, "sizes": [1, 2]}),
        ],
        horizon=1000,
        replicates=12,
        seed=3,
        chunk_size=4,
        checkpoints=50,
        sweep="deviation_budget",
        description="a demo",
    )
    return spec.replace(**changes)


def test_yaml_round_trip(tmp_path: Path) -> None:
    spec = make_spec()
    loaded = ExperimentSpec.from_yaml(spec.to_yaml(tmp_path / "spec.yaml"))
    assert loaded == spec
    assert loaded.to_dict() == spec.to_dict()
    assert loaded.fingerprint() == spec.fingerprint()
    assert isinstance(loaded.settings[1]["deviation_budget"], float)


def test_from_dict_accepts_plain_algorithm_dicts() -> None:
    data = make_spec().to_dict()
    data["algorithms"] = [{"label": "random", "policy": "random"}]
    assert ExperimentSpec.from_dict(data).algorithms == [AlgorithmSpec("random", "random")]


def test_numpy_scalars_become_plain_python() -> None:
    spec = make_spec(
        settings=[{"deviation_budget": np.int64(2)}], env_params={"x": np.float64(0.5)}
    )
    assert type(spec.settings[0]["deviation_budget"]) is int
    assert (
        spec.fingerprint()
        == make_spec(settings=[{"deviation_budget": 2}], env_params={"x": 0.5}).fingerprint()
    )


def test_fingerprint_tracks_results_not_description() -> None:
    spec = make_spec()
    assert spec.fingerprint() == make_spec().fingerprint()
    assert spec.fingerprint() == spec.replace(description="other words").fingerprint()
    for change in ({"seed": 4}, {"replicates": 13}, {"chunk_size": 3}, {"horizon": 999}):
        assert spec.fingerprint() != spec.replace(**change).fingerprint(), change
    reordered = {**dict(reversed(list(spec.env_params.items())))}
    assert spec.replace(env_params=reordered).fingerprint() == spec.fingerprint()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"horizon": 0}, "horizon T must be an integer >= 1"),
        ({"horizon": -5}, "horizon T must be an integer >= 1"),
        ({"horizon": 10.5}, "horizon T must be an integer >= 1"),
        ({"replicates": 0}, "replicates must be an integer >= 1"),
        ({"chunk_size": 0}, "chunk_size must be an integer >= 1"),
        ({"checkpoints": 0}, "checkpoints must be an integer >= 1"),
        ({"seed": -1}, "seed must be a non-negative integer"),
        ({"environment": "no-such-env"}, "unknown environment 'no-such-env'"),
        ({"algorithms": []}, "at least one algorithm"),
        (
            {"algorithms": [AlgorithmSpec("a", "random")] * 2},
            r"duplicate algorithm labels: \['a'\]",
        ),
        ({"settings": []}, "at least one setting"),
        ({"settings": [{"t": 3}]}, "reserved parameter names"),
        ({"settings": [{"horizon": 3}]}, "reserved parameter names"),
        ({"env_params": {"horizon": 3}}, "horizon"),
        ({"settings": [{"deviation_budget": [1, 2]}]}, "must be a scalar"),
        ({"settings": [{"design": "negate"}]}, "lacks the swept parameter 'deviation_budget'"),
    ],
)
def test_validation_errors(changes: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_spec(**changes)


def test_unknown_policy_lists_known_names() -> None:
    with pytest.raises(ValueError, match=r"unknown policy 'no-such-policy'.*random"):
        AlgorithmSpec("x", "no-such-policy")
    with pytest.raises(ValueError, match="not a 'module:Class' path"):
        AlgorithmSpec("x", "a b:C")


def test_unknown_keys_are_rejected() -> None:
    data = make_spec().to_dict()
    with pytest.raises(ValueError, match=r"unknown experiment spec keys: \['horizn'\]"):
        ExperimentSpec.from_dict({**data, "horizn": 3})
    with pytest.raises(ValueError, match=r"unknown algorithm keys: \['param'\]"):
        AlgorithmSpec.from_dict({"label": "a", "policy": "random", "param": {}})
