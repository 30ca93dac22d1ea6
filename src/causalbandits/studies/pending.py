"""Pending evaluations of a causal-BO study as believed observations (the Kriging believer,
Ginsbourger, Le Riche & Carraro 2010, on a function network).

While an evaluation is out, a proposal is made as if its node values were the posterior
means of a GP network fitted to the told data (each node's GP on ``w_i = [a[active_i],
minmax(parents)]``, learned noise; means propagated in topological order). Every policy then
refits on the told and the believed rows: near a pending action its uncertainty and its
optimism shrink, so workers asking at once get distinct actions.
"""

from __future__ import annotations

import numpy as np
import torch

from causalbandits.estimators.gp import DTYPE, node_gp
from causalbandits.estimators.gp_network import (
    CachedPosterior,
    GPNetwork,
    NodeSpec,
    training_inputs,
)


def believed_values(
    specs: tuple[NodeSpec, ...],
    order: tuple[int, ...],
    actions: np.ndarray,
    values: np.ndarray,
    pending: np.ndarray,
) -> np.ndarray:
    """Node values ``(p, nodes)`` believed at the ``pending`` actions ``(p, |A|)``, from the
    told ``actions (n, |A|)`` and node ``values (n, nodes)``."""
    if len(pending) == 0:
        return np.empty((0, values.shape[1]))
    a = torch.as_tensor(actions, dtype=DTYPE)
    x = torch.as_tensor(values, dtype=DTYPE)
    inputs, scalers = training_inputs(specs, a, x)
    marginals = tuple(
        CachedPosterior.from_model(node_gp(inputs[i], x[:, i])) for i in range(len(specs))
    )
    network = GPNetwork(specs, marginals, tuple(scalers), order)
    with torch.no_grad():
        means = network.propagate(torch.as_tensor(pending, dtype=DTYPE))
    return means[:, 0, :].numpy()
