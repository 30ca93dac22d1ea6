"""Random instances of the SSEM-UCB paper's synthetic trials (Sec. V-A, App. -G1).

- trial 1: ``N = 10``, a Bernoulli(0.2) edge on each upper-triangular pair, edges ``c v`` or
  ``c sin(2 pi v)`` with ``c ~ U[0.4, 0.7]``, normal arms with ``mu ~ U[0.3, 0.7]`` and
  ``sigma ~ U[0.1, 0.4]`` rescaled to ``[0, 1]``, observation noise 0.02 on ``z`` and
  endogenous noise of 2 % of the average reward, and the paper's nonlinearity test
  (:func:`linearisation_error`);
- trial 2: trial 1 with edges ``c v``, ``c v^2`` or ``c tanh v``;
- trial 3: ``N = 15``, density 0.15, trial 2's families with ``c ~ U[0.05, 0.15]``, arcsine arms
  with ``mu ~ U[1, 1.5]`` and ``sigma ~ U[0.2, 0.6]``.

Each edge draws one family uniformly ("a mixture of linear and periodic" functions;
decisions: ssem-ucb 1) and a positive coefficient (the paper gives ranges such as [0.4, 0.7]).

The endogenous noise is on the observations by default (``noise_placement="observation"``):
Sec. V-A says the observations are "obfuscated" by the noise, so the SEM is solved noise-free
and the expected payoffs are the noise-free ones; ``"model"`` puts it inside the SEM (Thm
IV.6's model noise), which shifts the expected payoffs of a nonlinear SEM: on trial 1's ten
evaluation instances the largest shift is 0.02 to 0.65 per instance, and the best super arm
of instances 0 and 5 changes. The linear sanity check keeps ``"model"`` (no shift there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from causalbandits.envs.base_arms import ArcsineArms, NormalArms
from causalbandits.envs.separable_semibandit import (
    NOISE_PLACEMENTS,
    SeparableBanditConfig,
    SeparableSemiBandit,
    monte_carlo_payoffs,
)
from causalbandits.envs.super_arms import all_super_arms
from causalbandits.random import RNGLike, SubStream, as_generator, derive
from causalbandits.scm.basis import Dictionary
from causalbandits.scm.separable import SeparableSEM
from causalbandits.validation import count, each, finite, in_range, non_negative, optional, positive

ARM_LAWS = ("normal", "arcsine")


@dataclass(frozen=True)
class TrialDesign:
    """The random-instance design of one synthetic trial (see the module docstring).

    ``observation_noise`` is the standard deviation of the noise on the observed ``z``,
    ``model_noise_share`` that of the endogenous noise as a share of the average noise-free
    reward, and ``noise_placement`` where the latter enters (``"observation"``: added to the
    solved ``y``; ``"model"``: inside the SEM; :class:`~causalbandits.envs.
    separable_semibandit.SeparableSemiBandit`).
    """

    n_arms: int = 10
    density: float = 0.2
    families: tuple[str, ...] = ("linear", "sin")
    coefficient_range: tuple[float, float] = (0.4, 0.7)
    arm_law: str = "normal"
    mean_range: tuple[float, float] = (0.3, 0.7)
    sd_range: tuple[float, float] = (0.1, 0.4)
    observation_noise: float = 0.02
    model_noise_share: float = 0.02
    noise_placement: str = "observation"
    min_nonlinearity: float | None = 0.1

    def __post_init__(self) -> None:
        object.__setattr__(self, "families", tuple(self.families))
        Dictionary.from_names(self.families)
        count("n_arms", self.n_arms)
        in_range("density", self.density, 0, 1)
        if self.arm_law not in ARM_LAWS:
            raise ValueError(f"arm_law must be one of {ARM_LAWS}, got {self.arm_law!r}")
        for name in ("coefficient_range", "mean_range", "sd_range"):
            bounds = each(finite, name, getattr(self, name))
            if len(bounds) != 2 or not bounds[0] <= bounds[1]:
                raise ValueError(f"{name} must be (low, high) with low <= high, got {bounds}")
        positive("sd_range[0]", self.sd_range[0])
        non_negative("observation_noise", self.observation_noise)
        non_negative("model_noise_share", self.model_noise_share)
        optional(non_negative, "min_nonlinearity", self.min_nonlinearity)
        if self.noise_placement not in NOISE_PLACEMENTS:
            raise ValueError(
                f"noise_placement must be one of {NOISE_PLACEMENTS}, got {self.noise_placement!r}"
            )

    @property
    def dictionary(self) -> Dictionary:
        return Dictionary.from_names(self.families)

    def draw_weights(self, rng: np.random.Generator) -> np.ndarray:
        """``W`` ``(N, N, K)``: a Bernoulli(density) edge per pair ``j > i``, one family each."""
        n, k = self.n_arms, len(self.families)
        edges = np.triu(rng.random((n, n)) < self.density, k=1)
        family = rng.integers(0, k, size=(n, n))
        weights = np.zeros((n, n, k))
        rows, cols = np.nonzero(edges)
        weights[rows, cols, family[rows, cols]] = rng.uniform(
            *self.coefficient_range, size=rows.size
        )
        return weights

    def draw_arms(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Means and standard deviations ``(N,)`` before any rescaling."""
        return (
            rng.uniform(*self.mean_range, size=self.n_arms),
            rng.uniform(*self.sd_range, size=self.n_arms),
        )


