"""The tables of persistent studies and the one locked transaction that changes them.

Two tables (SQLAlchemy Core; SQLite file by default, any SQLAlchemy URL such as
``postgresql+psycopg://user@host/db`` for many workers):

- ``studies``: one row per study: its name, its spec (JSON) and that spec's fingerprint, and
  ``version``, a counter that every ask, tell, fail and expiry increments under the study's
  lock. Events are therefore totally ordered per study, whatever the workers.
- ``evaluations``: one row per ask: the study, its ``number`` (0, 1, ... per study, the id a
  user sees), the action, the state (``pending``, ``complete``, ``failed``, ``expired``), the
  observation, the versions at which it was asked and finished, the times, and ``memory``
  (what the proposal left for later proposals, e.g. NMCBO's chosen networks; JSON).

Every change runs in :meth:`Storage.locked`: one transaction holding the study's lock (SQLite:
``BEGIN IMMEDIATE``, the file's write lock; PostgreSQL: ``SELECT ... FOR UPDATE`` on the
study's row). A process killed inside it leaves nothing behind (the transaction rolls back).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

METADATA = sa.MetaData()

STUDIES = sa.Table(
    "studies",
    METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    sa.Column("spec", sa.Text, nullable=False),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("version", sa.Integer, nullable=False, default=0),
    sa.Column("created_at", sa.Float, nullable=False),
)

EVALUATIONS = sa.Table(
    "evaluations",
    METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("study_id", sa.Integer, sa.ForeignKey("studies.id"), nullable=False),
    sa.Column("number", sa.Integer, nullable=False),
    sa.Column("action", sa.Text, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("observation", sa.Text),
    sa.Column("objective", sa.Float),
    sa.Column("reason", sa.Text),
    sa.Column("memory", sa.Text),
    sa.Column("asked_version", sa.Integer, nullable=False),
    sa.Column("finished_version", sa.Integer),
    sa.Column("asked_at", sa.Float, nullable=False),
    sa.Column("finished_at", sa.Float),
    sa.UniqueConstraint("study_id", "number"),
    sa.Index("evaluations_by_version", "study_id", "asked_version", "finished_version"),
)

PENDING, COMPLETE, FAILED, EXPIRED = "pending", "complete", "failed", "expired"


@dataclass(frozen=True)
class Evaluation:
    """One stored evaluation (a row of ``evaluations``, JSON decoded)."""

    number: int
    action: Any
    state: str
    observation: Any
    objective: float | None
    reason: str | None
    memory: Any
    asked_version: int
    finished_version: int | None
    asked_at: float
    finished_at: float | None

    @classmethod
    def from_row(cls, row: Any) -> Evaluation:
        return cls(
            number=row.number,
            action=json.loads(row.action),
            state=row.state,
            observation=None if row.observation is None else json.loads(row.observation),
            objective=row.objective,
            reason=row.reason,
            memory=None if row.memory is None else json.loads(row.memory),
            asked_version=row.asked_version,
            finished_version=row.finished_version,
            asked_at=row.asked_at,
            finished_at=row.finished_at,
        )


def connect(url: str) -> Engine:
    """An engine for ``url`` with the tables created; SQLite files get write-ahead logging,
    a 60 s busy timeout and ``BEGIN IMMEDIATE`` transactions (the file's write lock up
    front, so two writers never deadlock upgrading a read lock)."""
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"timeout": 60.0, "isolation_level": None})

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        @sa.event.listens_for(engine, "begin")
        def _immediate(connection: Connection) -> None:
            connection.exec_driver_sql("BEGIN IMMEDIATE")

    else:
        engine = sa.create_engine(url, pool_pre_ping=True)
    try:
        METADATA.create_all(engine)
    except sa.exc.DatabaseError:
        # Workers starting at once on a fresh database race to create the tables (on
        # PostgreSQL the losers' CREATE fails when the winner commits); they exist now.
        METADATA.create_all(engine)
    return engine


class Storage:
    """The rows of one database (:func:`connect`)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = connect(url)

    def find(self, name: str) -> Any | None:
        """The ``studies`` row named ``name``, or ``None``."""
        with self.engine.connect() as connection:
            return connection.execute(
                sa.select(STUDIES).where(STUDIES.c.name == name)
            ).one_or_none()

    def names(self) -> list[str]:
        with self.engine.connect() as connection:
            return list(
                connection.execute(sa.select(STUDIES.c.name).order_by(STUDIES.c.id)).scalars()
            )

    def insert_study(self, name: str, spec: dict[str, Any], fingerprint: str) -> None:
        """Create the study row (``IntegrityError`` if the name was taken meanwhile)."""
        with self.engine.begin() as connection:
            connection.execute(
                STUDIES.insert().values(
                    name=name,
                    spec=json.dumps(spec, sort_keys=True),
                    fingerprint=fingerprint,
                    version=0,
                    created_at=time.time(),
                )
            )

    @contextmanager
    def locked(self, study_id: int) -> Iterator[tuple[Connection, int]]:
        """A transaction holding study ``study_id``'s lock; yields the connection and the
        study's current version (commit on exit, roll back on an exception)."""
        with self.engine.begin() as connection:
            version = connection.execute(
                sa.select(STUDIES.c.version).where(STUDIES.c.id == study_id).with_for_update()
            ).scalar_one()
            yield connection, int(version)

    def changes(self, study_id: int, after: int) -> tuple[int, list[Evaluation]]:
        """The study's version and every evaluation asked or finished after version
        ``after``, in one consistent read: one snapshot for both queries (SQLite's
        ``BEGIN IMMEDIATE`` excludes writers; elsewhere ``REPEATABLE READ``, since under
        PostgreSQL's default ``READ COMMITTED`` the rows could show changes committed after
        the version was read, which a later read would replay again)."""
        connection = self.engine.connect()
        if connection.dialect.name != "sqlite":
            connection = connection.execution_options(isolation_level="REPEATABLE READ")
        with connection, connection.begin():
            version = connection.execute(
                sa.select(STUDIES.c.version).where(STUDIES.c.id == study_id)
            ).scalar_one()
            rows = connection.execute(
                sa.select(EVALUATIONS)
                .where(EVALUATIONS.c.study_id == study_id)
                .where(
                    (EVALUATIONS.c.asked_version > after) | (EVALUATIONS.c.finished_version > after)
                )
                .order_by(EVALUATIONS.c.number)
            )
            return int(version), [Evaluation.from_row(row) for row in rows]

    def evaluation(self, connection: Connection, study_id: int, number: int) -> Evaluation | None:
        row = connection.execute(
            sa.select(EVALUATIONS).where(
                (EVALUATIONS.c.study_id == study_id) & (EVALUATIONS.c.number == number)
            )
        ).one_or_none()
        return None if row is None else Evaluation.from_row(row)


def bump(connection: Connection, study_id: int, version: int) -> int:
    """Set the study's version to ``version + 1`` (inside :meth:`Storage.locked`)."""
    connection.execute(STUDIES.update().where(STUDIES.c.id == study_id).values(version=version + 1))
    return version + 1
