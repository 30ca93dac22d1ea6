"""The GP-network sampler: with zero posterior variance it is the composition of the node
models; hallucination, posterior draws and additive noise enter as documented."""

from __future__ import annotations

import pytest
import torch

from causalbandits.estimators.gp import node_gp
from causalbandits.estimators.gp_network import (
    BaseSamples,
    CachedPosterior,
    GPNetwork,
    MinMaxScaler,
    NetworkAcquisition,
    NodeSpec,
    Optimism,
    node_inputs,
    training_inputs,
)


class KnownFunction:
    """A stand-in for a node's posterior marginals: mean ``f(w)``, a constant variance."""

    def __init__(self, f, variance: float = 0.0) -> None:
        self.f, self.std = f, variance**0.5

    def __call__(self, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mean = self.f(w)
        return mean, torch.full_like(mean, self.std)


# Node 0: x0 = 2 a0 + a1 (root, two actions); node 1: x1 = sin(z) + a2 with z = minmax(x0);
# node 2: x2 = x0' x1' (two parents, no action), parents normalised by the scalers below.
SPECS = (NodeSpec((0, 1), ()), NodeSpec((2,), (0,)), NodeSpec((), (0, 1)))
SCALERS = (
    None,
    MinMaxScaler(torch.tensor([0.5]), torch.tensor([2.0])),
    MinMaxScaler(torch.tensor([-1.0, 0.0]), torch.tensor([4.0, 2.0])),
)


def network(variances=(0.0, 0.0, 0.0), exogenous: bool = False) -> GPNetwork:
    def node0(w):
        return 2 * w[..., 0] + w[..., 1] + (w[..., 2] if exogenous else 0)

    def node1(w):
        return torch.sin(w[..., 1]) + w[..., 0]

    def node2(w):
        return w[..., 0] * w[..., 1]

    models = tuple(
        KnownFunction(f, v) for f, v in zip((node0, node1, node2), variances, strict=True)
    )
    return GPNetwork(SPECS, models, SCALERS, (0, 1, 2), with_exogenous=exogenous)


def composed(a: torch.Tensor, u0: torch.Tensor | float = 0.0) -> torch.Tensor:
    x0 = 2 * a[..., 0] + a[..., 1] + u0
    x1 = torch.sin((x0 - 0.5) / 2.0) + a[..., 2]
    x2 = ((x0 + 1.0) / 4.0) * (x1 / 2.0)
    return torch.stack([x0, x1, x2], dim=-1)


def test_zero_variance_network_is_the_composition_of_the_node_models() -> None:
    a = torch.rand(7, 3, dtype=torch.float64)
    values = network().propagate(a)
    assert values.shape == (7, 1, 3)
    torch.testing.assert_close(values[:, 0], composed(a), rtol=0, atol=1e-12)
    # hallucination changes nothing without variance
    eta = torch.ones(7, 3, dtype=torch.float64)
    torch.testing.assert_close(network().propagate(a, eta=eta, beta=3.0), values)


def test_exogenous_samples_enter_the_decoder_input() -> None:
    a = torch.rand(4, 3, dtype=torch.float64)
    u = torch.tensor([[0.3, 0.0, 0.0], [-1.0, 0.0, 0.0]], dtype=torch.float64)
    values = network(exogenous=True).propagate(a, samples=BaseSamples(exogenous=u))
    assert values.shape == (4, 2, 3)
    for s in range(2):
        torch.testing.assert_close(values[:, s], composed(a, u[s, 0]), rtol=0, atol=1e-12)


def test_hallucination_draws_and_noise_shift_each_node_as_documented() -> None:
    a = torch.rand(2, 3, dtype=torch.float64)
    variances = (0.25, 0.0, 0.0)  # sigma_0 = 0.5
    eta = torch.tensor([[1.0, 0.0, 0.0], [-0.5, 0.0, 0.0]], dtype=torch.float64)
    out = network(variances).propagate(a, eta=eta, beta=2.0)
    shift = 2.0 * eta[:, 0] * 0.5
    torch.testing.assert_close(out[:, 0, 0], composed(a)[:, 0] + shift)
    torch.testing.assert_close(out[:, 0], composed(a, shift))  # children see the shifted parent
    draws = torch.tensor([[2.0, 0.0, 0.0]], dtype=torch.float64)
    out = network(variances).propagate(a, samples=BaseSamples(draws=draws))
    torch.testing.assert_close(out[:, 0], composed(a, 1.0))
    noise = torch.tensor([[0.0, 0.1, -0.2], [0.4, 0.0, 0.0]], dtype=torch.float64)
    out = network().propagate(a, samples=BaseSamples(noise=noise))
    assert out.shape == (2, 2, 3)
    torch.testing.assert_close(out[:, 1], composed(a, 0.4))
    expected = composed(a)
    assert torch.allclose(out[:, 0, 1], expected[:, 1] + 0.1)


def test_a_hallucination_function_of_the_node_input_shifts_by_its_value() -> None:
    """NMCBO's form: ``eta_i(w_i)`` evaluated at each node's input."""
    a = torch.rand(5, 3, dtype=torch.float64)
    calls: list[int] = []

    def eta(node: int, w: torch.Tensor) -> torch.Tensor:
        calls.append(node)
        return torch.tanh(w[..., 0] - w[..., -1])

    out = network((0.25, 0.0, 0.0)).propagate(a, eta=eta, beta=2.0)
    shift = 2.0 * torch.tanh(a[:, 0] - a[:, 1]) * 0.5  # node 0 reads (a0, a1), sigma_0 = 0.5
    torch.testing.assert_close(out[:, 0], composed(a, shift), rtol=0, atol=1e-12)
    assert calls == [0, 1, 2]


def test_a_node_whose_inputs_do_not_vary_with_the_sample_is_evaluated_once_per_decision() -> None:
    """With additive noise samples the root node's inputs are the action alone: its model
    sees one row per decision; its children see one per decision and sample."""
    seen: list[tuple[int, ...]] = []

    def recording(model):
        def call(w):
            seen.append(tuple(w.shape))
            return model(w)

        return call

    inner = network()
    recorded = GPNetwork(SPECS, tuple(map(recording, inner.marginals)), SCALERS, (0, 1, 2))
    a = torch.rand(4, 3, dtype=torch.float64)
    noise = torch.tensor([[0.0, 0.1, 0.0], [0.2, 0.0, 0.0], [0.0, 0.0, 0.3]], dtype=a.dtype)
    out = recorded.propagate(a, samples=BaseSamples(noise=noise))
    assert seen == [(4, 1, 2), (4, 3, 2), (4, 3, 2)]
    assert out.shape == (4, 3, 3)
    for s in range(3):
        expected = composed(a, noise[s, 0])
        expected[:, 1] += noise[s, 1]
        expected[:, 2] = ((expected[:, 0] + 1.0) / 4.0) * (expected[:, 1] / 2.0) + noise[s, 2]
        torch.testing.assert_close(out[:, s], expected, rtol=0, atol=1e-12)


def test_training_inputs_normalise_parents_over_the_data() -> None:
    actions = torch.rand(5, 3, dtype=torch.float64)
    values = torch.randn(5, 3, dtype=torch.float64)
    inputs, scalers = training_inputs(SPECS, actions, values)
    assert scalers[0] is None
    assert inputs[0].shape == (5, 2) and inputs[1].shape == (5, 2) and inputs[2].shape == (5, 2)
    assert inputs[2].min() == 0 and inputs[2].max() == 1
    torch.testing.assert_close(inputs[1][:, 0], actions[:, 2])
    empty = training_inputs((NodeSpec((), ()),), actions, values)[0][0]
    assert torch.equal(empty, torch.zeros(5, 1, dtype=torch.float64))


def test_the_scaler_maps_each_parent_onto_the_unit_interval_whatever_its_span() -> None:
    """Spans below 1 are divided out like the others; a constant parent (span 0) maps to 0."""
    values = torch.tensor([[0.1, 5.0, 2.0], [0.3, 5.0, 9.0], [0.2, 5.0, 4.0]], dtype=torch.float64)
    scaled = MinMaxScaler.fit(values)(values)
    torch.testing.assert_close(scaled[:, 0], torch.tensor([0.0, 1.0, 0.5], dtype=torch.float64))
    assert torch.equal(scaled[:, 1], torch.zeros(3, dtype=torch.float64))
    torch.testing.assert_close(scaled[:, 2], torch.tensor([0.0, 1.0, 2 / 7], dtype=torch.float64))


def test_a_node_without_actions_or_parents_reads_one_zero_column_per_sample() -> None:
    actions = torch.rand(4, 6, 3, dtype=torch.float64)  # (batch, samples, |A|)
    inputs = node_inputs(NodeSpec((), ()), actions, None, None)
    assert torch.equal(inputs, torch.zeros(4, 6, 1, dtype=torch.float64))


def test_acquisition_maps_the_decision_to_actions_and_eta() -> None:
    net = network((0.25, 0.0, 0.0))
    acquisition = NetworkAcquisition(net, lambda x: x[..., 0], 3, Optimism(2.0))
    a = torch.rand(3, 3, dtype=torch.float64)
    v = torch.tensor([[1.0, 0.5, 0.5], [0.5, 0.5, 0.5], [0.0, 0.5, 0.5]], dtype=torch.float64)
    values = acquisition(torch.cat([a, v], dim=-1).unsqueeze(1))
    expected = composed(a)[:, 0] + 2.0 * (2 * v[:, 0] - 1) * 0.5
    torch.testing.assert_close(values, expected)
    with pytest.raises(IndexError):
        acquisition(a.unsqueeze(1))  # no eta part


@pytest.mark.parametrize("noise_variance", [None, 0.01])
def test_cached_posterior_equals_botorch_posterior(noise_variance) -> None:
    generator = torch.Generator().manual_seed(0)
    x = torch.rand(25, 2, generator=generator, dtype=torch.float64)
    y = torch.sin(5 * x[:, 0]) + x[:, 1] + 0.1 * torch.randn(25, generator=generator, dtype=x.dtype)
    model = node_gp(x, 3.0 + 10.0 * y, noise_variance=noise_variance)
    points = torch.rand(4, 6, 2, generator=generator, dtype=torch.float64)
    posterior = model.posterior(points.reshape(-1, 1, 2))
    mean, std = CachedPosterior.from_model(model)(points)
    assert mean.shape == std.shape == (4, 6)
    torch.testing.assert_close(mean.reshape(-1), posterior.mean.reshape(-1), rtol=1e-8, atol=1e-8)
    expected = posterior.variance.reshape(-1).sqrt()
    torch.testing.assert_close(std.reshape(-1), expected, rtol=1e-6, atol=1e-8)


def test_cached_posterior_is_differentiable_in_the_inputs() -> None:
    x = torch.linspace(0, 1, 12, dtype=torch.float64).unsqueeze(-1)
    model = node_gp(x, torch.sin(6 * x[:, 0]), noise_variance=1e-4)
    point = torch.tensor([[0.3]], dtype=torch.float64, requires_grad=True)
    mean, _ = CachedPosterior.from_model(model)(point)
    (gradient,) = torch.autograd.grad(mean.sum(), point)
    step = 1e-6
    with torch.no_grad():
        predict = CachedPosterior.from_model(model)
        numeric = (predict(point + step)[0] - predict(point - step)[0]) / (2 * step)
    torch.testing.assert_close(gradient.reshape(-1), numeric.reshape(-1), rtol=1e-5, atol=1e-7)


def test_one_node_network_at_eta_one_is_botorchs_upper_confidence_bound() -> None:
    """GP-UCB's acquisition: mu + sqrt(beta) sigma, as BoTorch's UpperConfidenceBound."""
    from botorch.acquisition import UpperConfidenceBound

    generator = torch.Generator().manual_seed(1)
    x = torch.rand(15, 2, generator=generator, dtype=torch.float64)
    model = node_gp(x, torch.cos(4 * x.sum(-1)), noise_variance=1e-6)
    network = GPNetwork(
        (NodeSpec((0, 1), ()),), (CachedPosterior.from_model(model),), (None,), (0,)
    )
    ones = torch.ones(1, 1, dtype=torch.float64)
    optimism = Optimism(5.0**0.5, hallucinate=False, fixed_eta=ones)
    ours = NetworkAcquisition(network, lambda v: v[..., 0], 2, optimism)
    points = torch.rand(6, 1, 2, generator=generator, dtype=torch.float64)
    with torch.no_grad():
        expected = UpperConfidenceBound(model, beta=5.0)(points)
        torch.testing.assert_close(ours(points), expected, rtol=1e-6, atol=1e-8)


def test_matern52_value_and_hand_written_gradient_match_the_closed_form_and_autograd() -> None:
    """The kernel against GPyTorch's Matérn-5/2 (unit lengthscale), and its gradient in the
    first argument against torch's finite-difference gradcheck."""
    from gpytorch.kernels import MaternKernel

    from causalbandits.estimators.gp_network import matern52

    generator = torch.Generator().manual_seed(3)
    x = torch.rand(7, 3, generator=generator, dtype=torch.float64)
    y = torch.rand(5, 3, generator=generator, dtype=torch.float64)
    kernel = MaternKernel(nu=2.5).to(torch.float64)
    kernel.lengthscale = 1.0
    expected = kernel(x, y).to_dense()
    torch.testing.assert_close(matern52(x, y), expected.detach(), rtol=1e-10, atol=1e-12)
    x.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda z: matern52(z, y), (x,), eps=1e-6, atol=1e-7)
    with torch.no_grad():  # the value without the gradient's bookkeeping
        torch.testing.assert_close(matern52(x, y), expected.detach(), rtol=1e-10, atol=1e-12)
