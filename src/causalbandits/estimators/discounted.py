"""Discounted, delay-aware base-arm statistics and UCB indices of NDC-SEM (eq. 10-11).

After round ``t`` (rounds are numbered from 1, as in the paper) the statistics equal

    M_t[i]    = sum_{tau arrived by t} gamma^(t - tau) 1{x_tau[i] = 1}             (eq. 10)
    S_t[i]    = sum_{tau arrived by t} gamma^(t - tau) b_tau[i] 1{x_tau[i] = 1}
    beta_t[i] = S_t[i] / M_t[i]                                                    (eq. 10)
    m_t       = sum_{tau=1}^{t} gamma^(t - tau)                      (not delayed)
    C_t[i]    = 2 B sqrt(xi (s + 1) log m_t / M_t[i])                  (D-UCB padding)
    E_t[i]    = beta_t[i] + C_t[i]                                                 (eq. 11)

With a constant delay ``D`` "arrived by t" is ``tau <= t - D``, the paper's sums; with random
delays it is the feedback that has actually arrived (Corollary 1). The weight is
``gamma^(t - tau)``, not ``gamma^(t - D - tau)``, exactly as written (decisions: ndc-sem 5).
Eq. 11's ``M[j]`` is read as ``M[i]`` (decisions: ndc-sem 4); ``B = 1`` in the paper. Edge
cases (decisions: ndc-sem 6): ``M = 0`` gives ``E = +inf``, ``0/0`` in ``beta`` gives 0,
``log m_1 = 0``.
With ``gamma = 1`` and ``xi = 1/4`` the index is SEM-UCB's ``beta + sqrt((s+1) ln t / m_i)``.

Updates are incremental and O(N) per round (eqs. 10-11): :meth:`advance` multiplies by
``gamma`` at the end of each round, and :meth:`receive` adds an arrival from round ``tau``
with weight ``gamma^(t - tau)``, so late and out-of-order feedback is exact.

Option, not in the paper (``count_pending=True``): the padding divides by ``M + P`` instead
of ``M``, where ``P_t[i] = sum_{tau played, not arrived by t} gamma^(t - tau) 1{x_tau[i] = 1}``
counts the plays whose feedback is still in flight. As written, the bonus of an arm keeps
growing for the ``D`` rounds after it is played (its ``M`` decays until the first feedback
arrives), so a delayed NDC-SEM holds an explored arm for about ``D`` rounds; with ``P`` the
bonus falls as soon as the arm is played. ``beta`` is unchanged and an arm with ``M = 0``
still has ``E = +inf``.
"""

from __future__ import annotations

import numpy as np


def per_replicate(value: float | np.ndarray, replicates: int, name: str) -> np.ndarray:
    """``value`` as a float array of shape ``()`` (shared) or ``(R,)`` (one per replicate)."""
    out = np.asarray(value, dtype=float)
    if out.ndim > 1 or (out.ndim == 1 and out.shape != (replicates,)):
        raise ValueError(
            f"{name} must be a scalar or one value per replicate ({replicates},), got shape "
            f"{out.shape}"
        )
    return out


