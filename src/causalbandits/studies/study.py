"""A persistent ask/tell study: a causal optimisation that lives in a database for days.

>>> study = Study.create("calibration", spec, storage="sqlite:///study.db")  # doctest: +SKIP
>>> number, action = study.ask()  # doctest: +SKIP
>>> study.tell(number, node_values)  # doctest: +SKIP

Any process on any machine that reaches the database can ask and tell; the policy's state is
rebuilt from the stored evaluations and the seed (:mod:`.bo_engine`, :mod:`.bandit_engine`),
so a resumed study makes the same next proposal as an uninterrupted one. Every change is one
transaction under the study's lock (:mod:`.storage`): a process killed between ask and tell
leaves a pending evaluation to be told later (or to expire after ``expire_after`` seconds,
after which a late tell is still recorded); a process killed during a tell leaves nothing.

An ask is proposed outside the lock and stored only if no other ask (for a bandit: nothing
at all) was stored meanwhile; otherwise it is proposed again on the new state, so workers
asking at once get distinct, pending-aware actions.
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
import sqlalchemy as sa

from causalbandits.studies.observations import ObservationCheck
from causalbandits.studies.spec import StudyError, StudySpec
from causalbandits.studies.storage import (
    COMPLETE,
    EVALUATIONS,
    EXPIRED,
    FAILED,
    PENDING,
    Evaluation,
    Storage,
    bump,
)

#: The SQLite file a study uses when no storage is given.
DEFAULT_STORAGE = "sqlite:///study.db"

#: How often an ask is proposed again because other workers changed the study meanwhile.
MAX_ATTEMPTS = 100


def open_storage(storage: str | Storage) -> Storage:
    return storage if isinstance(storage, Storage) else Storage(storage)


def make_engine(spec: StudySpec, problem: Any) -> Any:
    """The engine of the spec's policy: a causal-BO optimiser's or a round-loop policy's."""
    policy = spec.make_policy(problem)
    if hasattr(policy, "suggest") and hasattr(policy, "propose"):
        from causalbandits.studies.bo_engine import BOEngine

        return BOEngine(policy, spec.seed)
    from causalbandits.studies.bandit_engine import BanditEngine

    return BanditEngine(policy, spec.seed)


def events_after(rows: list[Evaluation], version: int) -> list[tuple[int, str, Evaluation]]:
    """The asks and finishes of ``rows`` that happened after ``version``."""
    events = [(row.asked_version, "ask", row) for row in rows if row.asked_version > version]
    events += [
        (row.finished_version, "finish", row)
        for row in rows
        if row.finished_version is not None and row.finished_version > version
    ]
    return events


