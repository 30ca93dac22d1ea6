"""The super arms of a combinatorial semi-bandit: every set of at most ``s`` of ``N`` base arms.

``|X| = sum_{k=0}^{s} C(N, k)`` (SSEM-UCB paper, Sec. II): 848 for ``N = 10, s = 6`` and 9,949
for ``N = 15, s = 6``. Policies that score every super arm (SSEM-UCB's oracle, IGP-UCB) and
environments that tabulate ``mu(x)`` for every super arm share this one enumeration, so an
index into it means the same super arm everywhere.
"""

from __future__ import annotations

import itertools
from math import comb

import numpy as np

from causalbandits.validation import count


def count_super_arms(n_arms: int, super_arm_size: int, exact: bool = False) -> int:
    """``|X| = sum_{k<=s} C(N, k)`` (``exact``: only the ``C(N, s)`` of size exactly ``s``)."""
    check_sizes(n_arms, super_arm_size)
    if exact:
        return comb(n_arms, super_arm_size)
    return sum(comb(n_arms, k) for k in range(super_arm_size + 1))


def check_sizes(n_arms: int, super_arm_size: int) -> None:
    """Raise unless ``N >= 1`` and ``1 <= s <= N`` are integers."""
    n = count("the number of base arms N", n_arms)
    size = count("the super-arm size s", super_arm_size)
    if size > n:
        raise ValueError(
            f"the super-arm size s must be an integer in 1..N = {n_arms}, got {super_arm_size}"
        )


def all_super_arms(n_arms: int, super_arm_size: int, exact: bool = False) -> np.ndarray:
    """Boolean masks ``(|X|, N)`` of every super arm, by size (the empty set first), then in
    lexicographic order of the member indices; ``exact``: only those of size ``s``."""
    check_sizes(n_arms, super_arm_size)
    sizes = [super_arm_size] if exact else range(super_arm_size + 1)
    masks = np.zeros((count_super_arms(n_arms, super_arm_size, exact), n_arms), dtype=bool)
    row = 0
    for k in sizes:
        for members in itertools.combinations(range(n_arms), k):
            masks[row, list(members)] = True
            row += 1
    masks.setflags(write=False)
    return masks


def members(masks: np.ndarray) -> np.ndarray:
    """The member indices of super arms of one size ``k``: ``(M, k)`` from masks ``(M, N)``."""
    masks = np.asarray(masks, dtype=bool)
    sizes = masks.sum(axis=1)
    if masks.shape[0] and np.any(sizes != sizes[0]):
        raise ValueError("members() needs super arms of one size")
    k = int(sizes[0]) if masks.shape[0] else 0
    return np.nonzero(masks)[1].reshape(masks.shape[0], k)
