"""EXCBO's exogenous-noise recovery in one node (paper Section 4, Thms 4.1/A.1; decisions:
excbo 4, 5): the encoder's standardised residuals and the Gaussian-mixture density
of the recovered noise, with a reparameterised sampler for the acquisition.

**Encoder** (Thm 4.1). A GP regression ``φ : w -> x`` (``w`` = parents ⊕ action) gives the
recovered noise ``û = h(w, x) = (x − μ_φ(w)) / σ_φ(w)``. Three choices of ``(μ_φ, σ_φ)`` at
the training points (``encoder_std``):

* ``"predictive"``: the posterior mean and the *predictive* std (posterior variance plus the
  likelihood noise ρ²) at the training inputs (decisions: excbo 4). In the GP's
  standardised space, with ``K̂ = K + N`` (``N = diag(ρ²)``), ``r = y − m`` (prior mean
  ``m`` subtracted) and ``α = K̂⁻¹ r``: ``μ = y − N α`` and ``σ² = 2N − N² diag(K̂⁻¹)``
  (posterior variance ``N − N² diag(K̂⁻¹)``, from ``K = K̂ − N``).
* ``"loo"`` (default): closed-form leave-one-out residuals (Rasmussen & Williams 2006,
  eq. 5.12) ``μ_{−τ} = y_τ − α_τ / [K̂⁻¹]_{ττ}`` and ``σ²_{−τ} = 1 / [K̂⁻¹]_{ττ}``, so
  ``û_τ = α_τ / sqrt([K̂⁻¹]_{ττ})``: the prediction of ``x_τ`` by the GP trained on the other
  points with the *same* hyper-parameters, standardisation and prior mean. One Cholesky
  factorisation, O(n³) once. Unlike in-sample residuals, these do not shrink when the GP
  interpolates (decisions: excbo 4).
* ``"heteroscedastic"``: for DGMs ``x = f_a(w) + f_b(w) f_c(u)`` with non-constant ``f_b``,
  Thm 4.1 needs ``σ_φ(w) ∝ |f_b(w)|`` (its proof, App. A.1), which a homoscedastic GP
  cannot give. With the LOO residuals ``r_τ = x_τ − μ_{−τ}`` and ``r = σ(w) ε``,
  ``ε ⊥ w``, ``log r² = log σ²(w) + log ε²``: a second GP on ``log r²`` has posterior mean
  ``μ_logr²(w) ≈ log σ²(w) + E[log ε²]`` and ``σ_φ(w) = exp(½ μ_logr²(w)) · sqrt(c)``. The
  bias ``E[log ε²]`` is ``ψ(½) + log 2 = −1.27036`` for Gaussian ``ε`` (the log of a
  chi-square(1) variable), but it depends on the unknown noise law: for the bimodal noise of
  the recovery study (decisions: excbo 19) ``E[log ε²] ≈ −0.20``, so the Gaussian constant
  would leave ``var(û) ≈ 0.34``. We therefore estimate the correction by moment matching,
  ``c = mean_τ(r_τ² / exp(μ_logr²(w_τ)))``, so that ``mean(û²) = 1`` (decisions: excbo 4);
  for Gaussian noise ``c → exp(1.27036)``, the chi-square correction. Residuals below
  ``LOG_FLOOR · mean(r²)`` are floored before the log (``log 0``).

**Density** (paper Section 4.2; decisions: excbo 5). A 1-D Gaussian mixture
``p(û) = Σ_k w_k N(μ_k, s_k²)`` fitted by EM (scikit-learn ``GaussianMixture``, full
covariances, ``reg_covar``, several initialisations, fixed ``random_state``); ``K`` by BIC
over {1, 2, 3} or fixed, and ``K = 1`` with fewer than ``MIN_MIXTURE_POINTS`` points
(decisions: excbo 5). :meth:`ExogenousDensity.sample` reparameterises the fixed samples of
``p(U)`` (decisions: excbo 7): fixed uniforms pick the components, fixed normals ``ε`` give
``ũ = μ_k + s_k ε``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from botorch.models import SingleTaskGP
from sklearn.mixture import GaussianMixture

from causalbandits.estimators.gp import DTYPE, node_gp, training_prior
from causalbandits.random import RNGLike, as_generator

ENCODER_STDS = ("predictive", "loo", "heteroscedastic")
#: Relative floor on squared residuals before the log (heteroscedastic encoder).
LOG_FLOOR = 1e-8
#: Candidate numbers of mixture components for ``components="bic"`` (decisions: excbo 5).
BIC_COMPONENTS = (1, 2, 3)
#: Below this many points a single Gaussian is fitted (decisions: excbo 5).
MIN_MIXTURE_POINTS = 10
GMM_REG_COVAR = 1e-3
GMM_N_INIT = 3


@dataclass(frozen=True, eq=False)
class ExogenousResiduals:
    """The encoder's output at the training points, in the targets' units: the recovered
    noise ``values = û = (x − means) / stds`` (Thm 4.1) with ``means = μ_φ(w_τ)`` and
    ``stds = σ_φ(w_τ)``."""

    values: torch.Tensor
    means: torch.Tensor
    stds: torch.Tensor
    encoder_std: str


def check_encoder_std(encoder_std: str) -> None:
    """Raise a ``ValueError`` naming the options for an unknown ``encoder_std``."""
    if encoder_std not in ENCODER_STDS:
        raise ValueError(f"unknown encoder_std {encoder_std!r}; choose one of {ENCODER_STDS}")


def recover_exogenous(
    inputs: torch.Tensor | np.ndarray,
    targets: torch.Tensor | np.ndarray,
    encoder_std: str = "loo",
    noise_variance: float | None = None,
) -> ExogenousResiduals:
    """Fit the encoder GP ``φ : inputs (n, d) -> targets (n,)`` (:func:`~causalbandits.
    estimators.gp.node_gp`, learned noise unless ``noise_variance``) and return its
    standardised residuals (:func:`standardised_residuals`)."""
    check_encoder_std(encoder_std)
    w = torch.as_tensor(inputs, dtype=DTYPE)
    x = torch.as_tensor(targets, dtype=DTYPE)
    if w.ndim == 1:
        w = w.unsqueeze(-1)
    if x.ndim != 1 or w.ndim != 2 or w.shape[0] != x.shape[0]:
        raise ValueError(
            f"need inputs (n, d) and targets (n,), got {tuple(w.shape)} and {tuple(x.shape)}"
        )
    if x.shape[0] < 2:
        raise ValueError(f"exogenous recovery needs at least 2 points, got {x.shape[0]}")
    if not (torch.isfinite(w).all() and torch.isfinite(x).all()):
        raise ValueError("exogenous recovery needs finite inputs and targets (found NaN or inf)")
    return standardised_residuals(node_gp(w, x, noise_variance), encoder_std)


def standardised_residuals(model: SingleTaskGP, encoder_std: str = "loo") -> ExogenousResiduals:
    """``û_τ = (x_τ − μ_φ(w_τ)) / σ_φ(w_τ)`` at the training points of the fitted encoder GP
    ``model`` (Thm 4.1; the three ``encoder_std`` options of the module docstring)."""
    check_encoder_std(encoder_std)
    prior = training_prior(model)
    cholesky = torch.linalg.cholesky(prior.covariance)
    precision = torch.cholesky_inverse(cholesky)  # K̂⁻¹
    alpha = precision @ (prior.targets - prior.mean)  # K̂⁻¹ (y − m)
    diagonal = precision.diagonal()
    x = prior.offset + prior.scale * prior.targets
    if encoder_std == "predictive":
        noise = prior.noise
        mean = prior.targets - noise * alpha
        variance = (2 * noise - noise**2 * diagonal).clamp_min(0.0)
    else:
        mean = prior.targets - alpha / diagonal
        variance = 1.0 / diagonal
    means = prior.offset + prior.scale * mean
    stds = prior.scale * variance.sqrt()
    if encoder_std == "heteroscedastic":
        stds = heteroscedastic_std(model.train_inputs[0], x - means)
    return ExogenousResiduals((x - means) / stds, means, stds, encoder_std)


def heteroscedastic_std(inputs: torch.Tensor, residuals: torch.Tensor) -> torch.Tensor:
    """``σ_φ(w_τ) = sqrt(c · exp(μ_logr²(w_τ)))`` from a GP on ``log r²`` (module docstring):
    ``c = mean(r² / exp(μ_logr²))`` matches the second moment, so ``mean((r/σ_φ)²) = 1``."""
    squared = residuals**2
    log_squared = torch.log(squared.clamp_min(LOG_FLOOR * float(squared.mean())))
    log_model = node_gp(inputs, log_squared)
    with torch.no_grad():
        log_variance = log_model.posterior(inputs).mean.squeeze(-1)
    scale = torch.mean(squared / torch.exp(log_variance))
    return torch.sqrt(scale * torch.exp(log_variance))


@dataclass(frozen=True, eq=False)
class ExogenousDensity:
    """A 1-D Gaussian mixture ``p(û) = Σ_k w_k N(μ_k, s_k²)`` (Sec. 4.2), components
    sorted by mean: ``weights``, ``means`` and ``stds`` are numpy arrays of length K."""

    weights: np.ndarray
    means: np.ndarray
    stds: np.ndarray

    @property
    def n_components(self) -> int:
        return len(self.weights)

    def mean(self) -> float:
        """``E û = Σ_k w_k μ_k``."""
        return float(np.sum(self.weights * self.means))

    def variance(self) -> float:
        """``Var û = Σ_k w_k (s_k² + μ_k²) − (E û)²``."""
        second = float(np.sum(self.weights * (self.stds**2 + self.means**2)))
        return second - self.mean() ** 2

    def pdf(self, points: np.ndarray) -> np.ndarray:
        """The density ``Σ_k w_k N(points; μ_k, s_k²)`` at ``points`` (any shape)."""
        z = (np.asarray(points, dtype=float)[..., None] - self.means) / self.stds
        return np.sum(self.weights * np.exp(-0.5 * z**2) / (np.sqrt(2 * np.pi) * self.stds), -1)

    def sample(
        self, uniforms: torch.Tensor | np.ndarray, normals: torch.Tensor | np.ndarray
    ) -> torch.Tensor | np.ndarray:
        """Reparameterised draws from fixed base samples (decisions: excbo 7): the
        component of a draw is the first ``k`` with ``u < Σ_{j≤k} w_j``, the draw is
        ``μ_k + s_k ε``. ``uniforms`` in [0, 1) and ``normals`` of one (broadcastable) shape,
        both torch (float64 result on their device) or both numpy."""
        cumulative = np.cumsum(self.weights)
        last = self.n_components - 1
        if isinstance(uniforms, torch.Tensor):
            device = uniforms.device
            cum = torch.as_tensor(cumulative, dtype=DTYPE, device=device)
            index = torch.searchsorted(cum, uniforms.to(DTYPE).contiguous(), right=True)
            index = index.clamp(max=last)
            means = torch.as_tensor(self.means, dtype=DTYPE, device=device)
            stds = torch.as_tensor(self.stds, dtype=DTYPE, device=device)
            return means[index] + stds[index] * torch.as_tensor(normals, dtype=DTYPE, device=device)
        index = np.minimum(np.searchsorted(cumulative, np.asarray(uniforms), side="right"), last)
        return self.means[index] + self.stds[index] * np.asarray(normals, dtype=float)

    def draw(self, rng: RNGLike, size: int | tuple[int, ...]) -> np.ndarray:
        """``size`` draws (numpy) through :meth:`sample` with base samples from ``rng``."""
        generator = as_generator(rng)
        return self.sample(generator.random(size), generator.standard_normal(size))


def fit_exogenous_density(
    u: torch.Tensor | np.ndarray,
    components: str | int = "bic",
    random_state: int | np.random.Generator | None = 0,
    n_init: int = GMM_N_INIT,
    reg_covar: float = GMM_REG_COVAR,
) -> ExogenousDensity:
    """Fit ``p(Û)`` to the recovered noise ``u`` (n,) (decisions: excbo 5): ``components`` is
    ``"bic"`` (the K in ``BIC_COMPONENTS`` with the lowest BIC) or a fixed K; with fewer than
    ``MIN_MIXTURE_POINTS`` points K = 1 whatever is asked. ``random_state``
    seeds EM's initialisations (a ``Generator`` gives one integer)."""
    values = (u.detach().cpu().numpy() if isinstance(u, torch.Tensor) else np.asarray(u)).astype(
        float
    )
    if values.ndim != 1:
        raise ValueError(f"need recovered noise of shape (n,), got {values.shape}")
    if values.shape[0] < 2:
        raise ValueError(f"a noise density needs at least 2 points, got {values.shape[0]}")
    if not np.isfinite(values).all():
        raise ValueError("the recovered noise must be finite (found NaN or inf)")
    if components == "bic":
        candidates = BIC_COMPONENTS
    elif isinstance(components, (int, np.integer)) and not isinstance(components, bool):
        if not 1 <= components <= values.shape[0]:
            raise ValueError(f"components must be in 1..{values.shape[0]}, got {components}")
        candidates = (int(components),)
    else:
        raise ValueError(f"components must be 'bic' or a positive int, got {components!r}")
    if values.shape[0] < MIN_MIXTURE_POINTS:
        candidates = (1,)
    if isinstance(random_state, np.random.Generator):
        random_state = int(random_state.integers(2**31))
    data = values[:, None]
    fits = [
        GaussianMixture(
            k, covariance_type="full", reg_covar=reg_covar, n_init=n_init, random_state=random_state
        ).fit(data)
        for k in candidates
    ]
    best = min(fits, key=lambda m: m.bic(data))
    order = np.argsort(best.means_[:, 0])
    return ExogenousDensity(
        weights=best.weights_[order].copy(),
        means=best.means_[order, 0].copy(),
        stds=np.sqrt(best.covariances_[order, 0, 0]),
    )
