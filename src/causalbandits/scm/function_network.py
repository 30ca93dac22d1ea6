"""Function networks: SCMs whose nodes are driven by continuous actions (EXCBO Sec. 2.2, 3.2).

Node ``i`` computes ``x_i = f_i(z_i, a_i, u_i)`` (paper eqs. 4-5 and 7): ``z_i`` are the
values of its parents, ``a_i`` the coordinates of the action vector ``a in [0, 1]^{|A|}``
listed in ``active_inputs[i]`` (MCBO's "active input indices": an action may feed several
nodes, a node zero or several) and ``u_i`` its exogenous noise. Everything is vectorised over
leading batch axes, so many actions times many noise draws are one numpy program.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from causalbandits.graphs.dag import CausalDAG

Mechanism = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
"""``f_i(parents (..., |pa_i|), actions (..., |active_i|), noise (...)) -> values (...)``."""

#: Actions may leave ``[0, 1]`` by this much (rounding of an optimiser) and are clipped back.
ACTION_TOLERANCE = 1e-12


class FunctionNetwork:
    """A DAG of vectorised mechanisms with continuous soft interventions.

    Parameters
    ----------
    dag:
        The causal graph (``adjacency[i, j]``: edge ``i -> j``).
    mechanisms:
        One :data:`Mechanism` per node. Its parent values come in the order of
        ``dag.parents(i)`` (sorted) and its action values in the order of
        ``active_inputs[i]``; it must accept any leading batch shape.
    active_inputs:
        Per node, the indices of the action coordinates feeding it.
    n_actions:
        ``|A|``, the length of the action vector.
    """

    def __init__(
        self,
        dag: CausalDAG,
        mechanisms: Sequence[Mechanism],
        active_inputs: Sequence[Sequence[int]],
        n_actions: int,
    ) -> None:
        n = dag.n_nodes
        if int(n_actions) != n_actions or n_actions < 1:
            raise ValueError(f"n_actions must be a positive integer, got {n_actions}")
        if len(mechanisms) != n or len(active_inputs) != n:
            raise ValueError(
                f"need one mechanism and one active-input list per node: {n} nodes, got "
                f"{len(mechanisms)} mechanisms and {len(active_inputs)} active-input lists"
            )
        inputs = tuple(tuple(int(k) for k in node) for node in active_inputs)
        for node, indices in enumerate(inputs):
            if any(not 0 <= k < n_actions for k in indices) or len(set(indices)) != len(indices):
                raise ValueError(
                    f"active inputs of node {node} must be distinct action indices in "
                    f"0..{int(n_actions) - 1}, got {list(indices)}"
                )
        self.dag = dag
        self.mechanisms = tuple(mechanisms)
        self.active_inputs = inputs
        self.n_actions = int(n_actions)
        self.parents = tuple(tuple(int(p) for p in dag.parents(i)) for i in range(n))

    @property
    def n_nodes(self) -> int:
        return self.dag.n_nodes

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.dag.names)

    def check_actions(self, actions: np.ndarray) -> np.ndarray:
        """``actions (..., |A|)`` as float64 in ``[0, 1]`` (values within
        :data:`ACTION_TOLERANCE` outside are clipped); ``ValueError`` otherwise."""
        a = np.asarray(actions, dtype=float)
        if a.ndim < 1 or a.shape[-1] != self.n_actions:
            raise ValueError(f"actions must have shape (..., {self.n_actions}), got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError("actions must be finite")
        if np.any((a < -ACTION_TOLERANCE) | (a > 1 + ACTION_TOLERANCE)):
            raise ValueError(
                f"actions must lie in [0, 1], got values in [{a.min():.6g}, {a.max():.6g}]"
            )
        return np.clip(a, 0.0, 1.0)

    def evaluate(
        self, actions: np.ndarray, noise: np.ndarray, propagate_noise: bool = True
    ) -> np.ndarray:
        """Node values ``(..., n_nodes)`` in topological order (paper eq. 7).

        ``actions (..., |A|)`` and ``noise (..., n_nodes)`` broadcast over their leading axes
        (e.g. actions ``(B, 1, |A|)`` and noise ``(S, n_nodes)`` give ``(B, S, n_nodes)``).
        With ``propagate_noise=False`` every mechanism sees the noiseless values of its
        parents (the pass with ``u = 0``) while each returned value keeps its own noise: the
        MCBO package's convention for Dropwave (decisions: excbo 2) and the observation
        noise of the epidemic model (Sec. 7.3).
        """
        a = self.check_actions(actions)
        u = np.asarray(noise, dtype=float)
        if u.ndim < 1 or u.shape[-1] != self.n_nodes:
            raise ValueError(f"noise must have shape (..., {self.n_nodes}), got {u.shape}")
        if not np.all(np.isfinite(u)):
            raise ValueError("noise must be finite")
        batch = np.broadcast_shapes(a.shape[:-1], u.shape[:-1])
        if propagate_noise:
            return self._forward(a, u, batch)
        clean = self._forward(a, np.zeros(self.n_nodes), a.shape[:-1])
        values = np.empty((*batch, self.n_nodes))
        for node in self.dag.topological_order:
            values[..., node] = self._node(node, clean, a, u, batch)
        return values

    def _forward(self, a: np.ndarray, u: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
        """One pass in topological order, each node reading the values computed here."""
        values = np.empty((*batch, self.n_nodes))
        for node in self.dag.topological_order:
            values[..., node] = self._node(node, values, a, u, batch)
        return values

    def _node(
        self,
        node: int,
        values: np.ndarray,
        a: np.ndarray,
        u: np.ndarray,
        batch: tuple[int, ...],
    ) -> np.ndarray:
        """``f_node`` on the parents' entries of ``values``, its actions and its noise."""
        parents = np.broadcast_to(
            values[..., list(self.parents[node])], (*batch, len(self.parents[node]))
        )
        inputs = np.broadcast_to(
            a[..., list(self.active_inputs[node])], (*batch, len(self.active_inputs[node]))
        )
        return self.mechanisms[node](parents, inputs, np.broadcast_to(u[..., node], batch))
