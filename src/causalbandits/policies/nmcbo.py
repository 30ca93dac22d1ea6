"""NMCBO: MCBO's noisy variant (Sussex, Makarova & Krause 2022; the MCBO package's
``--algo NMCBO``), batched over its random re-initialisations.

The node models are MCBO's (:func:`~causalbandits.policies.bo_baselines.node_network`:
one GP per node on ``w_i = [a_i, minmax(z_i)]``, its noise variance ``rho_i^2`` learned or
told by the ``noise`` option). Where MCBO
maximises over one constant ``eta_i`` per node, NMCBO lets the hallucination depend on the
node's input: ``eta_i(w_i)`` is a small network and the action a free parameter vector,

``eta_i(w) = 2 sigmoid(fc2(ReLU(fc1(w))) + b_i) - 1``  (hidden width ``4 dim(w)``),
``a = sigmoid(theta)``  (the package's ``ActionNet``, ``sigmoid(W 1)``),
``x_i = mu_i(w_i) + beta eta_i(w_i) sigma_i(w_i) + u_i``,  ``u_i ~ N(0, rho_i^2)``,

and maximises ``E_u[objective(x)]`` over all network weights by SGD (learning rate ``1e-3``)
on the Monte Carlo mean over ``batch_size`` noise draws per step (the package's runner: 32
when ``sigma > 0.001``, else 2), from ``reinits`` random initialisations (the package's
1000) plus every previously chosen set of networks (warm starts). The set with the best
estimate of the objective over ``selection_samples`` draws (1000) is kept and its action
played. The target node's ``eta`` is fixed to ``+1``.

Where the package is silent or we deviate (and why):

- **Batched re-initialisations.** All re-initialisations are trained together: every weight
  carries a leading re-initialisation axis and the networks run as batched matrix products
  (``torch.baddbmm``), in chunks of at most ``max_points`` node inputs. The package loops in
  Python, one re-initialisation at a time. Batching changes no number: a set trained in a
  batch equals the same set trained alone (tested to 1e-10), because the re-initialisations
  share nothing but the noise draws.
- **Common noise.** Step ``k`` of every re-initialisation uses the same ``batch_size`` draws,
  and the selection uses one set of ``selection_samples`` draws for all (common random
  numbers; the package draws fresh noise per re-initialisation and per estimate). This is
  what makes the batched and the looped runs identical, and the selection a comparison of
  the networks rather than of their noise.
- **Stopping.** ``stopping="expma"``: BoTorch's ``ExpMAStoppingCriterion(maxiter=max_steps)``
  rule (window 10, ``rel_tol = 1e-5``) evaluated per re-initialisation (:class:`ExpMAStopping`,
  its weights taken from BoTorch), in the direction of the optimisation: a set stops once
  the moving average of its objective no longer *increases* by ``rel_tol``. The package
  passes BoTorch's default ``minimize=True`` while maximising, so it stops as soon as the
  moving average fails to *decrease*; with the Monte Carlo noise of 32 draws both rules
  stop most sets within a few steps after the window fills (step 11). ``"fixed"``: exactly
  ``max_steps`` steps for every set.
- **The target node.** The package fixes ``eta = 1`` at the last node. Here it is fixed at
  the objective's node when the objective is a :class:`~causalbandits.envs.causal_bo.TargetNode`
  (``+1`` is then the optimistic value); for a composite objective (the epidemic's squared
  error) ``+1`` need not be optimistic and every node's ``eta`` is learned.
- **Re-initialisations.** ``reinits = 1000`` by default, the package's; 64 is a labelled
  option that costs 8 to 13 times less per proposal on Dropwave
  (``benchmarks/bench_nmcbo.py``).
- **Seeding.** Initial weights and noise come from a ``torch.Generator`` seeded by the
  proposal's seed (the package reseeds torch non-deterministically).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch
from botorch.optim.stopping import ExpMAStoppingCriterion

from causalbandits.envs.causal_bo import CausalBOProblem, TargetNode
from causalbandits.estimators.gp import DTYPE
from causalbandits.estimators.gp_network import BaseSamples, GPNetwork, NodeSpec
from causalbandits.policies.base import options_of
from causalbandits.policies.bo_baselines import (
    BaselineOptions,
    check_noise_knowledge,
    node_network,
    noise_scales,
)
from causalbandits.policies.causal_bo import Budget, SequentialOptimizer
from causalbandits.validation import count, optional, positive

#: Batched network weights by name, each with a leading re-initialisation axis ``(R, ...)``.
Parameters = dict[str, torch.Tensor]

#: Initial actions and baselines are ``logit(U(LOW, 1 - LOW))`` (the package's).
LOW = 1e-3
STOPPING_RULES = ("expma", "fixed")


def take(params: Parameters, rows: torch.Tensor | Sequence[int]) -> Parameters:
    """The re-initialisations ``rows`` of ``params`` (copies)."""
    index = torch.as_tensor(rows, dtype=torch.long)
    return {name: value[index].clone() for name, value in params.items()}


def concat(batches: Sequence[Parameters]) -> Parameters:
    """Re-initialisations of several batches stacked into one."""
    return {name: torch.cat([b[name] for b in batches]) for name in batches[0]}


def _logit_uniform(shape: tuple[int, ...], generator: torch.Generator) -> torch.Tensor:
    u = LOW + (1.0 - 2.0 * LOW) * torch.rand(shape, generator=generator, dtype=DTYPE)
    return torch.log(u / (1.0 - u))


def _linear_uniform(shape: tuple[int, ...], fan_in: int, generator: torch.Generator):
    """PyTorch's default ``nn.Linear`` initialisation, ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``."""
    bound = fan_in**-0.5
    return bound * (2.0 * torch.rand(shape, generator=generator, dtype=DTYPE) - 1.0)


