"""The causal-BO policies' acquisitions against independent formulas (issue 32).

Each policy is trained on a short random design of Dropwave (``a -> X -> Y``, eq. 11's
mixture noise at sigma = 0.1) and asked for one proposal; a spy on
:meth:`SequentialOptimizer.maximise` keeps the acquisition the policy built and the decision
it found. That acquisition is then checked against a formula written here from the node
models' own BoTorch posteriors (``model.posterior``, not the library's cached posterior or
network sampler): GP-UCB against BoTorch's ``UpperConfidenceBound``, EICF's qEI against a
brute-force Monte Carlo EI over the same posterior samples, GP-MCBO's and EXCBO's network
acquisitions against the two-node network propagated by hand, NMCBO's hallucinated network
and ``eta`` networks by hand; the noise each is told against the environment's; the
exogenous-noise mixture against known two-component data, and EXCBO's samples of it by a
Kolmogorov-Smirnov test; the optimism of EXCBO's variants A and C.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from botorch.acquisition import UpperConfidenceBound
from scipy import stats

from causalbandits.envs.bo_problems import dropwave
from causalbandits.envs.causal_bo import Objective
from causalbandits.estimators.exogenous import (
    ExogenousDensity,
    fit_exogenous_density,
    recover_exogenous,
    standardised_residuals,
)
from causalbandits.estimators.gp import node_gp
from causalbandits.estimators.gp_network import (
    BaseSamples,
    NetworkAcquisition,
    Optimism,
    training_inputs,
)
from causalbandits.policies.bo_baselines import EICF, GPUCB, MCBO
from causalbandits.policies.causal_bo import AcquisitionOptimiser
from causalbandits.policies.excbo import EXCBO
from causalbandits.policies.nmcbo import NMCBO

CHEAP = AcquisitionOptimiser(restarts=2, raw_samples=16, max_iterations=10)
SIGMA = 0.1
ROUNDS = 10
F64 = torch.float64


@pytest.fixture(autouse=True)
def one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def trained(policy):
    """``policy`` after ``ROUNDS`` rounds of its (random) initial design on Dropwave."""
    env = dropwave(sigma=SIGMA, horizon=ROUNDS + 5)
    env.reset(0)
    policy.reset(5)
    for _ in range(ROUNDS):
        action = policy.suggest()
        policy.observe(action, env.step(action[None])[0])
    return policy


def make(cls, **options):
    return trained(cls(dropwave(sigma=SIGMA, horizon=5).problem, n_init=ROUNDS, **options))


def proposal(policy) -> tuple[np.ndarray, list[tuple[object, torch.Tensor, int]]]:
    """The next suggestion and every ``(acquisition, decision, seed)`` the policy maximised."""
    calls = []
    maximise = policy.maximise

    def spy(acquisition, dimension, seed):
        decision = maximise(acquisition, dimension, seed)
        calls.append((acquisition, decision, seed))
        return decision

    policy.maximise = spy
    seed = int(copy.deepcopy(policy.rng).integers(2**31))  # the seed suggest() draws
    action = policy.suggest()
    assert [c[2] for c in calls] == [seed + k for k in range(len(calls))]  # EICF: seed, seed + 1
    return action, calls


def node_posterior(model, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """BoTorch's posterior mean and standard deviation of ``model`` at ``inputs`` (S, d)."""
    with torch.no_grad():
        posterior = model.posterior(inputs)
    return posterior.mean.squeeze(-1), posterior.variance.squeeze(-1).sqrt()


def observation_variance(model) -> float:
    """The noise variance a fitted node GP carries, read as BoTorch's predictive variance
    with observation noise minus without (at a training input, in the targets' units)."""
    x = model.train_inputs[0][:1]
    with torch.no_grad():
        noisy = model.posterior(x, observation_noise=True).variance
        plain = model.posterior(x).variance
    return float(noisy - plain)


