"""Action sets of soft interventions: each action is the set of intervened nodes (a mask)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from causalbandits.graphs.dag import CausalDAG

#: The most memory the arms' transfer matrices ``(A, N, N)`` of float64 may take: 4 GiB.
MAX_TRANSFER_BYTES = 4 * 2**30


def check_transfer_memory(n_actions: int, n_nodes: int, arms: str = "") -> None:
    """Refuse an action set whose transfer matrices would exceed :data:`MAX_TRANSFER_BYTES`
    (``arms`` says where the arms come from)."""
    size = n_actions * n_nodes * n_nodes * 8
    if size > MAX_TRANSFER_BYTES:
        raise ValueError(
            f"{n_actions:,} arms{arms} would need {n_actions:,} arms x {n_nodes} x {n_nodes} "
            f"nodes x 8 bytes = {size / 2**30:,.1f} GiB of transfer matrices, above the "
            f"{MAX_TRANSFER_BYTES / 2**30:.0f} GiB limit (causalbandits.envs.actions."
            "MAX_TRANSFER_BYTES): make fewer nodes intervenable"
        )


class InvalidActionError(ValueError):
    """Raised when an action index is outside the action set."""


@dataclass(frozen=True)
class ActionSet:
    """Actions as boolean masks ``masks[a, i]`` = node ``i`` is intervened under action ``a``."""

    masks: np.ndarray
    labels: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        masks = np.asarray(self.masks)
        if masks.ndim != 2 or masks.shape[0] < 1:
            raise ValueError(f"masks must have shape (n_actions, n_nodes), got {masks.shape}")
        masks = masks.astype(bool)
        masks.setflags(write=False)
        object.__setattr__(self, "masks", masks)
        if not self.labels:
            labels = ["{" + ",".join(map(str, np.flatnonzero(m))) + "}" for m in masks]
            object.__setattr__(self, "labels", labels)

    @classmethod
    def subsets(
        cls, n_nodes: int, nodes: Sequence[int], names: Sequence[str] | None = None
    ) -> ActionSet:
        """All ``2^len(nodes)`` subsets of ``nodes``; action ``k`` intervenes ``nodes[b]`` for
        every set bit ``b`` of ``k``. With node ``names`` the labels show names, not indices.
        Refused when their transfer matrices would exceed :data:`MAX_TRANSFER_BYTES`."""
        nodes = list(nodes)
        if len(set(nodes)) != len(nodes) or any(not 0 <= v < n_nodes for v in nodes):
            raise ValueError(f"intervenable nodes must be distinct indices in 0..{n_nodes - 1}")
        arms = f" (2^{len(nodes)}: every subset of {len(nodes)} intervenable nodes)"
        check_transfer_memory(2 ** len(nodes), n_nodes, arms)
        codes = np.arange(2 ** len(nodes))[:, None]
        bits = ((codes >> np.arange(len(nodes))) & 1).astype(bool)
        masks = np.zeros((bits.shape[0], n_nodes), dtype=bool)
        masks[:, nodes] = bits
        if names is None:
            return cls(masks)
        if len(names) != n_nodes:
            raise ValueError(f"got {len(names)} names for {n_nodes} nodes")
        labels = ["{" + ",".join(names[i] for i in np.flatnonzero(m)) + "}" for m in masks]
        return cls(masks, labels)

    @classmethod
    def non_root(
        cls, dag: CausalDAG, include_reward: bool = True, reward_node: int | None = None
    ) -> ActionSet:
        """Subsets of the non-root nodes: Robust-LCB's default, 16 arms on its graph
        (decisions: robust-lcb A5).

        Interventions on roots are no-ops for a linear SEM (their columns are empty).
        """
        reward = dag.n_nodes - 1 if reward_node is None else reward_node
        nodes = [int(v) for v in np.setdiff1d(np.arange(dag.n_nodes), dag.roots)]
        if not include_reward:
            nodes = [v for v in nodes if v != reward]
        return cls.subsets(dag.n_nodes, nodes)

    @classmethod
    def all_subsets(cls, n_nodes: int) -> ActionSet:
        """All ``2^N`` subsets of the nodes (the paper's literal ``A = 2^V``)."""
        return cls.subsets(n_nodes, list(range(n_nodes)))

    @property
    def n_actions(self) -> int:
        return self.masks.shape[0]

    @property
    def n_nodes(self) -> int:
        return self.masks.shape[1]

    def index_of(self, intervened: Sequence[int]) -> int:
        """Index of the action that intervenes exactly the nodes ``intervened``."""
        target = np.zeros(self.n_nodes, dtype=bool)
        target[list(intervened)] = True
        hits = np.flatnonzero((self.masks == target).all(axis=1))
        if hits.size == 0:
            raise InvalidActionError(f"no action intervenes exactly {sorted(intervened)}")
        return int(hits[0])

    def check(self, actions: np.ndarray) -> np.ndarray:
        """Validate an array of action indices and return it as ``intp``."""
        arr = np.asarray(actions)
        if not np.issubdtype(arr.dtype, np.integer):
            raise InvalidActionError(f"actions must be integer indices, got dtype {arr.dtype}")
        if arr.size and (arr.min() < 0 or arr.max() >= self.n_actions):
            bad = arr[(arr < 0) | (arr >= self.n_actions)][0]
            raise InvalidActionError(
                f"action {bad} is outside the action set 0..{self.n_actions - 1}"
            )
        return arr.astype(np.intp, copy=False)