class Study:
    """One stored study; build it with :meth:`create` or :meth:`load`."""

    def __init__(self, storage: Storage, study_id: int, name: str, spec: StudySpec) -> None:
        self.storage, self.id, self.name, self.spec = storage, study_id, name, spec
        self.problem, environment = spec.make_problem()
        self.check = ObservationCheck(self.problem, environment)
        self._engine: Any = None
        self.version = 0
        self.rows: dict[int, Evaluation] = {}
        self.sync()

    @property
    def engine(self) -> Any:
        """The policy's state, built on first use (an ask) from every stored evaluation:
        telling, failing and reading a study need no policy."""
        if self._engine is None:
            engine = make_engine(self.spec, self.problem)
            engine.apply(events_after(list(self.rows.values()), 0))
            self._engine = engine
        return self._engine

    # ------------------------------------------------------------------ opening

    @classmethod
    def create(
        cls,
        name: str,
        spec: StudySpec,
        storage: str | Storage = DEFAULT_STORAGE,
        load_if_exists: bool = False,
    ) -> Study:
        """A new study ``name``; with ``load_if_exists`` an existing one of the same spec is
        opened (a different spec is refused)."""
        if not isinstance(name, str) or not name.strip():
            raise StudyError(f"a study needs a non-empty name, got {name!r}")
        store = open_storage(storage)
        row = store.find(name)
        if row is not None and not load_if_exists:
            raise StudyError(f"study {name!r} already exists in {store.url}")
        if row is None:
            spec.make_policy(spec.make_problem()[0])  # refuse a spec that does not build
            try:
                store.insert_study(name, spec.to_dict(), spec.fingerprint())
            except sa.exc.IntegrityError:
                if not load_if_exists:
                    raise StudyError(f"study {name!r} already exists in {store.url}") from None
        return cls.load(name, store, spec)

    @classmethod
    def load(
        cls, name: str, storage: str | Storage = DEFAULT_STORAGE, spec: StudySpec | None = None
    ) -> Study:
        """The stored study ``name``; ``spec``, when given, must be the stored one."""
        store = open_storage(storage)
        row = store.find(name)
        if row is None:
            known = ", ".join(store.names()) or "none"
            raise StudyError(f"no study {name!r} in {store.url} (studies: {known})")
        stored = StudySpec.from_dict(json.loads(row.spec))
        if spec is not None and spec.fingerprint() != row.fingerprint:
            differs = sorted(k for k, v in spec.to_dict().items() if stored.to_dict()[k] != v)
            raise StudyError(
                f"study {name!r} was created with another problem or policy "
                f"(differs in: {', '.join(differs)}); use a new name"
            )
        return cls(store, row.id, name, stored)

    # ------------------------------------------------------------------ state

    def sync(self) -> None:
        """Bring the policy up to the stored state (only what changed since the last sync)."""
        version, rows = self.storage.changes(self.id, self.version)
        if version == self.version:
            return
        if self._engine is not None:
            self._engine.apply(events_after(rows, self.version))
        self.rows.update((row.number, row) for row in rows)
        self.version = version

    def evaluation(self, number: int) -> Evaluation:
        self.sync()
        if number not in self.rows:
            raise StudyError(f"study {self.name!r} has no evaluation {number!r}")
        return self.rows[number]

    # ------------------------------------------------------------------ ask / tell

    def ask(self) -> tuple[int, Any]:
        """A new evaluation: its number (the id to tell) and the action to play."""
        self._expire()
        for _ in range(MAX_ATTEMPTS):
            self.sync()
            number = len(self.rows)
            action, memory = self.engine.propose(number)
            stored = self._store_ask(number, action, memory)
            if stored is not None:
                return number, action
        raise StudyError(f"study {self.name!r} is too busy: {MAX_ATTEMPTS} asks were overtaken")

    def _store_ask(self, number: int, action: Any, memory: Any) -> Evaluation | None:
        with self.storage.locked(self.id) as (connection, version):
            if self.engine.strict and version != self.version:
                return None
            asked = connection.execute(
                sa.select(sa.func.count()).where(EVALUATIONS.c.study_id == self.id)
            ).scalar_one()
            if asked != number:
                return None
            now = time.time()
            connection.execute(
                EVALUATIONS.insert().values(
                    study_id=self.id,
                    number=number,
                    action=json.dumps(action),
                    state=PENDING,
                    memory=None if memory is None else json.dumps(memory),
                    asked_version=version + 1,
                    asked_at=now,
                )
            )
            bump(connection, self.id, version)
        evaluation = Evaluation(
            number=number,
            action=action,
            state=PENDING,
            observation=None,
            objective=None,
            reason=None,
            memory=memory,
            asked_version=version + 1,
            finished_version=None,
            asked_at=now,
            finished_at=None,
        )
        self.engine.accept(evaluation)
        self.rows[number] = evaluation
        if version == self.version:
            self.version = version + 1
        return evaluation

    def tell(self, number: int, observation: Any) -> float:
        """Record what evaluation ``number`` observed; returns its objective. Telling the
        same observation again is a no-op (a retried tell); a different one is refused."""
        evaluation = self.evaluation(number)
        values, objective = self.check(evaluation.action, observation)
        with self.storage.locked(self.id) as (connection, version):
            current = self.storage.evaluation(connection, self.id, number)
            if current.state == COMPLETE:
                if current.observation == values:
                    return float(current.objective)
                raise StudyError(f"evaluation {number} was already told another observation")
            if current.state == FAILED:
                raise StudyError(f"evaluation {number} failed ({current.reason}): ask again")
            self._finish(
                connection,
                version,
                number,
                state=COMPLETE,
                observation=json.dumps(values),
                objective=objective,
            )
        return objective

    def fail(self, number: int, reason: str) -> None:
        """Mark pending evaluation ``number`` failed (it teaches the policy nothing)."""
        self.evaluation(number)
        with self.storage.locked(self.id) as (connection, version):
            current = self.storage.evaluation(connection, self.id, number)
            if current.state == FAILED:
                return
            if current.state == COMPLETE:
                raise StudyError(f"evaluation {number} was already told: it cannot fail")
            self._finish(connection, version, number, state=FAILED, reason=str(reason))

    def _finish(self, connection: Any, version: int, number: int, **columns: Any) -> None:
        """Record the end of evaluation ``number`` (its new ``columns``) at the next version,
        inside :meth:`Storage.locked`."""
        connection.execute(
            EVALUATIONS.update()
            .where((EVALUATIONS.c.study_id == self.id) & (EVALUATIONS.c.number == number))
            .values(**columns, finished_version=version + 1, finished_at=time.time())
        )
        bump(connection, self.id, version)

    def _expire(self) -> None:
        """Pending evaluations older than ``expire_after`` stop counting as pending."""
        if self.spec.expire_after is None:
            return
        cutoff = time.time() - float(self.spec.expire_after)
        with self.storage.locked(self.id) as (connection, version):
            stale = (
                (EVALUATIONS.c.study_id == self.id)
                & (EVALUATIONS.c.state == PENDING)
                & (EVALUATIONS.c.asked_at < cutoff)
            )
            if connection.execute(sa.select(sa.func.count()).where(stale)).scalar_one():
                connection.execute(
                    EVALUATIONS.update()
                    .where(stale)
                    .values(state=EXPIRED, finished_version=version + 1, finished_at=time.time())
                )
                bump(connection, self.id, version)

    # ------------------------------------------------------------------ reading

    def evaluations(self) -> list[Evaluation]:
        """Every evaluation, by number."""
        self.sync()
        return [self.rows[k] for k in sorted(self.rows)]

    def best(self) -> Evaluation | None:
        """The told evaluation with the highest objective (``None`` before any)."""
        told = [e for e in self.evaluations() if e.state == COMPLETE]
        return max(told, key=lambda e: (e.objective, -e.number)) if told else None

    def summary(self) -> dict[str, Any]:
        """Progress: counts per state and the best evaluation so far."""
        evaluations = self.evaluations()
        counts = {state: 0 for state in (PENDING, COMPLETE, FAILED, EXPIRED)}
        for evaluation in evaluations:
            counts[evaluation.state] += 1
        best = self.best()
        return {
            "study": self.name,
            "policy": self.spec.policy,
            "problem": self.spec.problem,
            "evaluations": len(evaluations),
            **counts,
            "pending_ids": [e.number for e in evaluations if e.state == PENDING],
            "best": None
            if best is None
            else {"id": best.number, "objective": best.objective, "action": best.action},
        }

    def objectives(self) -> np.ndarray:
        """``(number, objective)`` of the told evaluations, by number, ``(n, 2)``."""
        told = [(e.number, e.objective) for e in self.evaluations() if e.state == COMPLETE]
        return np.array(told, dtype=float).reshape(-1, 2)