def hand_propagated(
    policy,
    models,
    action: torch.Tensor,
    eta: torch.Tensor | None,
    beta: float,
    *,
    exogenous: torch.Tensor | None = None,
    noise: torch.Tensor | None = None,
    draws: torch.Tensor | None = None,
) -> torch.Tensor:
    """Dropwave's objective ``Y`` per base sample, propagated by hand through the node models:
    ``X = mu_X(a[, u_X]) + beta eta_X sigma_X (+ sigma_X d_X) (+ n_X)``, then ``Y`` the same
    on ``(X - min X) / (max X - min X)`` over the observed ``X`` (MCBO's input scaling)."""
    given = [t for t in (exogenous, noise, draws) if t is not None]
    samples = given[0].shape[0] if given else 1
    low, high = policy.values[:, 0].min(), policy.values[:, 0].max()
    node_input = action.reshape(1, 2).expand(samples, 2)
    values = []
    for i, model in enumerate(models):
        if exogenous is not None:
            node_input = torch.cat([node_input, exogenous[:, i : i + 1]], dim=-1)
        mean, std = node_posterior(model, node_input)
        value = mean
        if eta is not None:
            value = value + beta * eta[i] * std
        if draws is not None:
            value = value + draws[:, i] * std
        if noise is not None:
            value = value + noise[:, i]
        values.append(value)
        node_input = ((value - float(low)) / float(high - low)).unsqueeze(-1)
    return values[1]


def grid_points(count: int = 7, extra: int = 0, seed: int = 0) -> torch.Tensor:
    """``count^2`` actions on a grid, each with ``extra`` random decision coordinates."""
    axis = torch.linspace(0.0, 1.0, count, dtype=F64)
    actions = torch.cartesian_prod(axis, axis)
    if extra:
        generator = torch.Generator().manual_seed(seed)
        tail = torch.rand(actions.shape[0], extra, generator=generator, dtype=F64)
        actions = torch.cat([actions, tail], dim=-1)
    return actions.unsqueeze(1)


# ------------------------------------------------------------------------------ GP-UCB


@pytest.mark.parametrize("noise", ["learned", "known", "package"])
def test_gp_ucb_is_botorchs_upper_confidence_bound_on_its_model(noise: str) -> None:
    """GP-UCB's acquisition is ``mu + sqrt(beta) sigma`` of one GP ``a -> Y`` on the observed
    objective: BoTorch's ``UpperConfidenceBound`` on the same model (beta = 3, where
    ``sqrt(beta)`` and ``beta`` differ), and the proposal is its maximiser."""
    policy = make(GPUCB, beta=3.0, optimiser=AcquisitionOptimiser(), noise=noise)
    action, calls = proposal(policy)
    ((acquisition, decision, _),) = calls
    model = acquisition.network.marginals[0].model
    torch.testing.assert_close(model.train_inputs[0], torch.as_tensor(policy.actions))
    points = grid_points()
    with torch.no_grad():
        expected = UpperConfidenceBound(model, beta=3.0)(points)
        torch.testing.assert_close(acquisition(points), expected, rtol=1e-6, atol=1e-9)
        at_decision = float(acquisition(decision.reshape(1, 1, 2)))
        assert at_decision >= float(expected.max()) - 1e-6  # the maximiser, up to L-BFGS-B
        mean, std = node_posterior(model, decision.reshape(1, 2))
    assert at_decision == pytest.approx(float(mean + math.sqrt(3.0) * std), rel=1e-6)
    np.testing.assert_allclose(action, decision.numpy())
    told = observation_variance(model)
    if noise == "known":  # the objective's node Y: eq. 11's mixture variance 5 sigma^2
        assert told == pytest.approx(policy.problem.noise_variance[1], rel=1e-6)
        assert told == pytest.approx(5 * SIGMA**2, rel=1e-6)
    elif noise == "package":  # the MCBO package's near-noiseless FixedNoiseGP(Yvar=1e-6)
        assert told == pytest.approx(1e-6, rel=1e-3)
    else:
        assert told > 1e-6 and told != pytest.approx(5 * SIGMA**2, rel=1e-3)


# -------------------------------------------------------------------------------- EICF


@dataclass(frozen=True)
class NodeSum(Objective):
    """A composite objective ``X + Y`` (decisions: excbo 16)."""

    def nodes(self, n_nodes: int) -> tuple[int, ...]:
        return (0, 1)

    def __call__(self, x):
        return x[..., 0] + x[..., 1]


def composite(policy_class, **options):
    problem = dataclasses.replace(dropwave(sigma=SIGMA, horizon=5).problem, objective=NodeSum())
    return trained(policy_class(problem, n_init=ROUNDS, **options))


