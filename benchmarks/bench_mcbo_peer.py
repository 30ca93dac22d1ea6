"""Our MCBO beside the public MCBO package's MCBO, timed side by side (issue 26, part 5).

Usage::

    python benchmarks/bench_mcbo_peer.py --package /path/to/mcbo \\
        --package-python /path/to/its/venv/bin/python

The package (github.com/ssethz/mcbo) runs unmodified in its own environment (it needs
BoTorch 0.7, which this project's BoTorch is not): ``benchmarks/peer_mcbo.py`` drives it
there through its ``get_new_suggested_point``, one subprocess per seed. The problem is the
package's own Dropwave: ``a_0, a_1 -> X -> Y`` with Gaussian noise of scale ``--sigma`` on
both nodes (ours: ``dropwave(noise="gaussian", propagate_noise=False)``, the same function
and noise). Both sides are told the noise variance ``sigma^2``, use the package's beta (5),
its 10 D restarts from 100 D raw points and 128 Monte Carlo samples, in float64 on one
thread, timed in CPU seconds. The optimisers differ in how they run L-BFGS-B: the package
in batches of 2 restarts until scipy's tolerance, ours all restarts in one batch of at most
200 iterations.

Two measurements per seed, the package and ours alternating, each after an untimed warm-up
round (imports and first-call costs paid on both sides):

* one round at ``n = 56`` observations (the same random actions and node values on both
  sides): seconds per round;
* ``--rounds`` BO rounds (12) after the same random design of 6 actions, each side
  observing its own Dropwave: seconds per round and the best ``E[y | a]`` found (design
  included, as the package logs it), compared per seed with the project's verdict rule.

EXCBO is timed on the same ``n = 56`` data for scale; the package has no EXCBO, so it gets
no ratio. Results go to stdout and ``benchmarks/results/mcbo_peer.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
from pathlib import Path

import numpy as np
import torch

from causalbandits.envs.bo_problems import dropwave
from causalbandits.envs.causal_bo import FunctionNetworkBandit
from causalbandits.experiments.evidence import PairedComparison
from causalbandits.experiments.runner import processor
from causalbandits.policies.bo_baselines import MCBO
from causalbandits.policies.causal_bo import SequentialOptimizer
from causalbandits.policies.excbo import EXCBO

OBSERVATIONS = 56
DESIGN = 6
BETA = 5.0
DRIVER = Path(__file__).with_name("peer_mcbo.py")


def package_rounds(
    args: argparse.Namespace,
    seed: int,
    actions: np.ndarray,
    nodes: np.ndarray | None,
    rounds: int,
) -> dict:
    """The package's MCBO for ``rounds`` rounds from ``actions`` (and ``nodes``, or its own
    draws when ``None``), in its own environment: ``{"seconds", "actions"}``."""
    job = {
        "package": str(args.package),
        "sigma": args.sigma,
        "beta": BETA,
        "seed": seed,
        "actions": np.asarray(actions).tolist(),
        "nodes": None if nodes is None else np.asarray(nodes).tolist(),
        "rounds": rounds,
    }
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "WANDB_MODE": "disabled"}
    done = subprocess.run(
        [str(args.package_python), str(DRIVER)],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"the MCBO package failed:\n{done.stderr}")
    return json.loads(done.stdout)


def observed(env: FunctionNetworkBandit, actions: np.ndarray) -> np.ndarray:
    """Node values of ``actions`` ``(n, 2)``, one environment step each."""
    return np.vstack([env.step(action[None])[0] for action in actions])


def our_rounds(policy: SequentialOptimizer, env: FunctionNetworkBandit, rounds: int) -> dict:
    """``rounds`` proposals of ``policy``, each observed on ``env``: CPU seconds and actions."""
    seconds, chosen = [], []
    for _ in range(rounds):
        start = time.process_time()
        action = policy.suggest()
        seconds.append(time.process_time() - start)
        chosen.append(action.tolist())
        policy.observe(action, env.step(action[None])[0])
    return {"seconds": seconds, "actions": chosen}


def our_mcbo(env: FunctionNetworkBandit, design: int) -> MCBO:
    """Our MCBO at the package's settings: beta 5, the noise variance told, ``design``
    observations before the first proposal."""
    return MCBO(env.problem, n_init=design, beta=BETA, noise="known")


def fed(
    policy: SequentialOptimizer, seed: int, played: np.ndarray, values: np.ndarray
) -> SequentialOptimizer:
    """``policy`` reset with ``seed`` after observing ``played`` and their node ``values``."""
    policy.reset(seed)
    for action, node_values in zip(played, values, strict=True):
        policy.observe(action, node_values)
    return policy


def data(sigma: float, seed: int) -> tuple[FunctionNetworkBandit, np.random.Generator, np.ndarray]:
    """Dropwave reset with ``seed``, the seed's generator and its ``n = 56`` random actions."""
    env = dropwave(sigma=sigma, noise="gaussian", propagate_noise=False, horizon=1000)
    env.reset(seed)
    rng = np.random.default_rng(seed)
    return env, rng, rng.random((OBSERVATIONS, 2))