@dataclass(frozen=True)
class HallucinationNets:
    """NMCBO's networks for one problem: an ``eta`` network per learned node (input dimension
    ``input_dims[i]``, the node GP's) and the action vector, batched over re-initialisations.

    Weights of node ``i``: ``fc1.weight.i (R, d, 4d)``, ``fc1.bias.i (R, 4d)``,
    ``fc2.weight.i (R, 4d)``, ``fc2.bias.i (R,)`` and ``baseline.i (R,)``; the action's
    ``action (R, |A|)`` (logits).
    """

    input_dims: tuple[int, ...]
    learned: tuple[bool, ...]
    n_actions: int

    @classmethod
    def for_specs(
        cls, specs: Sequence[NodeSpec], n_actions: int, fixed: Sequence[int] = ()
    ) -> HallucinationNets:
        """Networks for nodes ``specs``; ``fixed`` nodes keep ``eta = +1``."""
        dims = tuple(max(len(s.active) + len(s.parents), 1) for s in specs)
        return cls(dims, tuple(i not in fixed for i in range(len(specs))), int(n_actions))

    def initial(self, count: int, generator: torch.Generator) -> Parameters:
        """``count`` random initialisations: PyTorch's default for the linear layers, the
        baseline and the action uniform in ``[0.001, 0.999]`` after the sigmoid (the
        package's)."""
        params = {"action": _logit_uniform((count, self.n_actions), generator)}
        for i, dim in enumerate(self.input_dims):
            if not self.learned[i]:
                continue
            hidden = 4 * dim
            params[f"fc1.weight.{i}"] = _linear_uniform((count, dim, hidden), dim, generator)
            params[f"fc1.bias.{i}"] = _linear_uniform((count, hidden), dim, generator)
            params[f"fc2.weight.{i}"] = _linear_uniform((count, hidden), hidden, generator)
            params[f"fc2.bias.{i}"] = _linear_uniform((count,), hidden, generator)
            params[f"baseline.{i}"] = _logit_uniform((count,), generator)
        return params

    def actions(self, params: Parameters) -> torch.Tensor:
        """The actions ``(R, |A|)`` in ``[0, 1]``."""
        return torch.sigmoid(params["action"])

    def eta(self, params: Parameters, node: int, inputs: torch.Tensor) -> torch.Tensor:
        """``eta_node`` at inputs ``(R, S, d)``, shape ``(R, S)``, in ``[-1, 1]`` (``+1`` at a
        fixed node)."""
        if not self.learned[node]:
            return inputs.new_ones(inputs.shape[:-1])
        hidden = torch.relu(
            torch.baddbmm(
                params[f"fc1.bias.{node}"].unsqueeze(1), inputs, params[f"fc1.weight.{node}"]
            )
        )
        out = torch.bmm(hidden, params[f"fc2.weight.{node}"].unsqueeze(-1)).squeeze(-1)
        shift = params[f"fc2.bias.{node}"] + params[f"baseline.{node}"]
        return 2.0 * torch.sigmoid(out + shift.unsqueeze(-1)) - 1.0