@pytest.mark.parametrize("objective", ["Y", "X + Y"])
def test_eicf_qei_is_the_monte_carlo_ei_over_the_same_posterior_samples(objective: str) -> None:
    """EICF's qEI: ``mean_s (g(x_s) - best)^+`` with ``x_s,i = mu_i + sigma_i z_s,i`` from
    the node GPs and the sampler's base samples, ``g`` the objective (``Y`` or the composite
    ``X + Y``) and ``best`` the best observed ``g``; the mean candidate maximises the Monte
    Carlo mean of ``g`` over the same samples, and the proposal is the candidate of higher
    EI."""
    policy = make(EICF, optimiser=CHEAP) if objective == "Y" else composite(EICF, optimiser=CHEAP)
    action, calls = proposal(policy)
    (improvement, candidate, _), (mean_acquisition, exploit, _) = calls
    observed = policy.values[:, 1] + (policy.values[:, 0] if objective != "Y" else 0.0)
    assert float(improvement.best_f) == pytest.approx(float(observed.max()))
    models = improvement.model.models
    assert len(models) == 2
    for model in models:  # each node GP is a -> x_i on the observed data
        torch.testing.assert_close(model.train_inputs[0], torch.as_tensor(policy.actions))
    points = torch.cat([grid_points(4), candidate.reshape(1, 1, 2), exploit.reshape(1, 1, 2)])
    with torch.no_grad():
        ei = improvement(points)
        base = improvement.sampler.base_samples  # (S, 1, q=1, nodes)
        regret = mean_acquisition(points)
        base_mean = mean_acquisition.sampler.base_samples
    assert base.shape[0] == 128 and base.shape[-1] == 2
    assert mean_acquisition.sampler is improvement.sampler  # the same 128 QMC samples

    def objective_samples(base_samples: torch.Tensor) -> torch.Tensor:
        nodes = []
        for i, model in enumerate(models):
            mean, std = node_posterior(model, points[:, 0])
            nodes.append(mean + std * base_samples[:, 0, 0, i : i + 1])  # (S, b)
        return nodes[1] if objective == "Y" else nodes[0] + nodes[1]

    brute = torch.clamp(objective_samples(base) - float(improvement.best_f), min=0).mean(dim=0)
    torch.testing.assert_close(ei, brute, rtol=1e-6, atol=1e-9)
    torch.testing.assert_close(
        regret, objective_samples(base_mean).mean(dim=0), rtol=1e-6, atol=1e-9
    )
    chosen = candidate if ei[-2] >= ei[-1] else exploit
    np.testing.assert_allclose(action, chosen.numpy())


@pytest.mark.parametrize("noise", ["known", "package"])
def test_eicf_tells_each_node_the_noise_it_knows(noise: str) -> None:
    """ "known": the environment's exact variance (eq. 11's ``5 sigma^2``); "package": the MCBO
    package's near-noiseless ``1e-6`` (raised to ``1e-6 s_i^2`` where GPyTorch's floor of 1e-6
    on the standardised noise binds, ``s_i`` the node's observed standard deviation)."""
    policy = make(EICF, optimiser=CHEAP, noise=noise)
    _, calls = proposal(policy)
    told = [observation_variance(m) for m in calls[0][0].model.models]
    if noise == "known":
        assert told == pytest.approx([5 * SIGMA**2] * 2, rel=1e-6)
        assert told == pytest.approx(list(policy.problem.noise_variance), rel=1e-6)
    else:
        spread = policy.values.var(axis=0, ddof=1)
        assert told == pytest.approx([max(1e-6, 1e-6 * v) for v in spread], rel=1e-3)


# ------------------------------------------------------------------------------ GP-MCBO


@pytest.mark.parametrize(
    ("noise", "variance"), [("known", 5 * SIGMA**2), ("package", SIGMA**2), ("learned", None)]
)
def test_gp_mcbo_acquisition_is_the_hand_propagated_network(noise: str, variance) -> None:
    """GP-MCBO's acquisition at ``[a, v]``: the mean over its base samples of ``Y`` with
    ``X = mu_X(a) + beta (2 v_X - 1) sigma_X + rho_X z_X`` and ``Y`` likewise on the scaled
    ``X``; ``rho^2`` is the told variance: the environment's ``5 sigma^2`` ("known"), the
    package's ``sigma^2`` ("package") or each GP's learned noise, and each node GP carries
    that variance."""
    policy = make(MCBO, beta=2.0, samples=64, optimiser=CHEAP, noise=noise)
    action, calls = proposal(policy)
    ((acquisition, decision, seed),) = calls
    models = [marginal.model for marginal in acquisition.network.marginals]
    told = [observation_variance(m) for m in models]
    if variance is not None:
        assert told == pytest.approx([variance, variance], rel=1e-6)
    generator = torch.Generator().manual_seed(seed)
    normals = torch.randn(64, 2, generator=generator, dtype=F64)
    noise_draws = torch.tensor(told, dtype=F64).sqrt() * normals
    torch.testing.assert_close(acquisition.samples.noise, noise_draws, rtol=1e-10, atol=1e-14)
    points = torch.cat([grid_points(3, extra=2), decision.reshape(1, 1, 4)])
    with torch.no_grad():
        got = acquisition(points)
    for k in range(points.shape[0]):
        decided = points[k, 0]
        eta = 2 * decided[2:] - 1
        y = hand_propagated(policy, models, decided[:2], eta, 2.0, noise=noise_draws)
        assert float(got[k]) == pytest.approx(float(y.mean()), rel=1e-6, abs=1e-9)
    np.testing.assert_allclose(action, decision[:2].numpy())


