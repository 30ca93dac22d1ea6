"""Rounds of the public MCBO package's MCBO, timed, for ``bench_mcbo_peer.py``.

Runs in the package's own environment (its Python, its BoTorch), with the package
unmodified: it imports nothing of ours. Reads one job as JSON from stdin::

    {"package": "/path/to/mcbo", "sigma": 0.05, "beta": 5.0, "seed": 0,
     "actions": [[a0, a1], ...], "nodes": [[x, y], ...] or null, "rounds": 12}

``nodes`` (the node values of ``actions``) are drawn from the package's Dropwave when null.
Each round calls the package's ``get_new_suggested_point`` (GP-network fit and acquisition
optimisation) under ``torch.manual_seed(seed + round)``, then observes the package's
Dropwave at the new action. One untimed call on the starting data comes first, so that
the timed calls find the process warm (imports and first-call costs paid), as ours do.
Writes ``{"seconds": [...], "actions": [...]}`` to stdout: the CPU seconds of each call
and each call's action.
"""

import json
import sys
import time
import warnings


def main() -> None:
    job = json.load(sys.stdin)
    sys.path[:0] = [job["package"], job["package"] + "/scripts"]
    import torch
    import wandb
    from botorch.acquisition.objective import GenericMCObjective
    from botorch.settings import debug
    from functions import Dropwave
    from mcbo.mcbo_trial import get_new_suggested_point

    # The package runner's settings (scripts/runner.py).
    warnings.filterwarnings("ignore")
    torch.set_default_dtype(torch.float64)
    debug._set_state(True)
    torch.set_num_threads(1)
    wandb.init(mode="disabled")  # the package logs every acquisition value to wandb
    sigma = job["sigma"]
    env = Dropwave(noise_scales=sigma)
    env_profile = env.get_env_profile()
    algo_profile = {
        "algo": "MCBO",
        "seed": job["seed"],
        "beta": job["beta"],
        "n_init_evals": len(job["actions"]),
        "n_bo_iter": job["rounds"],
        "initial_obs_samples": 10,
        "initial_int_samples": 2,
        "batch_size": 32 if sigma > 0.001 else 2,
    }
    objective = GenericMCObjective(lambda y: y[..., -1])
    torch.manual_seed(job["seed"])
    actions = torch.tensor(job["actions"])
    nodes = env.evaluate(actions) if job["nodes"] is None else torch.tensor(job["nodes"])

    def suggest():
        return get_new_suggested_point(
            X=actions,
            network_observation_at_X=nodes,
            observation_at_X=objective(nodes),
            algo_profile=algo_profile,
            env_profile=env_profile,
            function_network=env.evaluate,
            network_to_objective_transform=objective,
            old_nets=[],
        )

    torch.manual_seed(job["seed"])
    suggest()  # warm-up, untimed
    seconds, chosen = [], []
    for round_ in range(job["rounds"]):
        torch.manual_seed(job["seed"] + round_)
        start = time.process_time()
        new_action, _ = suggest()
        seconds.append(time.process_time() - start)
        chosen.append(new_action[0].tolist())
        actions = torch.cat([actions, new_action])
        nodes = torch.cat([nodes, env.evaluate(new_action)])
    json.dump({"seconds": seconds, "actions": chosen}, sys.stdout)


if __name__ == "__main__":
    main()