def warm_up(sigma: float) -> None:
    """One untimed round of our MCBO and EXCBO, so that the timed rounds find this process
    warm (imports and first-call costs paid), as the package's driver does for its own."""
    env, _, actions = data(sigma, 0)
    nodes = observed(env, actions)
    for policy in (our_mcbo(env, OBSERVATIONS), EXCBO(env.problem, n_init=OBSERVATIONS)):
        fed(policy, 0, actions, nodes).suggest()


def one_seed(args: argparse.Namespace, seed: int) -> dict:
    """Both measurements of one seed, the package's first on even seeds, ours first on odd."""
    env, rng, actions = data(args.sigma, seed)
    nodes = observed(env, actions)

    def ours(
        policy: SequentialOptimizer, played: np.ndarray, values: np.ndarray, rounds: int
    ) -> dict:
        """``rounds`` proposals of ``policy`` after observing ``played`` and their ``values``."""
        return our_rounds(fed(policy, seed, played, values), env, rounds)

    design = rng.random((DESIGN, 2))
    steps = {
        "package_round": lambda: package_rounds(args, seed, actions, nodes, 1),
        "ours_round": lambda: ours(our_mcbo(env, OBSERVATIONS), actions, nodes, 1),
        "package_loop": lambda: package_rounds(args, seed, design, None, args.rounds),
        "ours_loop": lambda: ours(
            our_mcbo(env, DESIGN), design, observed(env, design), args.rounds
        ),
    }
    order = sorted(steps, key=lambda name: name.startswith("ours") == (seed % 2 == 0))
    result = {name: steps[name]() for name in order}
    result["excbo_round"] = ours(EXCBO(env.problem, n_init=OBSERVATIONS), actions, nodes, 1)
    best = {}
    for side in ("package", "ours"):
        played = np.vstack([design, np.asarray(result[f"{side}_loop"]["actions"])])
        best[side] = float(env.expected_reward(played[:, None, :]).max())
    result["best_expected"] = best
    return result


def mean_se(values: np.ndarray) -> list[float]:
    """``[mean, standard error]`` of ``values``."""
    return [float(values.mean()), float(values.std(ddof=1) / np.sqrt(len(values)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", type=Path, required=True, help="the MCBO repository")
    parser.add_argument("--package-python", type=Path, required=True)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--sigma", type=float, default=0.05)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "mcbo_peer.json"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    warm_up(args.sigma)
    runs = [one_seed(args, seed) for seed in range(args.seeds)]

    def median(key: str) -> float:
        return float(np.median([np.mean(run[key]["seconds"]) for run in runs]))

    seconds = {key: median(key) for key in runs[0] if key != "best_expected"}
    package_best = np.array([run["best_expected"]["package"] for run in runs])
    our_best = np.array([run["best_expected"]["ours"] for run in runs])
    comparison = PairedComparison.of(our_best - package_best)
    summary = {
        "n56_seconds": {
            "package MCBO": seconds["package_round"],
            "our MCBO": seconds["ours_round"],
            "our EXCBO": seconds["excbo_round"],
        },
        "n56_ratio_mcbo": seconds["package_round"] / seconds["ours_round"],
        "loop_seconds_per_round": {
            "package MCBO": seconds["package_loop"],
            "our MCBO": seconds["ours_loop"],
        },
        "loop_ratio_mcbo": seconds["package_loop"] / seconds["ours_loop"],
        "best_expected": {
            "package MCBO": mean_se(package_best),
            "our MCBO": mean_se(our_best),
            "our MCBO above the package's": f"{comparison.label}: {comparison.describe()}, "
            f"{comparison.test()}",
        },
    }
    for key, value in summary.items():
        print(f"{key}: {value}")
    result = {
        "seeds": args.seeds,
        "rounds": args.rounds,
        "sigma": args.sigma,
        "observations": OBSERVATIONS,
        "summary": summary,
        "runs": runs,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "processor": processor(),
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