# -------------------------------------------------------------------------------- EXCBO


def excbo_proposal(variant: str):
    """One proposal of EXCBO's ``variant`` (built in the test body, not in a shared fixture:
    mutation testing attributes the code a test runs to that test only)."""
    policy = make(EXCBO, variant=variant, beta=1.0, samples=256, optimiser=CHEAP)
    return (policy, *proposal(policy))


def decoders(acquisition: NetworkAcquisition) -> list:
    return [marginal.model for marginal in acquisition.network.marginals]


def test_excbo_hallucinated_acquisition_is_the_hand_propagated_decoder_network() -> None:
    """Option B: ``x_i = mu_g,i(w_i, u_i) + beta (2 v_i - 1) sigma_g,i(w_i, u_i)`` with the
    fixed samples ``u`` of the recovered noise as the decoders' last input; its maximum is
    optimistic (``eta_Y = +1``, above the posterior mean there)."""
    policy, action, calls = excbo_proposal("hallucinated")
    ((acquisition, decision, _),) = calls
    exogenous = acquisition.samples.exogenous
    assert acquisition.optimism.hallucinate and exogenous.shape == (256, 2)
    models = decoders(acquisition)
    points = torch.cat([grid_points(3, extra=2, seed=1), decision.reshape(1, 1, 4)])
    with torch.no_grad():
        got = acquisition(points)
    for k in range(points.shape[0]):
        decided = points[k, 0]
        y = hand_propagated(
            policy, models, decided[:2], 2 * decided[2:] - 1, 1.0, exogenous=exogenous
        )
        assert float(got[k]) == pytest.approx(float(y.mean()), rel=1e-6, abs=1e-9)
    posterior_mean = hand_propagated(policy, models, decision[:2], None, 0.0, exogenous=exogenous)
    assert float(got[-1]) > float(posterior_mean.mean())
    np.testing.assert_allclose(action, decision[:2].numpy())


@pytest.mark.parametrize("variant", ["mean", "sample"])
def test_excbo_variants_a_and_c_are_optimistic_at_their_proposal(variant: str) -> None:
    """Options A and C add ``+beta sigma_Y`` at the target (eq. 10): at the proposal the
    acquisition is the hand-propagated network with ``eta_Y = +1`` (no draw at ``Y``) and lies
    above the posterior mean of the same network (``eta_Y = 0``) by ``beta`` times the mean
    of ``sigma_Y``."""
    policy, action, calls = excbo_proposal(variant)
    ((acquisition, decision, seed),) = calls
    assert not acquisition.optimism.hallucinate
    models = decoders(acquisition)
    draws = None
    if variant == "sample":
        generator = torch.Generator().manual_seed(seed + 1)
        draws = torch.randn(256, 2, generator=generator, dtype=F64)
        draws[:, 1] = 0.0
        torch.testing.assert_close(acquisition.samples.draws, draws)
    exogenous = acquisition.samples.exogenous
    eta_target = torch.tensor([0.0, 1.0], dtype=F64)
    with torch.no_grad():
        value = float(acquisition(decision.reshape(1, 1, 2)))
    optimistic = hand_propagated(
        policy, models, decision, eta_target, 1.0, exogenous=exogenous, draws=draws
    )
    plain = hand_propagated(policy, models, decision, None, 0.0, exogenous=exogenous, draws=draws)
    assert value == pytest.approx(float(optimistic.mean()), rel=1e-6, abs=1e-9)
    assert value > float(plain.mean()) + 1e-4  # optimism: above the posterior mean
    np.testing.assert_allclose(action, decision.numpy())


