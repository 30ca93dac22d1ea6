"""The EXCBO paper's baselines (Sec. 7.1): GP-UCB on the objective alone, EICF (expected
improvement for composite functions) and MCBO (hallucinated GP network, noiseless variant).

All three follow the MCBO package's conventions (decisions: excbo 10, 11, 18; the package's
algorithm-list bug is not reproduced): actions in ``[0, 1]^|A|``, one new full-network
observation per round, BoTorch's multi-start L-BFGS-B with ``10 D`` restarts (at most 20)
from ``100 D`` raw points (at most 512).
"""

from __future__ import annotations

import numpy as np
import torch
from botorch.acquisition import qExpectedImprovement, qSimpleRegret
from botorch.acquisition.objective import GenericMCObjective
from botorch.models import ModelListGP
from botorch.sampling import SobolQMCNormalSampler

from causalbandits.envs.causal_bo import CausalBOProblem
from causalbandits.estimators.gp import DTYPE, node_gp
from causalbandits.estimators.gp_network import (
    CachedPosterior,
    GPNetwork,
    NetworkAcquisition,
    NodeSpec,
    training_inputs,
)
from causalbandits.policies.causal_bo import AcquisitionOptimiser, SequentialOptimizer

#: The near-noiseless observation variance of the GP-UCB and EICF models (the MCBO package's
#: ``FixedNoiseGP(Yvar=1e-6)``, even in noisy environments; decisions: excbo 11).
BASELINE_NOISE = 1e-6
#: Monte Carlo samples of EICF's and MCBO's acquisitions (128 Sobol QMC samples, the MCBO
#: package's).
MC_SAMPLES = 128


def known_noise_network(policy: SequentialOptimizer) -> GPNetwork:
    """MCBO's node models on ``policy``'s data (decisions: excbo 10): one GP per node on
    ``[a_i, minmax(z_i)]`` with the problem's known noise variance ``sigma^2`` fixed (floored
    at :data:`BASELINE_NOISE`), as cached posteriors in a :class:`GPNetwork`. Shared by MCBO
    and its noisy variant NMCBO (:mod:`~causalbandits.policies.nmcbo`)."""
    actions, values = policy.tensors()
    inputs, scalers = training_inputs(policy.specs, actions, values)
    variance = max(float(policy.problem.noise_std) ** 2, BASELINE_NOISE)
    models = tuple(
        node_gp(inputs[i], values[:, i], noise_variance=variance) for i in range(policy.n_nodes)
    )
    return GPNetwork(
        policy.specs, tuple(map(CachedPosterior.from_model, models)), tuple(scalers), policy.order
    )


class GPUCB(SequentialOptimizer):
    """GP-UCB (the paper's "UCB", Sec. 7.1): one GP ``a -> objective(x)``; acquisition
    ``mu + sqrt(beta) sigma`` (BoTorch ``UpperConfidenceBound``; the MCBO runner's
    ``beta = 5``, decisions: excbo 8). Ignores the graph."""

    def __init__(
        self,
        problem: CausalBOProblem,
        beta: float = 5.0,
        n_init: int | None = None,
        optimiser: AcquisitionOptimiser | None = None,
    ) -> None:
        if not beta >= 0:
            raise ValueError(f"beta must be >= 0, got {beta}")
        self.beta = float(beta)
        super().__init__(problem, n_init, optimiser)

    def propose(self, seed: int) -> np.ndarray:
        actions, _ = self.tensors()
        targets = torch.as_tensor(self.observed_objective, dtype=actions.dtype)
        model = node_gp(actions, targets, noise_variance=BASELINE_NOISE)
        # BoTorch's UpperConfidenceBound, mu + sqrt(beta) sigma, on the cached posterior: the
        # objective is a one-node network fed by every action, hallucinated at eta = +1.
        everything = NodeSpec(tuple(range(self.problem.n_actions)), ())
        network = GPNetwork((everything,), (CachedPosterior.from_model(model),), (None,), (0,))
        acquisition = NetworkAcquisition(
            network,
            lambda x: x[..., 0],
            self.problem.n_actions,
            self.beta**0.5,
            hallucinate=False,
            fixed_eta=torch.ones(1, 1, dtype=actions.dtype),
        )
        return self.maximise(acquisition, self.problem.n_actions, seed).numpy()


class EICF(SequentialOptimizer):
    """EICF (Astudillo & Frazier 2019; Sec. 7.1, decisions: excbo 11): independent GPs
    ``a -> x_i`` for every node and ``E[(objective(x~) - best)^+]`` by 128 Sobol QMC samples
    of their joint posterior, ``best`` the best observed objective. As in the reference, the
    maximiser of the posterior mean of the objective is a further candidate, kept when its EI
    is higher."""

    def propose(self, seed: int) -> np.ndarray:
        actions, values = self.tensors()
        models = [
            node_gp(actions, values[:, i], noise_variance=BASELINE_NOISE)
            for i in range(self.n_nodes)
        ]
        model = ModelListGP(*models)
        objective = GenericMCObjective(lambda samples, X=None: self.problem.objective(samples))
        sampler = SobolQMCNormalSampler(sample_shape=torch.Size([MC_SAMPLES]), seed=seed)
        best = float(self.observed_objective.max())
        improvement = qExpectedImprovement(model, best, sampler=sampler, objective=objective)
        candidate = self.maximise(improvement, self.problem.n_actions, seed)
        mean = qSimpleRegret(model, sampler=sampler, objective=objective)
        exploit = self.maximise(mean, self.problem.n_actions, seed + 1)
        with torch.no_grad():
            both = torch.stack([candidate, exploit]).unsqueeze(1)
            values_at = improvement(both)
        return both[int(torch.argmax(values_at)), 0].numpy()


class MCBO(SequentialOptimizer):
    """MCBO (Sussex et al. 2022; the noiseless variant, decisions: excbo 10): one GP per
    node on ``[a_i, minmax(z_i)]`` with the known noise variance fixed, and the hallucinated
    network ``x_i = mu_i + beta eta_i sigma_i + u_i``, ``u_i ~ N(0, sigma^2)`` (fixed base
    samples), maximising the Monte Carlo mean of the objective jointly over ``(a, eta)``."""

    def __init__(
        self,
        problem: CausalBOProblem,
        beta: float = 5.0,
        n_init: int | None = None,
        samples: int = MC_SAMPLES,
        optimiser: AcquisitionOptimiser | None = None,
    ) -> None:
        if not beta >= 0:
            raise ValueError(f"beta must be >= 0, got {beta}")
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        self.beta, self.samples = float(beta), int(samples)
        super().__init__(problem, n_init, optimiser)

    def propose(self, seed: int) -> np.ndarray:
        network = known_noise_network(self)
        generator = torch.Generator().manual_seed(seed)
        noise = float(self.problem.noise_std) * torch.randn(
            self.samples, self.n_nodes, generator=generator, dtype=DTYPE
        )
        acquisition = NetworkAcquisition(
            network, self.problem.objective, self.problem.n_actions, self.beta, noise=noise
        )
        decision = self.maximise(acquisition, self.problem.n_actions + self.n_nodes, seed)
        return decision[: self.problem.n_actions].numpy()
