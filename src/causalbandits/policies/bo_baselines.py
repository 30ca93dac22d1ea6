"""The EXCBO paper's baselines (Sec. 7.1): GP-UCB on the objective alone, EICF (expected
improvement for composite functions) and MCBO with GP nodes (hallucinated GP network; the
paper's "MCBO" is the noisy variant :class:`~causalbandits.policies.nmcbo.NMCBO`).

All three follow the MCBO package's conventions (decisions: excbo 10, 11, 18; the package's
algorithm-list bug is not reproduced): actions in ``[0, 1]^|A|``, one new full-network
observation per round, BoTorch's multi-start L-BFGS-B with ``10 D`` restarts from ``100 D``
raw points. What each is told about the noise is its ``noise`` option
(:data:`NOISE_KNOWLEDGE`): by default every method learns it, as EXCBO does. Their knobs are
options dataclasses extending the shared :class:`~causalbandits.policies.causal_bo.Budget`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from botorch.acquisition import qExpectedImprovement, qSimpleRegret
from botorch.acquisition.objective import GenericMCObjective
from botorch.models import ModelListGP
from botorch.sampling import SobolQMCNormalSampler

from causalbandits.envs.causal_bo import CausalBOProblem
from causalbandits.estimators.gp import DTYPE, node_gp
from causalbandits.estimators.gp_network import (
    BaseSamples,
    CachedPosterior,
    GPNetwork,
    NetworkAcquisition,
    NodeSpec,
    Optimism,
    training_inputs,
)
from causalbandits.policies.base import options_of
from causalbandits.policies.causal_bo import Budget, SequentialOptimizer
from causalbandits.validation import non_negative

#: The near-noiseless observation variance of the MCBO package's GP-UCB and EICF models
#: (``FixedNoiseGP(Yvar=1e-6)``, even in noisy environments), and the floor of every told
#: variance (decisions: excbo 11).
BASELINE_NOISE = 1e-6
#: What a baseline is told about the noise (decisions: excbo 10, 11): ``"learned"`` (the
#: default: every node GP learns its noise variance by marginal likelihood, as EXCBO's do:
#: the same knowledge for every method), ``"known"`` (fixed at the environment's exact
#: variance, ``problem.noise_variance``), ``"package"`` (the MCBO package's conventions:
#: GP-UCB and EICF ``1e-6``, MCBO and NMCBO ``sigma^2``, a fifth of eq. 11's mixture
#: variance).
NOISE_KNOWLEDGE = ("learned", "known", "package")


@dataclass(frozen=True, kw_only=True)
class EICFOptions(Budget):
    """The knobs of EICF: the :class:`~causalbandits.policies.causal_bo.Budget` and what it is
    told about the noise."""

    #: What the node GPs are told about the noise (:data:`NOISE_KNOWLEDGE`; decisions:
    #: excbo 10, 11).
    noise: str = "learned"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.noise not in NOISE_KNOWLEDGE:
            raise ValueError(f"noise must be one of {NOISE_KNOWLEDGE}, got {self.noise!r}")


@dataclass(frozen=True, kw_only=True)
class BaselineOptions(EICFOptions):
    """The knobs of GP-UCB and MCBO: EICF's and the exploration weight."""

    #: The exploration weight (the MCBO runner's 5; decisions: excbo 8): GP-UCB's
    #: ``mu + sqrt(beta) sigma``, MCBO's hallucination ``mu + beta eta sigma``.
    beta: float = 5.0

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "beta", non_negative("beta", self.beta))


def check_noise_knowledge(noise: str, problem: CausalBOProblem) -> str:
    """``noise`` if it is one of :data:`NOISE_KNOWLEDGE` and the problem can tell it."""
    if noise not in NOISE_KNOWLEDGE:
        raise ValueError(f"noise must be one of {NOISE_KNOWLEDGE}, got {noise!r}")
    if noise == "known" and not problem.noise_variance:
        raise ValueError("noise='known' needs a problem that states its noise_variance")
    return noise


def told_variance(problem: CausalBOProblem, noise: str, node: int, package: float) -> float | None:
    """The fixed noise variance of node ``node``'s GP (``None``: learned) under the knowledge
    ``noise``; ``package`` is what the MCBO package would fix."""
    if noise == "learned":
        return None
    told = problem.noise_variance[node] if noise == "known" else package
    return max(float(told), BASELINE_NOISE)


def node_network(policy: SequentialOptimizer, noise: str) -> GPNetwork:
    """MCBO's node models on ``policy``'s data (decisions: excbo 10): one GP per node on
    ``[a_i, minmax(z_i)]``, its noise variance learned or told (:func:`told_variance`; the
    package tells ``sigma^2``), as cached posteriors in a :class:`GPNetwork`. Shared by MCBO
    and its noisy variant NMCBO (:mod:`~causalbandits.policies.nmcbo`)."""
    actions, values = policy.tensors()
    inputs, scalers = training_inputs(policy.specs, actions, values)
    package = float(policy.problem.noise_std) ** 2
    models = tuple(
        node_gp(
            inputs[i],
            values[:, i],
            noise_variance=told_variance(policy.problem, noise, i, package),
        )
        for i in range(policy.n_nodes)
    )
    return GPNetwork(
        policy.specs, tuple(map(CachedPosterior.from_model, models)), tuple(scalers), policy.order
    )