TRIAL_1 = TrialDesign()
#: The nonlinearity test is trial 1's (Sec. V-A); with linear, quadratic and tanh edges on
#: ``[0, 1]`` no draw passes it (the ratio stays below 1 %), so trial 2 does without.
TRIAL_2 = TrialDesign(families=("linear", "quadratic", "tanh"), min_nonlinearity=None)
TRIAL_3 = TrialDesign(
    n_arms=15,
    density=0.15,
    families=("linear", "quadratic", "tanh"),
    coefficient_range=(0.05, 0.15),
    arm_law="arcsine",
    mean_range=(1.0, 1.5),
    sd_range=(0.2, 0.6),
    min_nonlinearity=None,
)
#: The linear sanity check: trial 1 with linear edges only. Its noise stays in the model, as
#: in its recorded results: with linear edges both placements give the same expected payoffs.
LINEAR_SANITY = TrialDesign(families=("linear",), min_nonlinearity=None, noise_placement="model")


def _arm_law(design: TrialDesign, means: np.ndarray, sds: np.ndarray):
    if design.arm_law == "normal":
        return NormalArms.rescaled(means, sds)
    return ArcsineArms(means, sds)


def linearisation_error(
    sem: SeparableSEM, signals: np.ndarray, super_arms: np.ndarray
) -> np.ndarray:
    """The paper's nonlinearity measure (decisions: ssem-ucb 10), per replicate: the mean over
    super arms and samples of ``|r_x(b) - r_x(a) - grad r_x(a) . (b - a)|`` with ``a = E[b]``
    (the sample mean of ``signals`` ``(R, S, N)``)."""
    centres = signals.mean(axis=1)  # (R, N)
    at_centre = super_arms[None] * centres[:, None]  # (R, X, N)
    payoff_centre = sem.solve(at_centre).sum(axis=-1)  # (R, X)
    gradient = sem.reward_gradient(at_centre)  # (R, X, N)
    out = np.empty(sem.replicates)
    for r in range(sem.replicates):
        single = SeparableSEM(sem.weights[r], sem.dictionary)
        inputs = super_arms[:, None, :] * signals[r][None]  # (X, S, N)
        payoff = single.solve(inputs[None])[0].sum(axis=-1)
        linear = payoff_centre[r][:, None] + np.einsum(
            "xn,xsn->xs", gradient[r] * super_arms, signals[r][None] - centres[r][None, None]
        )
        out[r] = np.abs(payoff - linear).mean()
    return out


def draw_instance(
    design: TrialDesign,
    rng: RNGLike,
    check_samples: int = 500,
    max_attempts: int = 200,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One accepted instance ``(W, means, sds)`` of ``design``: redrawn until the
    linearisation error exceeds ``min_nonlinearity`` times ``max_x mu(x)`` (trial 1's
    acceptance test, on ``check_samples`` samples, noiseless)."""
    generator = as_generator(rng)
    dictionary = design.dictionary
    super_arms = all_super_arms(design.n_arms, min(6, design.n_arms))
    for _ in range(max_attempts):
        weights = design.draw_weights(generator)
        means, sds = design.draw_arms(generator)
        if design.min_nonlinearity is None:
            return weights, means, sds
        sem = SeparableSEM(weights, dictionary)
        law = _arm_law(design, means[None], sds[None])
        signals = law.quantile(generator.random((1, check_samples, design.n_arms)))
        error = linearisation_error(sem, signals, super_arms)[0]
        best = monte_carlo_payoffs(sem, super_arms, signals)[0].max()
        if error > design.min_nonlinearity * abs(best):
            return weights, means, sds
    raise RuntimeError(
        f"no instance passed the nonlinearity test in {max_attempts} draws "
        f"(min_nonlinearity = {design.min_nonlinearity})"
    )


def trial_environment(
    design: TrialDesign,
    instance_seeds: Sequence[np.random.SeedSequence],
    super_arm_size: int = 6,
    horizon: int = 1000,
    mc_samples: int = 10_000,
) -> SeparableSemiBandit:
    """One instance of ``design`` per seed, stacked into one environment; the endogenous noise
    is ``model_noise_share`` of each instance's average noiseless reward ``mean_x mu(x)``, on
    the observations or in the model (``design.noise_placement``)."""
    seeds = list(instance_seeds)
    if not seeds:
        raise ValueError("need at least one instance seed")
    drawn = [draw_instance(design, np.random.default_rng(s)) for s in seeds]
    weights = np.stack([d[0] for d in drawn])
    law = _arm_law(design, np.stack([d[1] for d in drawn]), np.stack([d[2] for d in drawn]))
    sem = SeparableSEM(weights, design.dictionary)
    mc_seeds = derive(seeds, SubStream.MONTE_CARLO)
    noise = 0.0
    if design.model_noise_share:
        quiet = SeparableBanditConfig(
            super_arm_size=super_arm_size, horizon=horizon, mc_samples=1000
        )
        payoffs = SeparableSemiBandit(sem, law, quiet, mc_seeds).expected_payoffs
        noise = design.model_noise_share * np.abs(payoffs.mean(axis=1))
    config = SeparableBanditConfig(
        super_arm_size=super_arm_size,
        horizon=horizon,
        observation_noise=design.observation_noise,
        model_noise=noise,
        noise_placement=design.noise_placement,
        mc_samples=mc_samples,
    )
    return SeparableSemiBandit(sem, law, config, mc_seeds)
