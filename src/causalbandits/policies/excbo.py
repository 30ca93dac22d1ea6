"""EXCBO (Ren & Qian, arXiv 2402.02277, Algorithm 1; gaps: docs/decisions/excbo.md).

Each round, for every node ``i`` on ``w_i = [a[active_i], minmax(z_i)]``:

1. the encoder GP ``phi_i: w -> x_i`` (learned noise) gives the recovered exogenous values
   ``u_i = (x_i - mu_phi(w)) / sigma_phi(w)`` of all past rounds (closed-form leave-one-out
   residuals by default; Thm 4.1, decisions: excbo 4, 15);
2. a Gaussian mixture fitted to them is ``p(U_i)`` (K by BIC; Sec. 4.2, decisions: excbo 5);
3. the decoder GP ``g_i: (w, u) -> x_i`` takes the recovered noise as an input (Sec. 5.1);
4. ``S`` fixed samples ``u~ ~ p(U)`` are propagated through the decoders and the action
   maximises the acquisition (eq. 10; decisions: excbo 7): by default option B, the
   hallucinated network ``x_i = mu_g,i + beta eta_i sigma_g,i`` maximised jointly over
   ``(a, eta)``; option A (``"mean"``) propagates posterior means and adds ``beta sigma`` at
   the target only (the literal eq. 10); option C (``"sample"``) propagates posterior draws.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from causalbandits.envs.causal_bo import CausalBOProblem
from causalbandits.estimators.exogenous import (
    check_encoder_std,
    fit_exogenous_density,
    standardised_residuals,
)
from causalbandits.estimators.gp import node_gp
from causalbandits.estimators.gp_network import (
    BaseSamples,
    CachedPosterior,
    GPNetwork,
    NetworkAcquisition,
    Optimism,
    training_inputs,
)
from causalbandits.policies.base import options_of
from causalbandits.policies.causal_bo import Budget, SequentialOptimizer
from causalbandits.validation import non_negative

VARIANTS = ("hallucinated", "mean", "sample")


@dataclass(frozen=True, kw_only=True)
class EXCBOOptions(Budget):
    """The knobs of EXCBO: the :class:`~causalbandits.policies.causal_bo.Budget` (its
    ``samples`` are ``S``, the Monte Carlo samples of ``p(U)``: 128, decisions: excbo 7) and
    the algorithm's choices; checked on construction."""

    #: The exploration weight ``beta`` of eq. 10, applied to ``sigma`` directly (decisions:
    #: excbo 8).
    beta: float = 0.5
    #: ``"hallucinated"`` (option B, default), ``"mean"`` (A, the literal eq. 10) or
    #: ``"sample"`` (C) (decisions: excbo 7).
    variant: str = "hallucinated"
    #: How the encoder's residuals are standardised (Thm 4.1): ``"loo"`` (default),
    #: ``"predictive"`` or ``"heteroscedastic"`` (decisions: excbo 4, 15).
    encoder_std: str = "loo"
    #: The mixture's ``K`` of ``p(U_i)`` (Sec. 4.2): ``"bic"`` (over 1..3) or a number
    #: (decisions: excbo 5).
    components: int | str = "bic"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {self.variant!r}")
        check_encoder_std(self.encoder_std)
        components = self.components
        if components != "bic" and not (isinstance(components, int) and components >= 1):
            raise ValueError(f"components must be 'bic' or an int >= 1, got {components!r}")
        object.__setattr__(self, "beta", non_negative("beta", self.beta))


class EXCBO(SequentialOptimizer):
    """EXCBO with an ask/tell interface (module docstring).

    Parameters
    ----------
    problem: as :class:`~.causal_bo.SequentialOptimizer`.
    options: the knobs (:class:`EXCBOOptions`, default its defaults).
    changes: knobs by name, applied on top of ``options`` (e.g. ``EXCBO(problem, beta=1.0)``).
    """

    def __init__(
        self, problem: CausalBOProblem, options: EXCBOOptions | None = None, **changes: Any
    ) -> None:
        self.options = options_of(EXCBOOptions, options, changes)
        super().__init__(problem, self.options)
        variant = self.options.variant
        if variant != "hallucinated" and self.target_node() is None:
            raise ValueError(f"variant {variant!r} needs an objective on one target node")

    def target_node(self) -> int | None:
        """The objective's node when it reads a single node, else ``None``."""
        nodes = self.problem.objective.nodes(self.n_nodes)
        return nodes[0] if len(nodes) == 1 else None

    def surrogate(self, seed: int) -> tuple[GPNetwork, torch.Tensor]:
        """The decoder network and ``S`` samples of the recovered exogenous noise (S, nodes)."""
        actions, values = self.tensors()
        inputs, scalers = training_inputs(self.specs, actions, values)
        generator = torch.Generator().manual_seed(seed)
        samples = self.options.samples
        uniforms = torch.rand(samples, self.n_nodes, generator=generator, dtype=actions.dtype)
        normals = torch.randn(samples, self.n_nodes, generator=generator, dtype=actions.dtype)
        decoders, exogenous = [], []
        for i in range(self.n_nodes):
            encoder = node_gp(inputs[i], values[:, i])
            recovered = standardised_residuals(encoder, self.options.encoder_std).values.detach()
            density = fit_exogenous_density(
                recovered, components=self.options.components, random_state=seed
            )
            exogenous.append(density.sample(uniforms[:, i], normals[:, i]))
            decoder_inputs = torch.cat([inputs[i], recovered.unsqueeze(-1)], dim=-1)
            decoders.append(node_gp(decoder_inputs, values[:, i]))
        marginals = tuple(map(CachedPosterior.from_model, decoders))
        network = GPNetwork(self.specs, marginals, tuple(scalers), self.order, with_exogenous=True)
        return network, torch.stack(exogenous, dim=-1)

    def propose(self, seed: int) -> np.ndarray:
        network, exogenous = self.surrogate(seed)
        n_actions = self.problem.n_actions
        beta, variant = self.options.beta, self.options.variant
        if variant == "hallucinated":
            acquisition = NetworkAcquisition(
                network,
                self.problem.objective,
                n_actions,
                Optimism(beta),
                BaseSamples(exogenous=exogenous),
            )
            decision = self.maximise(acquisition, n_actions + self.n_nodes, seed)
            return decision[:n_actions].numpy()
        target = self.target_node()
        fixed_eta = torch.zeros(1, self.n_nodes, dtype=exogenous.dtype)
        fixed_eta[0, target] = 1.0  # beta * sigma at the target only (eq. 10)
        draws = None
        if variant == "sample":
            generator = torch.Generator().manual_seed(seed + 1)
            draws = torch.randn(
                self.options.samples, self.n_nodes, generator=generator, dtype=exogenous.dtype
            )
            draws[:, target] = 0.0
        acquisition = NetworkAcquisition(
            network,
            self.problem.objective,
            n_actions,
            Optimism(beta, hallucinate=False, fixed_eta=fixed_eta),
            BaseSamples(draws=draws, exogenous=exogenous),
        )
        return self.maximise(acquisition, n_actions, seed).numpy()