class DiscountedArmStatistics:
    """``M``, ``S`` ``(R, N)`` and ``m`` (``()`` or ``(R,)``) of eq. 10-11 for ``R`` replicates.

    Parameters
    ----------
    replicates, n_arms: ``R`` and ``N``.
    gamma: discount factor in ``(0, 1]``: a scalar, or one value per replicate ``(R,)``.
    xi: exploration constant ``xi >= 0`` of eq. 11: a scalar or ``(R,)``.
    super_arm_size: the sparsity ``s``.
    bound: the reward bound ``B`` of the D-UCB padding (1 in the paper).
    count_pending: pad with ``M + P`` (plays in flight counted; module docstring); then
        :meth:`advance` needs the round's super arms.

    Per-replicate ``gamma`` and ``xi`` run several constants side by side (e.g. a tuning grid,
    App. VII-D5); every replicate computes exactly what a scalar instance with its values
    computes. ``m`` has the shape of ``gamma``.
    """

    def __init__(
        self,
        replicates: int,
        n_arms: int,
        gamma: float | np.ndarray,
        xi: float | np.ndarray,
        super_arm_size: int,
        bound: float = 1.0,
        count_pending: bool = False,
    ) -> None:
        self.gamma = per_replicate(gamma, replicates, "gamma")
        self.xi = per_replicate(xi, replicates, "xi")
        if not np.all((self.gamma > 0) & (self.gamma <= 1)):
            raise ValueError(f"gamma must lie in (0, 1], got {self.gamma.tolist()}")
        if not (np.all(self.xi >= 0) and bound >= 0):
            raise ValueError(f"xi and bound must be >= 0, got {self.xi.tolist()} and {bound}")
        self.super_arm_size = int(super_arm_size)
        self.bound = float(bound)
        self.t = 0
        self.counts = np.zeros((replicates, n_arms))  # M
        self.sums = np.zeros((replicates, n_arms))  # S
        self.horizon_weight = np.zeros(self.gamma.shape)  # m
        self.count_pending = bool(count_pending)
        self.pending = np.zeros((replicates, n_arms))  # P (only with count_pending)

    @staticmethod
    def _rows(value: np.ndarray) -> np.ndarray:
        """A per-replicate ``(R,)`` value as a column ``(R, 1)``; a scalar as it is."""
        return value[:, None] if value.ndim else value

    def advance(self, played: np.ndarray | None = None) -> None:
        """End of round ``t``: ``m <- gamma m + 1``, ``M <- gamma M``, ``S <- gamma S``; with
        ``count_pending`` also ``P <- gamma P + x_t`` for the round's super arms ``played``
        ``(R, N)``."""
        if self.count_pending and played is None:
            raise ValueError("count_pending needs the super arms played in the round")
        self.t += 1
        self.horizon_weight = self.gamma * self.horizon_weight + 1.0
        self.counts *= self._rows(self.gamma)
        self.sums *= self._rows(self.gamma)
        if self.count_pending:
            self.pending *= self._rows(self.gamma)
            self.pending += np.asarray(played, dtype=bool)

    def receive(self, tau: np.ndarray | int, played: np.ndarray, rewards: np.ndarray) -> None:
        """Add the feedback of rounds ``tau`` arriving now (after :meth:`advance` of round t).

        ``tau`` is a scalar, ``(R,)`` or ``(R, K)`` (several arrivals per replicate); entries
        ``<= 0`` mark empty slots. ``played`` (the super arms ``x_tau``, booleans) and
        ``rewards`` (``b_tau``, read only where played) have shape ``(R, N)`` or ``(R, K, N)``.
        """
        played = np.asarray(played, dtype=bool)
        rewards = np.asarray(rewards, dtype=float)
        if played.ndim == 2:
            played, rewards = played[:, None], rewards[:, None]
            tau = np.asarray(tau)[..., None]
        tau = np.broadcast_to(np.asarray(tau, dtype=np.int64), played.shape[:2])
        if np.any(tau > self.t):
            raise ValueError(f"feedback from round {tau.max()} cannot arrive at round {self.t}")
        age = np.where(tau > 0, self.t - tau, 0)
        discount = self._rows(self.gamma) ** age.astype(float)
        weight = np.where(tau > 0, discount, 0.0)[:, :, None] * played
        self.counts += weight.sum(axis=1)
        self.sums += (weight * np.where(played, rewards, 0.0)).sum(axis=1)
        if self.count_pending:  # arrived: out of flight (max: rounding of the subtraction)
            self.pending = np.maximum(self.pending - weight.sum(axis=1), 0.0)

    def means(self) -> np.ndarray:
        """``beta_t = S / M`` ``(R, N)``, 0 where ``M = 0``."""
        positive = self.counts > 0
        return np.where(positive, self.sums / np.where(positive, self.counts, 1.0), 0.0)

    def bonus(self) -> np.ndarray:
        """Padding ``C_t = 2 B sqrt(xi (s+1) log m_t / M)`` ``(R, N)``, ``+inf`` where ``M = 0``
        (``M + P`` in the denominator with ``count_pending``)."""
        log_m = np.log(np.maximum(self.horizon_weight, 1.0))
        positive = self.counts > 0
        scale = self._rows(2.0 * self.bound * np.sqrt(self.xi * (self.super_arm_size + 1) * log_m))
        counts = self.counts + self.pending if self.count_pending else self.counts
        return np.where(positive, scale / np.sqrt(np.where(positive, counts, 1.0)), np.inf)

    def indices(self) -> np.ndarray:
        """UCB indices ``E_t = beta_t + C_t`` of eq. 11, shape ``(R, N)``."""
        return self.means() + self.bonus()