def noise_scales(network: GPNetwork) -> torch.Tensor:
    """Each node's additive noise standard deviation, ``(nodes,)``: the square root of its
    GP's observation noise variance (learned or told), MCBO's ``u_i ~ N(0, rho_i^2)``."""
    return torch.tensor(
        [marginal.noise_variance for marginal in network.marginals], dtype=DTYPE
    ).sqrt()


class GPUCB(SequentialOptimizer):
    """GP-UCB (the paper's "UCB", Sec. 7.1): one GP ``a -> objective(x)``; acquisition
    ``mu + sqrt(beta) sigma`` (BoTorch ``UpperConfidenceBound``; the MCBO runner's
    ``beta = 5``, decisions: excbo 8). Ignores the graph. Its knobs: :class:`BaselineOptions`
    (``options``, with ``changes`` by name); ``noise="known"`` tells the objective's node's
    variance and needs an objective on one node."""

    def __init__(
        self, problem: CausalBOProblem, options: BaselineOptions | None = None, **changes: Any
    ) -> None:
        self.options = options_of(BaselineOptions, options, changes)
        nodes = problem.objective.nodes(problem.n_nodes)
        if check_noise_knowledge(self.options.noise, problem) == "known" and len(nodes) != 1:
            raise ValueError("noise='known' for GP-UCB needs an objective on one node")
        self.objective_node = nodes[0]
        super().__init__(problem, self.options)

    def propose(self, seed: int) -> np.ndarray:
        actions, _ = self.tensors()
        targets = torch.as_tensor(self.observed_objective, dtype=actions.dtype)
        noise = self.options.noise
        variance = told_variance(self.problem, noise, self.objective_node, BASELINE_NOISE)
        model = node_gp(actions, targets, noise_variance=variance)
        # BoTorch's UpperConfidenceBound, mu + sqrt(beta) sigma, on the cached posterior: the
        # objective is a one-node network fed by every action, hallucinated at eta = +1.
        everything = NodeSpec(tuple(range(self.problem.n_actions)), ())
        network = GPNetwork((everything,), (CachedPosterior.from_model(model),), (None,), (0,))
        optimism = Optimism(
            self.options.beta**0.5,
            hallucinate=False,
            fixed_eta=torch.ones(1, 1, dtype=actions.dtype),
        )
        acquisition = NetworkAcquisition(
            network, lambda x: x[..., 0], self.problem.n_actions, optimism
        )
        return self.maximise(acquisition, self.problem.n_actions, seed).numpy()


class EICF(SequentialOptimizer):
    """EICF (Astudillo & Frazier 2019; Sec. 7.1, decisions: excbo 11): independent GPs
    ``a -> x_i`` for every node and ``E[(objective(x~) - best)^+]`` by 128 Sobol QMC samples
    of their joint posterior, ``best`` the best observed objective. As in the reference, the
    maximiser of the posterior mean of the objective is a further candidate, kept when its EI
    is higher. Its knobs: :class:`EICFOptions` (``options``, with ``changes`` by name)."""

    def __init__(
        self, problem: CausalBOProblem, options: EICFOptions | None = None, **changes: Any
    ) -> None:
        self.options = options_of(EICFOptions, options, changes)
        check_noise_knowledge(self.options.noise, problem)
        super().__init__(problem, self.options)

    def propose(self, seed: int) -> np.ndarray:
        actions, values = self.tensors()
        models = [
            node_gp(
                actions,
                values[:, i],
                noise_variance=told_variance(self.problem, self.options.noise, i, BASELINE_NOISE),
            )
            for i in range(self.n_nodes)
        ]
        model = ModelListGP(*models)
        objective = GenericMCObjective(lambda samples, X=None: self.problem.objective(samples))
        shape = torch.Size([self.options.samples])
        sampler = SobolQMCNormalSampler(sample_shape=shape, seed=seed)
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
    """MCBO with GP nodes (Sussex et al. 2022; the noiseless variant, decisions: excbo 10;
    reported as "GP-MCBO"): one GP per node on ``[a_i, minmax(z_i)]`` (:func:`node_network`),
    and the hallucinated network ``x_i = mu_i + beta eta_i sigma_i + u_i``,
    ``u_i ~ N(0, rho_i^2)`` with ``rho_i^2`` the node GP's noise variance (fixed base
    samples), maximising the Monte Carlo mean of the objective jointly over ``(a, eta)``.
    Its knobs: :class:`BaselineOptions` (``options``, with ``changes`` by name)."""

    def __init__(
        self, problem: CausalBOProblem, options: BaselineOptions | None = None, **changes: Any
    ) -> None:
        self.options = options_of(BaselineOptions, options, changes)
        check_noise_knowledge(self.options.noise, problem)
        super().__init__(problem, self.options)

    def propose(self, seed: int) -> np.ndarray:
        network = node_network(self, self.options.noise)
        generator = torch.Generator().manual_seed(seed)
        noise = noise_scales(network) * torch.randn(
            self.options.samples, self.n_nodes, generator=generator, dtype=DTYPE
        )
        acquisition = NetworkAcquisition(
            network,
            self.problem.objective,
            self.problem.n_actions,
            Optimism(self.options.beta),
            BaseSamples(noise=noise),
        )
        decision = self.maximise(acquisition, self.problem.n_actions + self.n_nodes, seed)
        return decision[: self.problem.n_actions].numpy()
