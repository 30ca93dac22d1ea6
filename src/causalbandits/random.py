"""Seeding conventions: one ``SeedSequence`` key layout and one table of stream ids.

Every random draw of an experiment comes from a stream keyed by what it belongs to, never
from a global seed, so that results do not depend on how replicates are split over workers.
The key of a top-level stream is ``SeedSequence(root, spawn_key=(setting, replicate,
stream))`` (:func:`replicate_seeds`); a component that needs a further stream of the same
owner derives it with :func:`derive`. All stream ids are the members of :class:`Stream`, so
no two components can draw from the same stream by accident.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from enum import IntEnum

import numpy as np

RNGLike = int | np.random.Generator | np.random.SeedSequence | None


class Stream(IntEnum):
    """Top-level stream ids: the last element of a spawn key (:func:`replicate_seeds`).

    ``NOISE`` is the environment's noise (the same for every algorithm: common random
    numbers); ``POLICY`` plus :func:`stable_hash` of the algorithm's label is a policy's own
    randomness (:func:`policy_stream`); ``INSTANCE`` draws a replicate's random instance
    (system, graph, means); ``SAMPLE`` an experiment's data sample (e.g. a KDE sample);
    ``OBSERVATIONAL``, ``INTERVENTIONAL`` and ``ESTIMATOR`` the data and the estimator
    randomness of experiments that are not bandits.
    """

    NOISE = 0
    POLICY = 1
    INSTANCE = 2
    SAMPLE = 3
    OBSERVATIONAL = 4
    INTERVENTIONAL = 5
    ESTIMATOR = 6


class SubStream(IntEnum):
    """Ids of streams derived from a replicate's seed (:func:`derive`), appended to its key.

    ``POSTERIOR``: Thompson-sampling draws (from the policy seeds); ``DELAY``: random
    feedback delays (from the noise seeds); ``CHANGES``: the mechanism changes of a
    piecewise-stationary instance (from the instance seeds); ``MONTE_CARLO``: the common
    samples of an environment's expected rewards (from the instance seeds).
    """

    POSTERIOR = 1
    DELAY = 2
    CHANGES = 3
    MONTE_CARLO = 4


#: Kept as names for the two streams every bandit run uses.
NOISE_STREAM = Stream.NOISE
POLICY_STREAM = Stream.POLICY


def as_generator(rng: RNGLike) -> np.random.Generator:
    """Return a ``Generator`` from an int seed, a ``SeedSequence``, a ``Generator`` or ``None``."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)


def stable_hash(label: str) -> int:
    """A 32-bit hash of a label that is the same in every process (unlike ``hash``)."""
    return zlib.crc32(label.encode("utf-8"))


def policy_stream(label: str) -> int:
    """The stream id of the policy labelled ``label``: ``POLICY + stable_hash(label)``."""
    return int(Stream.POLICY) + stable_hash(label)


def replicate_seeds(
    root: int, instance: int, replicates: Sequence[int], stream: int
) -> list[np.random.SeedSequence]:
    """Seed sequences for ``replicates`` of one instance and one stream.

    The key ``(instance, replicate, stream)`` fixes the numbers a replicate sees, whatever
    the chunk of replicates or the worker it runs in.
    """
    return [
        np.random.SeedSequence(root, spawn_key=(int(instance), int(r), int(stream)))
        for r in replicates
    ]


def derive(seeds: Sequence[np.random.SeedSequence], stream: int) -> list[np.random.SeedSequence]:
    """Independent child sequences (one per replicate) for a further stream of the same owner."""
    return [np.random.SeedSequence(s.entropy, spawn_key=(*s.spawn_key, int(stream))) for s in seeds]


def as_seed_sequences(
    seed: int | np.random.SeedSequence | Sequence[np.random.SeedSequence] | None,
    replicates: int | None,
) -> list[np.random.SeedSequence]:
    """Normalise the ``seed`` argument of ``reset``-like methods to one sequence per replicate."""
    if isinstance(seed, Sequence) and not isinstance(seed, str | bytes):
        seeds = list(seed)
        if replicates is not None and replicates != len(seeds):
            raise ValueError(f"got {len(seeds)} seed sequences for {replicates} replicates")
        return seeds
    count = 1 if replicates is None else int(replicates)
    if count < 1:
        raise ValueError(f"replicates must be >= 1, got {count}")
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return root.spawn(count)


class ReplicateStream:
    """Per-replicate random draws of a fixed shape, served in blocks.

    Each replicate owns a ``Generator``; draws are made ``block`` rounds at a time per
    replicate and stacked, so one round costs one slice instead of one call per replicate.
    The numbers replicate ``r`` receives depend only on its own seed.
    """

    def __init__(
        self,
        seeds: Sequence[np.random.SeedSequence],
        shape: tuple[int, ...],
        draw: Callable[[np.random.Generator, tuple[int, ...]], np.ndarray],
        block: int = 256,
    ) -> None:
        self._generators = [np.random.default_rng(s) for s in seeds]
        self._shape = tuple(shape)
        self._draw = draw
        self._block = int(block)
        self._buffer = np.empty((0,))
        self._position = self._block

    @property
    def replicates(self) -> int:
        return len(self._generators)

    def next(self) -> np.ndarray:
        """The draws of the next round, shape ``(replicates, *shape)``."""
        if self._position == self._block:
            self._buffer = np.stack(
                [self._draw(g, (self._block, *self._shape)) for g in self._generators], axis=1
            )
            self._position = 0
        out = self._buffer[self._position]
        self._position += 1
        return out


def uniform_stream(
    seeds: Sequence[np.random.SeedSequence], shape: tuple[int, ...], block: int = 256
) -> ReplicateStream:
    """Uniform[0, 1) draws per replicate and round."""
    return ReplicateStream(seeds, shape, lambda g, size: g.random(size), block)


def normal_stream(
    seeds: Sequence[np.random.SeedSequence], shape: tuple[int, ...], block: int = 256
) -> ReplicateStream:
    """Standard normal draws per replicate and round."""
    return ReplicateStream(seeds, shape, lambda g, size: g.standard_normal(size), block)


def random_argmax(values: np.ndarray, uniforms: np.ndarray, rtol: float = 1e-12) -> np.ndarray:
    """Row-wise argmax of ``values`` (R, A), ties broken uniformly with ``uniforms`` (R, A)."""
    best = values.max(axis=1, keepdims=True)
    finite = np.isfinite(best)
    slack = rtol * np.maximum(np.abs(np.where(finite, best, 0.0)), 1.0)
    tied = values >= np.where(finite, best - slack, best)
    return np.argmax(np.where(tied, uniforms, -1.0), axis=1)