def test_excbo_exogenous_samples_follow_the_fitted_mixture() -> None:
    """The fixed samples ``u~`` of each node are draws of the mixture fitted (same seed) to
    the recovered noise the decoder was trained on (its last input column): a
    Kolmogorov-Smirnov test against the mixture's CDF does not reject, and a few moments
    agree."""
    policy = make(EXCBO, beta=1.0, samples=256, optimiser=CHEAP)
    network, exogenous = policy.surrogate(11)
    for node in range(2):
        recovered = network.marginals[node].model.train_inputs[0][:, -1]
        density = fit_exogenous_density(recovered, components="bic", random_state=11)
        samples = exogenous[:, node].numpy()
        assert stats.kstest(samples, mixture_cdf(density)).pvalue > 0.01
        se = math.sqrt(density.variance() / len(samples))
        assert abs(samples.mean() - density.mean()) < 4 * se
        assert samples.var() == pytest.approx(density.variance(), rel=0.3)


# ------------------------------------------------------------------------------ mixture


def test_mixture_fit_recovers_a_known_two_component_mixture() -> None:
    """EM on 4,000 draws of ``0.3 N(-2, 0.5^2) + 0.7 N(1.5, 1.5^2)``: BIC picks two
    components, and the weights, means and standard deviations (not variances) are the
    generating ones within a few standard errors."""
    rng = np.random.default_rng(3)
    n = 4000
    first = rng.random(n) < 0.3
    data = np.where(first, rng.normal(-2.0, 0.5, n), rng.normal(1.5, 1.5, n))
    density = fit_exogenous_density(data, components="bic", random_state=0)
    assert density.n_components == 2
    np.testing.assert_allclose(density.weights, [0.3, 0.7], atol=0.03)
    np.testing.assert_allclose(density.means, [-2.0, 1.5], atol=0.1)
    np.testing.assert_allclose(density.stds, [0.5, 1.5], atol=0.08)
    assert density.variance() == pytest.approx(np.var(data), rel=0.02)
    pdf_area = np.trapezoid(density.pdf(np.linspace(-8, 10, 4001)), dx=18 / 4000)
    assert pdf_area == pytest.approx(1.0, abs=1e-6)


def test_mixture_sampler_passes_a_kolmogorov_smirnov_test() -> None:
    """Reparameterised draws (uniforms pick the component, normals scale it) of a known
    mixture pass a KS test against its CDF; with the roles of the two swapped they fail."""
    density = ExogenousDensity(np.array([0.4, 0.6]), np.array([-1.0, 2.0]), np.array([0.3, 0.8]))
    rng = np.random.default_rng(0)
    uniforms, normals = rng.random(2000), rng.standard_normal(2000)

    def cdf(x):
        z = (np.asarray(x)[..., None] - density.means) / density.stds
        return np.sum(density.weights * stats.norm.cdf(z), axis=-1)

    assert stats.kstest(density.sample(uniforms, normals), cdf).pvalue > 0.01
    assert stats.kstest(density.sample(normals, uniforms), cdf).pvalue < 1e-6
    torch_draws = density.sample(torch.as_tensor(uniforms), torch.as_tensor(normals))
    assert stats.kstest(torch_draws.numpy(), cdf).pvalue > 0.01


# ------------------------------------------------------------------------------- NMCBO

SMALL = {"reinits": 4, "max_steps": 12, "batch_size": 4, "selection_samples": 32}


def test_nmcbo_hallucinated_network_is_propagated_by_hand() -> None:
    """NMCBO's objective for given network weights: ``a = sigmoid(theta)``, ``eta_X(w) =
    2 sigmoid(fc2(ReLU(fc1(w))) + b + baseline) - 1`` at ``w = a``, ``eta_Y = +1`` (the target),
    and ``x_i = mu_i + beta eta_i sigma_i + u_i`` with ``u_i`` of the told variance."""
    policy = make(NMCBO, beta=2.0, noise="known", **SMALL)
    hallucination = policy.hallucination()
    models = [marginal.model for marginal in hallucination.network.marginals]
    assert [observation_variance(m) for m in models] == pytest.approx([5 * SIGMA**2] * 2, rel=1e-6)
    generator = torch.Generator().manual_seed(4)
    params = policy.nets.initial(3, generator)
    noise = hallucination.noise(16, torch.Generator().manual_seed(5))
    normals = torch.randn(16, 2, generator=torch.Generator().manual_seed(5), dtype=F64)
    torch.testing.assert_close(noise, math.sqrt(5 * SIGMA**2) * normals)
    with torch.no_grad():
        got = hallucination.mean_objective(params, noise)
    for r in range(3):
        action = 1 / (1 + torch.exp(-params["action"][r]))
        hidden = torch.relu(action @ params["fc1.weight.0"][r] + params["fc1.bias.0"][r])
        logit = hidden @ params["fc2.weight.0"][r] + params["fc2.bias.0"][r]
        eta_x = 2 / (1 + torch.exp(-(logit + params["baseline.0"][r]))) - 1
        eta = torch.stack([eta_x, torch.ones((), dtype=F64)])
        y = hand_propagated(policy, models, action, eta, 2.0, noise=noise)
        assert float(got[r]) == pytest.approx(float(y.mean()), rel=1e-6, abs=1e-9)
    assert "fc1.weight.1" not in params  # the target's eta is fixed, not learned


