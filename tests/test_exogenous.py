"""EXCBO's exogenous recovery (paper Sec. 4; decisions: excbo 4, 5): the encoder's residuals
against explicit refits, the recovery thresholds (decisions: excbo 19) on one seeded data
set per mechanism, the mixture density and its reparameterised sampler, the HSIC test."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs the gp extra: pip install causalbandits[gp]")
pytest.importorskip("sklearn", reason="needs scikit-learn")

from botorch.models import SingleTaskGP  # noqa: E402

from causalbandits.estimators.exogenous import (  # noqa: E402
    ExogenousDensity,
    fit_exogenous_density,
    recover_exogenous,
    standardised_residuals,
)
from causalbandits.estimators.gp import DTYPE, node_gp, training_prior  # noqa: E402
from causalbandits.estimators.independence import hsic_test  # noqa: E402

#: ``±1 / sd(U)`` for ``U ~ ½N(−1, 0.3²) + ½N(1, 0.3²)`` (decisions: excbo 19).
MODE = 1 / np.hypot(1.0, 0.3)


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """Small GPs: several threads only contend (ten times slower on a loaded machine)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def bimodal(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.where(rng.random(n) < 0.5, -1.0, 1.0) + 0.3 * rng.standard_normal(n)


def small_model(noise_variance: float | None) -> SingleTaskGP:
    rng = np.random.default_rng(3)
    z = rng.uniform(-2, 2, (25, 2))
    x = np.sin(2 * z[:, 0]) + z[:, 1] ** 2 + 0.3 * rng.standard_normal(25)
    return node_gp(torch.tensor(z), torch.tensor(x), noise_variance)


@pytest.mark.parametrize("noise_variance", [None, 0.05])
def test_loo_residuals_equal_refits_without_the_point(noise_variance: float | None) -> None:
    """Closed-form LOO = the GP refitted on the other n − 1 points with *everything* of the
    full model fixed: kernel hyper-parameters, noise, the constant prior mean, and the
    outcome standardisation (the hyper-parameters live in the standardised space, so a
    re-standardisation on n − 1 points would be a different model)."""
    model = small_model(noise_variance)
    loo = standardised_residuals(model, "loo")
    prior = training_prior(model)
    inputs, targets = model.train_inputs[0], prior.targets
    noise = prior.noise
    for tau in (0, 7, 24):
        keep = torch.arange(len(targets)) != tau
        options = {"train_Yvar": noise[keep].unsqueeze(-1)} if noise_variance else {}
        if noise_variance is None:
            options["likelihood"] = copy.deepcopy(model.likelihood)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            held_out = SingleTaskGP(
                inputs[keep],
                targets[keep].unsqueeze(-1),
                covar_module=copy.deepcopy(model.covar_module),
                mean_module=copy.deepcopy(model.mean_module),
                outcome_transform=None,
                **options,
            ).eval()
        with torch.no_grad():
            posterior = held_out.posterior(
                inputs[tau : tau + 1], observation_noise=noise[tau].reshape(1, 1)
            )
        mean = prior.offset + prior.scale * posterior.mean.squeeze()
        std = prior.scale * posterior.variance.squeeze().sqrt()
        x = prior.offset + prior.scale * targets[tau]
        assert float(loo.means[tau]) == pytest.approx(float(mean), abs=1e-8)
        assert float(loo.stds[tau]) == pytest.approx(float(std), abs=1e-8)
        assert float(loo.values[tau]) == pytest.approx(float((x - mean) / std), abs=1e-8)


def test_predictive_residuals_use_the_posterior_plus_noise() -> None:
    model = small_model(None)
    found = standardised_residuals(model, "predictive")
    with torch.no_grad():
        posterior = model.posterior(model.train_inputs[0], observation_noise=True)
    np.testing.assert_allclose(found.means, posterior.mean.squeeze(-1), atol=1e-8)
    np.testing.assert_allclose(found.stds, posterior.variance.squeeze(-1).sqrt(), atol=1e-8)
    prior = training_prior(model)
    x = prior.offset + prior.scale * prior.targets
    np.testing.assert_allclose(found.values, (x - found.means) / found.stds, atol=1e-10)


@pytest.fixture(scope="module")
def node_data() -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """One seeded data set of n = 500 per mechanism of the recovery study (same Z and U)."""
    rng = np.random.default_rng(2024)
    z, u = rng.uniform(-2, 2, 500), bimodal(rng, 500)
    return {
        "anm": (z, u, np.sin(2 * z) + u),
        "dgm": (z, u, z**2 + (1 + 0.5 * z**2) * u),
        "non-dgm": (z, u, np.sin(z * u)),
    }


def test_anm_recovery_and_bimodal_density(node_data) -> None:
    """Recovery check (i) (decisions: excbo 19): |corr(û, U)| > 0.95, LOO û has mean 0 and
    var 1, the BIC-selected GMM has two components at ±0.96 (within 0.2) after
    standardisation."""
    z, u, x = node_data["anm"]
    uh = recover_exogenous(z[:, None], x, "loo").values.numpy()
    assert abs(np.corrcoef(uh, u)[0, 1]) > 0.95
    assert abs(uh.mean()) < 0.05 and abs(uh.var() - 1) < 0.05
    density = fit_exogenous_density(uh, "bic", random_state=0)
    assert density.n_components == 2
    means = (density.means - uh.mean()) / uh.std()
    np.testing.assert_allclose(means, [-MODE, MODE], atol=0.2)


def test_dgm_needs_the_heteroscedastic_encoder(node_data) -> None:
    """Recovery check (ii) (decisions: excbo 19): the homoscedastic encoder leaves û²
    correlated with Z² (HSIC rejects û ⊥ Z); the heteroscedastic one recovers U with û ⊥ Z."""
    z, u, x = node_data["dgm"]
    bound = 3 / np.sqrt(len(z))  # 3 null standard errors of a correlation
    homoscedastic = recover_exogenous(z[:, None], x, "loo").values.numpy()
    assert np.corrcoef(homoscedastic**2, z**2)[0, 1] > bound
    assert abs(np.corrcoef(homoscedastic, u)[0, 1]) < 0.95
    assert hsic_test(homoscedastic, z, 100, rng=1).p_value < 0.05
    heteroscedastic = recover_exogenous(z[:, None], x, "heteroscedastic")
    uh = heteroscedastic.values.numpy()
    assert abs(np.corrcoef(uh, u)[0, 1]) > 0.95
    assert abs(np.corrcoef(uh**2, z**2)[0, 1]) < bound
    assert hsic_test(uh, z, 100, rng=1).p_value > 0.05
    # moment-matched scale: mean(û²) = 1 exactly; σ_φ tracks f_b = 1 + Z²/2
    assert float(np.mean(uh**2)) == pytest.approx(1.0, abs=1e-10)
    assert np.corrcoef(heteroscedastic.stds.numpy(), 1 + 0.5 * z**2)[0, 1] > 0.9


def test_hsic_flags_the_non_dgm_and_not_an_independent_pair(node_data) -> None:
    """Recovery check (iii) (decisions: excbo 19)."""
    z, u, x = node_data["non-dgm"]
    uh = recover_exogenous(z[:, None], x, "loo").values.numpy()
    flagged = hsic_test(uh, z, 100, rng=5)
    assert flagged.p_value < 0.05
    assert flagged == hsic_test(uh, z, 100, rng=5)  # seeded permutations
    rng = np.random.default_rng(9)
    independent = hsic_test(rng.standard_normal(300), rng.uniform(size=(300, 2)), 100, rng=5)
    assert independent.p_value > 0.05


def test_hsic_statistic_is_the_trace_formula() -> None:
    """``HSIC = tr(K H L H) / n²`` with median-heuristic Gaussian kernels."""
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal(30), rng.standard_normal(30)
    grams = []
    for v in (x, y):
        d2 = (v[:, None] - v[None, :]) ** 2
        grams.append(np.exp(-d2 / (2 * np.median(d2[np.triu_indices(30, 1)]))))
    h = np.eye(30) - 1 / 30
    expected = np.trace(grams[0] @ h @ grams[1] @ h) / 30**2
    assert hsic_test(x, y, 10, rng=0).statistic == pytest.approx(expected, rel=1e-10)


MIXTURE = ExogenousDensity(np.array([0.3, 0.7]), np.array([-1.0, 2.0]), np.array([0.5, 1.0]))


def test_reparameterised_sampler_matches_the_mixture_moments() -> None:
    generator = torch.Generator().manual_seed(0)
    size = 40_000
    uniforms = torch.rand(size, generator=generator, dtype=DTYPE)
    normals = torch.randn(size, generator=generator, dtype=DTYPE)
    draws = MIXTURE.sample(uniforms, normals)
    assert draws.dtype == DTYPE and draws.shape == (size,)
    mean, variance = MIXTURE.mean(), MIXTURE.variance()
    assert mean == pytest.approx(0.3 * -1 + 0.7 * 2)
    assert variance == pytest.approx(0.3 * 1.25 + 0.7 * 5 - mean**2)
    se_mean = np.sqrt(variance / size)
    assert abs(float(draws.mean()) - mean) < 4 * se_mean
    centred = (draws - mean).numpy()
    se_variance = np.sqrt((np.mean(centred**4) - variance**2) / size)
    assert abs(float(draws.var()) - variance) < 4 * se_variance


def test_sampler_is_deterministic_given_base_samples() -> None:
    uniforms = np.array([0.1, 0.29, 0.31, 0.999, 1.0])
    normals = np.array([1.0, 0.0, -1.0, 2.0, 0.0])
    expected = np.array([-0.5, -1.0, 1.0, 4.0, 2.0])  # u < 0.3 picks the first component
    np.testing.assert_allclose(MIXTURE.sample(uniforms, normals), expected)
    as_torch = MIXTURE.sample(torch.tensor(uniforms), torch.tensor(normals))
    np.testing.assert_allclose(as_torch.numpy(), expected)
    np.testing.assert_array_equal(MIXTURE.draw(7, (3, 4)), MIXTURE.draw(7, (3, 4)))
    assert MIXTURE.draw(np.random.default_rng(1), 5).shape == (5,)


def test_bic_picks_one_component_for_gaussian_and_two_for_a_mixture() -> None:
    rng = np.random.default_rng(11)
    assert fit_exogenous_density(rng.standard_normal(400)).n_components == 1
    separated = np.concatenate([rng.normal(-3, 0.5, 200), rng.normal(3, 0.5, 200)])
    density = fit_exogenous_density(torch.tensor(separated), random_state=rng)
    assert density.n_components == 2
    np.testing.assert_allclose(density.means, [-3, 3], atol=0.15)
    np.testing.assert_allclose(density.weights, [0.5, 0.5], atol=1e-9)
    assert fit_exogenous_density(separated[::50], components=2).n_components == 1  # n < 10
    assert fit_exogenous_density(separated, components=3).n_components == 3


def test_clear_errors() -> None:
    z = np.linspace(0, 1, 5)
    with pytest.raises(ValueError, match="finite"):
        recover_exogenous(z, np.array([0.0, np.nan, 1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="at least 2"):
        recover_exogenous(z[:1], z[:1])
    with pytest.raises(ValueError, match="unknown encoder_std"):
        recover_exogenous(z, z, "median")
    with pytest.raises(ValueError, match="unknown encoder_std"):
        standardised_residuals(small_model(None), "median")
    with pytest.raises(ValueError, match="finite"):
        fit_exogenous_density(np.array([0.0, np.inf, 1.0]))
    with pytest.raises(ValueError, match="at least 2"):
        fit_exogenous_density(np.array([1.0]))
    with pytest.raises(ValueError, match="'bic' or a positive int"):
        fit_exogenous_density(z, components="aic")
    with pytest.raises(ValueError, match="components must be in"):
        fit_exogenous_density(z, components=0)
    with pytest.raises(ValueError, match="finite"):
        hsic_test(np.array([0.0, np.nan, 1.0]), z[:3])
    with pytest.raises(ValueError, match="same number"):
        hsic_test(z, z[:4])