class ExpMAStopping:
    """BoTorch's ``ExpMAStoppingCriterion`` evaluated per element of a batch (one
    optimisation per element, all started together): element ``r`` stops at iteration
    ``maxiter`` or once the relative change of the exponential moving average of its last
    ``n_window`` values is below ``rel_tol`` in the direction of the optimisation. Equal to
    BoTorch's criterion run on each element alone (tested). ``__call__`` takes the rows still
    running and their values; the rows stopped earlier are not evaluated."""

    def __init__(
        self,
        count: int,
        maxiter: int = 1000,
        minimize: bool = False,
        n_window: int = 10,
        eta: float = 1.0,
        rel_tol: float = 1e-5,
    ) -> None:
        reference = ExpMAStoppingCriterion(maxiter, minimize, n_window, eta, rel_tol)
        self.weights = reference.weights  # BoTorch's, to the bit
        self.maxiter, self.minimize, self.rel_tol = maxiter, minimize, rel_tol
        self.window = torch.zeros(count, n_window + 1, dtype=DTYPE)
        self.iteration = 0

    def __call__(self, rows: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """Whether each of ``rows`` stops after this iteration's ``values``."""
        self.iteration += 1
        if self.iteration == self.maxiter:
            return torch.ones(len(rows), dtype=torch.bool)
        window = torch.cat([self.window[rows, 1:], values.unsqueeze(-1).to(DTYPE)], dim=-1)
        self.window[rows] = window
        if self.iteration < self.window.shape[1]:
            return torch.zeros(len(rows), dtype=torch.bool)
        weights = self.weights.to(window)
        previous = (window[:, :-1] * weights).sum(dim=-1)
        current = (window[:, 1:] * weights).sum(dim=-1)
        change = (previous - current) / previous.abs()
        return (change if self.minimize else -change) < self.rel_tol


@dataclass(frozen=True, eq=False)
class NoisyHallucination:
    """NMCBO's objective as a function of batched network weights: the hallucinated network
    ``x_i = mu_i + beta eta_i(w_i) sigma_i + u_i`` of a fitted :class:`GPNetwork` and the
    Monte Carlo mean of ``objective(x)`` over given noise draws ``u``."""

    network: GPNetwork
    nets: HallucinationNets
    objective: Callable[[torch.Tensor], torch.Tensor]
    beta: float

    def noise(self, samples: int, generator: torch.Generator) -> torch.Tensor:
        """``samples`` draws ``(samples, nodes)`` of the node noise ``u_i ~ N(0, rho_i^2)``,
        ``rho_i^2`` each node GP's noise variance (:func:`~.bo_baselines.noise_scales`)."""
        draws = torch.randn(samples, len(self.network.specs), generator=generator, dtype=DTYPE)
        return noise_scales(self.network) * draws

    def values(self, params: Parameters, noise: torch.Tensor) -> torch.Tensor:
        """Node values ``(R, S, nodes)`` for weights ``params`` and noise ``(S, nodes)``
        (:meth:`GPNetwork.propagate` with the networks' ``eta_i(w_i)``)."""
        return self.network.propagate(
            self.nets.actions(params),
            eta=lambda node, inputs: self.nets.eta(params, node, inputs),
            beta=self.beta,
            samples=BaseSamples(noise=noise),
        )

    def mean_objective(self, params: Parameters, noise: torch.Tensor) -> torch.Tensor:
        """``mean_s objective(x_s)`` per re-initialisation, ``(R,)``."""
        return self.objective(self.values(params, noise)).mean(dim=-1)

    def train(
        self,
        params: Parameters,
        noise: torch.Tensor,
        lr: float = 1e-3,
        stopping: str = "expma",
        max_points: int = 2**14,
    ) -> tuple[Parameters, torch.Tensor]:
        """SGD ascent of :meth:`mean_objective` from ``params`` (any number ``R`` of
        re-initialisations, trained independently), step ``k`` on the draws ``noise[k]``
        (``noise``: ``(max_steps, batch, nodes)``). Returns the trained weights and the
        number of steps of each re-initialisation ``(R,)``.

        Only the re-initialisations still running are evaluated, in chunks of at most
        ``max_points`` node inputs (re-initialisations times draws).
        """
        if stopping not in STOPPING_RULES:
            raise ValueError(f"stopping must be one of {STOPPING_RULES}, got {stopping!r}")
        params = {name: value.detach().clone() for name, value in params.items()}
        count = params["action"].shape[0]
        max_steps, batch = noise.shape[0], noise.shape[1]
        rule = ExpMAStopping(count, maxiter=max_steps) if stopping == "expma" else None
        steps = torch.zeros(count, dtype=torch.long)
        running = torch.arange(count)
        chunk = max(1, max_points // batch)
        for step in range(max_steps):
            values = []
            for start in range(0, len(running), chunk):
                rows = running[start : start + chunk]
                leaves = {n: v[rows].requires_grad_(True) for n, v in params.items()}
                value = self.mean_objective(leaves, noise[step])
                names = list(leaves)
                grads = torch.autograd.grad(value.sum(), [leaves[n] for n in names])
                for name, grad in zip(names, grads, strict=True):
                    params[name].index_add_(0, rows, lr * grad)  # maximise
                values.append(value.detach())
            steps[running] += 1
            if rule is not None:
                running = running[~rule(running, torch.cat(values))]
            if len(running) == 0:
                break
        return params, steps

    @torch.no_grad()
    def score(
        self, params: Parameters, noise: torch.Tensor, max_points: int = 2**14
    ) -> torch.Tensor:
        """:meth:`mean_objective` over the draws ``noise (S, nodes)``, in chunks; ``(R,)``."""
        count = params["action"].shape[0]
        chunk = max(1, max_points // noise.shape[0])
        return torch.cat(
            [
                self.mean_objective(take(params, range(start, min(start + chunk, count))), noise)
                for start in range(0, count, chunk)
            ]
        )


@dataclass(frozen=True, kw_only=True)
class NMCBOOptions(BaselineOptions):
    """The knobs of NMCBO (module docstring): MCBO's (:class:`~.bo_baselines.BaselineOptions`:
    ``beta``, ``noise``, the design's ``n_init``; NMCBO trains networks, so the acquisition
    optimiser and ``samples`` are unused) and its training budget; checked on construction."""

    #: Random initialisations per proposal (the package's 1000).
    reinits: int = 1000
    #: SGD steps at most per initialisation (``maxiter``, the package's 1000).
    max_steps: int = 1000
    #: ``"expma"`` (BoTorch's moving-average rule per initialisation) or ``"fixed"`` (always
    #: ``max_steps``).
    stopping: str = "expma"
    #: Noise draws per SGD step; ``None``: the package runner's 32 when ``noise_std > 0.001``,
    #: else 2 (the policy resolves it).
    batch_size: int | None = None
    #: The SGD learning rate (the package's ``1e-3``).
    lr: float = 1e-3
    #: Noise draws of the estimate that picks the best initialisation.
    selection_samples: int = 1000
    #: Node inputs per batched evaluation (a memory cap; results do not depend on it).
    max_points: int = 2**14

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.stopping not in STOPPING_RULES:
            raise ValueError(f"stopping must be one of {STOPPING_RULES}, got {self.stopping!r}")
        object.__setattr__(self, "lr", positive("lr", self.lr))
        for name in ("reinits", "max_steps", "selection_samples", "max_points"):
            object.__setattr__(self, name, count(name, getattr(self, name)))
        object.__setattr__(self, "batch_size", optional(count, "batch_size", self.batch_size))


class NMCBO(SequentialOptimizer):
    """MCBO's noisy variant (module docstring): MCBO's node GPs, an ``eta`` network per node
    and the action trained by SGD from ``reinits`` random initialisations (batched) plus the
    previously chosen networks; the best by a ``selection_samples``-draw estimate.

    Parameters
    ----------
    problem: what the learner is told (``noise_std``, ``noise_variance``: see ``noise``).
    options: the knobs (:class:`NMCBOOptions`, default its defaults; ``batch_size`` resolved
        from the problem).
    changes: knobs by name, applied on top of ``options`` (e.g. ``NMCBO(problem, reinits=64)``).
    """

    def __init__(
        self, problem: CausalBOProblem, options: NMCBOOptions | None = None, **changes: Any
    ) -> None:
        options = options_of(NMCBOOptions, options, changes)
        if options.batch_size is None:
            options = replace(options, batch_size=32 if problem.noise_std > 1e-3 else 2)
        self.options = options
        check_noise_knowledge(options.noise, problem)
        super().__init__(problem, Budget(n_init=options.n_init))
        objective = problem.objective
        fixed = objective.nodes(self.n_nodes) if isinstance(objective, TargetNode) else ()
        self.nets = HallucinationNets.for_specs(self.specs, problem.n_actions, fixed)

    def reset(self, seed=None) -> None:
        """Forget all data and the previously chosen networks (the warm starts)."""
        super().reset(seed)
        self.chosen: list[Parameters] = []

    def hallucination(self) -> NoisyHallucination:
        """The objective of the networks on the current data (MCBO's node GPs)."""
        return NoisyHallucination(
            node_network(self, self.options.noise),
            self.nets,
            self.problem.objective,
            self.options.beta,
        )

    def propose(self, seed: int) -> np.ndarray:
        options = self.options
        hallucination = self.hallucination()
        generator = torch.Generator().manual_seed(seed)
        start = concat([*self.chosen, self.nets.initial(options.reinits, generator)])
        noise = hallucination.noise(options.max_steps * options.batch_size, generator)
        trained, _ = hallucination.train(
            start,
            noise.reshape(options.max_steps, options.batch_size, self.n_nodes),
            options.lr,
            options.stopping,
            options.max_points,
        )
        selection = hallucination.noise(options.selection_samples, generator)
        scores = hallucination.score(trained, selection, options.max_points)
        best = take(trained, [int(torch.argmax(scores))])
        self.chosen.append(best)
        return self.nets.actions(best)[0].numpy()

    def proposal_memory(self) -> dict[str, list]:
        """The chosen networks of the last proposal (the next proposals' warm start)."""
        return {name: value.tolist() for name, value in self.chosen[-1].items()}

    def restore_memory(self, memories: Sequence[dict[str, list]]) -> None:
        self.chosen = [
            {name: torch.tensor(value, dtype=DTYPE) for name, value in memory.items()}
            for memory in memories
        ]