def test_nmcbo_plays_the_best_scored_trained_networks() -> None:
    """The proposal is the action of the trained set with the highest selection score, and
    that set becomes the next warm start."""
    policy = make(NMCBO, **SMALL)
    scored = {}
    hallucination = policy.hallucination

    def spy_hallucination():
        made = hallucination()
        score = made.score

        def spy_score(params, noise, max_points=2**14):
            values = score(params, noise, max_points)
            scored["params"], scored["values"] = params, values
            return values

        object.__setattr__(made, "score", spy_score)
        return made

    policy.hallucination = spy_hallucination
    action = policy.suggest()
    best = int(torch.argmax(scored["values"]))
    expected = 1 / (1 + torch.exp(-scored["params"]["action"][best]))
    np.testing.assert_allclose(action, expected.numpy())
    assert len(policy.chosen) == 1
    torch.testing.assert_close(policy.chosen[0]["action"][0], scored["params"]["action"][best])
    assert len(scored["values"]) == SMALL["reinits"]


def test_target_node_options_need_an_objective_on_one_node() -> None:
    """EXCBO's options A/C and GP-UCB's known noise read one target node: a composite objective
    is refused; EXCBO's option B and every other baseline take it."""
    problem = dataclasses.replace(dropwave(sigma=SIGMA, horizon=5).problem, objective=NodeSum())
    for variant in ("mean", "sample"):
        with pytest.raises(ValueError, match=f"variant '{variant}' needs an objective on one"):
            EXCBO(problem, variant=variant)
    assert EXCBO(problem).target_node() is None
    assert EXCBO(dropwave(sigma=SIGMA, horizon=5).problem, variant="mean").target_node() == 1
    with pytest.raises(ValueError, match="^noise='known' for GP-UCB needs an objective on one"):
        GPUCB(problem, noise="known")
    assert GPUCB(problem, noise="package").objective_node == 0
    assert EXCBO(problem, components=1).options.components == 1
    with pytest.raises(ValueError, match="components must be 'bic' or an int >= 1, got 'two'"):
        EXCBO(problem, components="two")


def test_excbo_surrogate_is_a_function_of_its_seed() -> None:
    """The same seed gives the same decoder network and recovered-noise samples, bit for bit
    (the mixture's EM is seeded by it); another seed other samples."""
    policy = make(EXCBO, beta=1.0, samples=64, optimiser=CHEAP)
    first, second = policy.surrogate(17), policy.surrogate(17)
    assert torch.equal(first[1], second[1])
    points = grid_points(3, extra=2)
    with torch.no_grad():
        values = [
            NetworkAcquisition(
                n, policy.problem.objective, 2, Optimism(1.0), BaseSamples(exogenous=u)
            )(points)
            for n, u in (first, second)
        ]
    assert torch.equal(values[0], values[1])
    assert not torch.equal(policy.surrogate(18)[1], first[1])


# --------------------------------------------------------------- exogenous recovery: contract


def mixture_cdf(density: ExogenousDensity):
    def cdf(x):
        z = (np.asarray(x)[..., None] - density.means) / density.stds
        return np.sum(density.weights * stats.norm.cdf(z), axis=-1)

    return cdf


