"""What a policy declares and a problem family offers, and the match between them.

A policy class declares, as class attributes:

- ``ACTS_ON``: the action kinds it can play, words of :data:`ACTION_KINDS`;
- ``NEEDS`` (optional, default none): what it must be told, words of :data:`KNOWLEDGE`.

A family has one action kind and offers some knowledge. A policy runs on a family when the
family's kind is in ``ACTS_ON`` and ``NEEDS`` is within what the family offers; otherwise
:func:`incompatibility` says why. A class that declares nothing is tried on every family:
the bench's probe run (:mod:`causalbandits.bench.suite`) reports the error of a family it
cannot play.
"""

from __future__ import annotations

from collections.abc import Collection

#: The action kinds (one per family) and what a policy of each is built from.
ACTION_KINDS = {
    "interventions": "soft interventions on a linear SEM: an arm is a set of intervened "
    "nodes (``problem.actions``), the feedback every node's value",
    "super-arms": "a combinatorial semi-bandit: a super arm is a set of base arms "
    "(``problem.n_arms``, ``problem.super_arm_size``), the feedback every base arm's outcome",
    "delayed-super-arms": "super arms whose feedback arrives a fixed number of rounds late",
    "separable-super-arms": "super arms on a separable nonlinear SEM (feedback: the arms' "
    "inputs ``z`` and outcomes ``y``)",
    "continuous": "a point of ``[0, 1]^|A|`` on a function network (``problem.n_actions``), "
    "the feedback every node's value",
}
#: What a family may tell a policy beyond its action kind.
KNOWLEDGE = {
    "graph": "the causal graph (``problem.dag``)",
    "truth": "the true model (oracles only; no family offers it)",
}


def declared(cls: type, name: str) -> frozenset[str] | None:
    """The declaration ``name`` (``ACTS_ON`` or ``NEEDS``) of ``cls``; ``None`` if absent.
    Raises ``ValueError`` for words outside the vocabulary."""
    value = getattr(cls, name, None)
    if value is None:
        return None
    words = frozenset(value)
    known = ACTION_KINDS if name == "ACTS_ON" else KNOWLEDGE
    unknown = sorted(words - set(known))
    if unknown:
        raise ValueError(
            f"{cls.__name__}.{name} has unknown words {unknown}; known: {', '.join(known)}"
        )
    return words


def incompatibility(cls: type, kind: str, offers: Collection[str]) -> str | None:
    """Why ``cls`` cannot run on a family of action kind ``kind`` offering ``offers``;
    ``None`` when it can (or declares nothing: the probe run decides)."""
    acts_on = declared(cls, "ACTS_ON")
    if acts_on is not None and kind not in acts_on:
        return f"acts on {', '.join(sorted(acts_on))}; the family's actions are {kind}"
    missing = sorted((declared(cls, "NEEDS") or frozenset()) - set(offers))
    if missing:
        return f"needs {', '.join(missing)}, which the family does not tell"
    return None
