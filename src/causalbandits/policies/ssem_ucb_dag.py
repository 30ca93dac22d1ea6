"""SSEM-UCB (Bauschmann & Maghsudi, arXiv 2606.14650, Alg. 1): per-arm graph fits assembled
into one DAG, for ``R`` replicates.

Alg. 1 differs from SSEM-UCB-JO (Alg. 2, :class:`~causalbandits.policies.ssem_ucb.SSEMUCBJO`)
in two places:

- lines 6-9: for every base arm ``o`` a full ``N``-row fit of eqs. 3-4 uses ONLY the rounds in
  which ``o`` was played (one set of dictionary-lasso statistics per arm, fed when ``x[o] =
  1``), and the columns of the upper-triangular ``F_hat`` are assembled from these fits by
  eq. 5 (:func:`~causalbandits.estimators.column_assembly.assemble_columns`, which projects
  each assembled entry onto the fit dictionary on a grid over the observed range of ``y[o]``);
- line 12: the selection is eq. 9, ``I^max + Delta^I E``, without Alg. 2's factor
  ``sqrt(sqrt(t-1)/ln(t-1))`` (:attr:`joint` is ``False``).

Everything else (initial blocks, moments about centres frozen between refits, the refit rule,
the internal and external UCBs) is inherited. Decisions where the paper is silent:

- Alg. 1 needs the paper's DAG order (eq. 5 "Should the indexing ... not be inherent ...,
  edge recognition thresholds should be increased until a DAG is formed"): we require a known
  order (``upper_triangular``) and refuse a general graph rather than search for one.
- The refit test (the newest residual against the mean training residual) is evaluated with
  the assembled ``F_hat`` on all rounds: the assembled weights are stored in the joint
  statistics (:attr:`graph`), which otherwise only serve that test.
- The assembled entries get the fit's ``edge_threshold`` too (edge recognition).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from causalbandits.estimators.column_assembly import assemble_columns
from causalbandits.estimators.dictionary_lasso import DictionaryLasso, features
from causalbandits.policies.ssem_ucb import SSEMUCBJO, SSEMOptions
from causalbandits.validation import count


class PerArmLasso(DictionaryLasso):
    """:class:`DictionaryLasso` whose rounds can be added to some of its replicates only
    (Alg. 1, line 7: the fit of arm ``o`` sees the rounds that played ``o``)."""

    def add_where(self, z: np.ndarray, y: np.ndarray, mask: np.ndarray) -> None:
        """Add one round ``(z, y)`` ``(R, N)`` to the replicates where ``mask`` ``(R,)`` holds."""
        rows = np.flatnonzero(mask)
        if rows.size == 0:
            return
        phi = features(y[rows], self.dictionary)
        target = y[rows] - z[rows]
        self.gram[rows] += phi[:, :, None] * phi[:, None, :]
        self.cross[rows] += phi[:, :, None] * target[:, None, :]
        self.counts[rows] += 1


@dataclass(frozen=True, kw_only=True)
class AssemblyOptions(SSEMOptions):
    """The knobs of SSEM-UCB (Alg. 1): those of :class:`~causalbandits.policies.ssem_ucb.
    SSEMOptions`, plus the projection of eq. 5."""

    #: Points of the least-squares projection of each assembled entry (eq. 5), at least the
    #: dictionary's size.
    grid_size: int = 64

    def __post_init__(self) -> None:
        super().__post_init__()
        size = count("grid_size", self.grid_size, minimum=self.dictionary.size)
        object.__setattr__(self, "grid_size", size)


class SSEMUCB(SSEMUCBJO):
    """SSEM-UCB (Alg. 1) on ``R`` replicates, with :class:`AssemblyOptions`.

    The graph must be a DAG in the paper's order: ``upper_triangular`` (or the problem's
    ``upper_triangular``) must be true.
    """

    joint = False
    Options = AssemblyOptions

    def __init__(
        self, problem: object, options: AssemblyOptions | None = None, **changes: Any
    ) -> None:
        super().__init__(problem, options, **changes)
        if not self.options.upper_triangular:
            raise ValueError(
                "SSEM-UCB (Alg. 1) assembles an upper-triangular F_hat by eq. 5 and needs the "
                "paper's DAG order: pass upper_triangular=True (or use SSEM-UCB-JO, Alg. 2)"
            )

    def reset(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        super().reset(seeds)
        replicates = len(seeds)
        #: Statistics of ``F_hat^(o)``: replicate ``r``, arm ``o`` at index ``r N + o``.
        self.per_arm = PerArmLasso(
            replicates * self.n_arms,
            self.n_arms,
            self.options.dictionary,
            True,
            self.options.graph_fit,
        )
        #: The observed range of every node's ``y`` (0 included: ``F`` is zero-true).
        self.y_low = np.zeros((replicates, self.n_arms))
        self.y_high = np.zeros((replicates, self.n_arms))

    def fit_graph(self, which: np.ndarray) -> np.ndarray:
        """``F_hat`` of the replicates ``which`` by Alg. 1, lines 6-9: the per-arm fits, then
        eq. 5, weights ``(count, N, N, K)``."""
        n, k = self.n_arms, self.options.dictionary.size
        flat = np.repeat(which, n)
        per_arm = self.per_arm.fit(flat)[flat].reshape(-1, n, n, n, k)
        rows = np.flatnonzero(which)
        assembled = np.stack(
            [
                assemble_columns(
                    per_arm[c],
                    self.options.dictionary,
                    (self.y_low[r], self.y_high[r]),
                    self.options.grid_size,
                    self.options.edge_threshold,
                )
                for c, r in enumerate(rows)
            ]
        )
        self.graph.coefficients[which] = assembled.reshape(len(rows), n, n * k)
        return assembled

    def update(self, actions: np.ndarray, feedback: object) -> None:
        super().update(actions, feedback)
        played = np.asarray(actions, dtype=bool)
        z, y = np.asarray(feedback.z, dtype=float), np.asarray(feedback.y, dtype=float)
        n = self.n_arms
        self.per_arm.add_where(np.repeat(z, n, axis=0), np.repeat(y, n, axis=0), played.ravel())
        self.y_low = np.minimum(self.y_low, y)
        self.y_high = np.maximum(self.y_high, y)