def test_mixture_sampler_conventions_ties_dtypes_and_draws() -> None:
    """A uniform equal to a cumulative weight picks the next component (the first ``k`` with
    ``u < sum_{j<=k} w_j``), in numpy and torch; float32 base samples give float64 draws of the
    same values; ``draw`` samples the mixture (KS test) and any shape of points has a pdf."""
    density = ExogenousDensity(np.array([0.25, 0.75]), np.array([-1.0, 2.0]), np.array([0.5, 1.0]))
    np.testing.assert_array_equal(density.sample(np.array([0.25]), np.array([1.0])), [3.0])
    tie = density.sample(torch.tensor([0.25, 0.0]), torch.tensor([1.0, 1.0], dtype=F64))
    np.testing.assert_array_equal(tie.numpy(), [3.0, -0.5])
    single = density.sample(
        torch.tensor([0.1, 0.9], dtype=torch.float32), torch.tensor([0.5, -0.5])
    )
    assert single.dtype == F64
    np.testing.assert_array_equal(single.numpy(), [-0.75, 1.5])
    draws = density.draw(np.random.default_rng(2), 3000)
    assert draws.shape == (3000,) and np.isfinite(draws).all()
    assert stats.kstest(draws, mixture_cdf(density)).pvalue > 0.01
    grid = np.linspace(-3, 5, 12).reshape(3, 4)
    np.testing.assert_allclose(
        density.pdf(grid), np.vectorize(lambda v: float(density.pdf(np.array([v]))[0]))(grid)
    )
    expected = 0.25 * stats.norm.pdf(0.5, -1, 0.5) + 0.75 * stats.norm.pdf(0.5, 2, 1)
    assert float(density.pdf(np.array([0.5]))[0]) == pytest.approx(expected, rel=1e-12)


def test_mixture_fit_options_are_applied() -> None:
    """One component is the sample mean and the sample variance plus ``reg_covar`` (EM's
    closed form); ``components`` in ``1..n`` (``n`` allowed), two points suffice, ten points
    take a fixed K (fewer fall back to one); an integer or a ``Generator`` seeds EM (the
    generator's first ``integers(2**31)``); torch input, even with gradients, is read."""
    rng = np.random.default_rng(7)
    data = rng.normal(0.5, 2.0, 300)
    one = fit_exogenous_density(data, components=1)
    assert one.means[0] == pytest.approx(data.mean(), rel=1e-9)
    assert one.stds[0] ** 2 == pytest.approx(data.var() + 1e-3, rel=1e-9)
    wide = fit_exogenous_density(data, components=1, reg_covar=0.5)
    assert wide.stds[0] ** 2 == pytest.approx(data.var() + 0.5, rel=1e-9)
    assert fit_exogenous_density(data[:2]).n_components == 1
    twelve = np.concatenate([rng.normal(-4, 0.1, 6), rng.normal(4, 0.1, 6)])
    assert fit_exogenous_density(twelve, components=12).n_components == 12
    assert fit_exogenous_density(twelve[1:11], components=2).n_components == 2
    assert fit_exogenous_density(twelve[1:10], components=2).n_components == 1
    mixed = np.concatenate([rng.normal(-2, 0.7, 150), rng.normal(1, 0.5, 150)])
    seeded = fit_exogenous_density(mixed, components=2, random_state=np.random.default_rng(5))
    integer = int(np.random.default_rng(5).integers(2**31))
    same = fit_exogenous_density(mixed, components=2, random_state=integer)
    for field in ("weights", "means", "stds"):
        np.testing.assert_array_equal(getattr(seeded, field), getattr(same, field))
    again = fit_exogenous_density(mixed, components=2, random_state=integer)
    np.testing.assert_array_equal(again.means, same.means)
    tensor = torch.tensor(mixed, requires_grad=True)
    np.testing.assert_array_equal(
        fit_exogenous_density(tensor, components=2, random_state=integer).means, same.means
    )
    with pytest.raises(ValueError, match=r"need recovered noise of shape \(n,\), got \(3, 2\)"):
        fit_exogenous_density(np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"must be finite \(found NaN or inf\)"):
        fit_exogenous_density(np.array([0.0, np.nan, 1.0]))
    with pytest.raises(ValueError, match="components must be in 1..3, got 4"):
        fit_exogenous_density(np.zeros(3), components=4)


def test_recovery_checks_its_input_and_passes_the_noise_on() -> None:
    """``recover_exogenous``: 1-D inputs are one column, a told noise variance reaches the
    encoder GP, the LOO encoder is the default, and bad shapes, fewer than 2 points or NaN in
    either argument are refused with the shapes named."""
    rng = np.random.default_rng(3)
    z = rng.uniform(-1, 1, 12)
    x = np.sin(2 * z) + 0.1 * rng.standard_normal(12)
    told = recover_exogenous(z, x, noise_variance=0.01)
    model = node_gp(torch.tensor(z[:, None]), torch.tensor(x), 0.01)
    expected = standardised_residuals(model)
    assert expected.encoder_std == "loo" and told.encoder_std == "loo"
    torch.testing.assert_close(told.values, expected.values)
    assert recover_exogenous(z[:2], x[:2]).values.shape == (2,)
    with pytest.raises(ValueError, match=r"got \(12, 1\) and \(11,\)"):
        recover_exogenous(z, x[:11])
    with pytest.raises(ValueError, match=r"got \(12, 1\) and \(12, 1\)"):
        recover_exogenous(z, x[:, None])
    with pytest.raises(ValueError, match=r"got \(12, 1, 1\) and \(12,\)"):
        recover_exogenous(z[:, None, None], x)
    with pytest.raises(ValueError, match="at least 2 points, got 1"):
        recover_exogenous(z[:1], x[:1])
    bad = x.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match=r"finite inputs and targets \(found NaN or inf\)"):
        recover_exogenous(z, bad)


def test_excbo_surrogate_reproduced_step_by_step() -> None:
    """EXCBO's surrogate (Alg. 1, decisions: excbo 4, 5, 7) redone by hand for K = 2 and the
    predictive encoder: each node's encoder GP on ``[a_i, minmax(z_i)]`` gives the recovered
    noise (the decoder's last input), a two-component mixture is fitted with the proposal's
    seed, and the fixed samples are ``mu_k + s_k eps`` with the component picked by the first
    ``S x nodes`` uniforms and ``eps`` the next normals of a generator seeded the same."""
    policy = make(EXCBO, encoder_std="predictive", components=2, samples=64, optimiser=CHEAP)
    network, exogenous = policy.surrogate(21)
    actions, values = policy.tensors()
    inputs, _ = training_inputs(policy.specs, actions, values)
    generator = torch.Generator().manual_seed(21)
    uniforms = torch.rand(64, 2, generator=generator, dtype=F64)
    normals = torch.randn(64, 2, generator=generator, dtype=F64)
    for i in range(2):
        recovered = standardised_residuals(node_gp(inputs[i], values[:, i]), "predictive").values
        decoder_inputs = network.marginals[i].model.train_inputs[0]
        torch.testing.assert_close(decoder_inputs[:, -1], recovered)
        torch.testing.assert_close(decoder_inputs[:, :-1], inputs[i])
        density = fit_exogenous_density(recovered, components=2, random_state=21)
        assert density.n_components == 2
        torch.testing.assert_close(exogenous[:, i], density.sample(uniforms[:, i], normals[:, i]))


def test_constructor_defaults_and_options_reach_the_policies() -> None:
    """The papers' defaults (EXCBO beta = 0.5, the MCBO runner's beta = 5 for GP-UCB, GP-MCBO
    and NMCBO; 128 samples) and a given optimiser are kept; bad numbers are named."""
    problem = dropwave(sigma=SIGMA, horizon=5).problem
    assert EXCBO(problem).options.beta == 0.5 and EXCBO(problem).options.samples == 128
    assert GPUCB(problem).options.beta == 5.0 and MCBO(problem).options.beta == 5.0
    assert MCBO(problem).options.samples == 128 and NMCBO(problem).options.beta == 5.0
    for cls in (EXCBO, GPUCB, EICF, MCBO):
        assert cls(problem, optimiser=CHEAP).optimiser is CHEAP
        assert cls(problem, n_init=7).n_init == 7
        assert cls(problem).n_init == 6  # 2 (|A| + 1)
    with pytest.raises(ValueError, match="^beta must be >= 0"):
        EXCBO(problem, beta=-0.1)
    with pytest.raises(ValueError, match="^samples must be an integer >= 1"):
        EXCBO(problem, samples=0)
    with pytest.raises(ValueError, match="^samples must be an integer >= 1"):
        MCBO(problem, samples=0)
    with pytest.raises(ValueError, match="^beta must be >= 0"):
        GPUCB(problem, beta=-1.0)
    with pytest.raises(ValueError, match="^beta must be >= 0"):
        MCBO(problem, beta=-1.0)
    unknown = dataclasses.replace(problem, noise_variance=())
    with pytest.raises(ValueError, match="^noise='known' needs a problem that states its noise_"):
        MCBO(unknown, noise="known")
