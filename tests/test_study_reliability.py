"""Persistent studies under real processes (issue 30): workers sharing one study, processes
killed between ask and tell or inside a tell, expiry, resuming, and refused requests.

Each worker is ``tests/study_worker.py`` run with ``subprocess`` (it opens the study by name,
as a user's process on another machine would). Waits are bounded by ``GUARD`` seconds, a
guard against hangs, never a timing assertion. The PostgreSQL variants run when
``CAUSALBANDITS_TEST_POSTGRES_URL`` names a server (``.ci/run`` starts one).
"""

from __future__ import annotations

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa

from causalbandits.envs.bo_problems import dropwave
from causalbandits.envs.mixed_sign import mixed_sign_bandit
from causalbandits.studies import Study, StudyError, StudySpec
from causalbandits.studies.storage import EVALUATIONS, STUDIES
from causalbandits.studies.study import make_engine

WORKER = Path(__file__).with_name("study_worker.py")
#: Seconds any wait on a worker may take before the test fails (a guard against hangs).
GUARD = 120.0
POSTGRES_ENV = "CAUSALBANDITS_TEST_POSTGRES_URL"

BANDIT = StudySpec(
    problem="mixed-sign", policy="linsem-ucb", params={"horizon": 200, "instance": 1}, seed=5
)
DROPWAVE = StudySpec(problem="causalbandits.envs.bo_problems:dropwave", policy="gp-ucb", seed=3)
#: Dropwave's GP-UCB study proposes a uniform design of this many points first.
N_DESIGN = 6


class Worker:
    """One ``study_worker.py`` process; its JSON-line records are read from its ``out`` file."""

    def __init__(
        self, directory: Path, url: str, name: str, *command: Any, env: dict[str, str] | None
    ) -> None:
        tag = uuid.uuid4().hex[:8]
        self.out, self.err = directory / f"worker-{tag}.jsonl", directory / f"worker-{tag}.err"
        with self.err.open("w") as err:
            self.process = subprocess.Popen(
                [sys.executable, str(WORKER), url, name, str(self.out), *map(str, command)],
                stdout=subprocess.DEVNULL,
                stderr=err,
                env={**os.environ, **(env or {})},
            )

    def records(self, key: str | None = None) -> list[dict[str, Any]]:
        """The complete records written so far (those holding ``key``, if given)."""
        if not self.out.exists():
            return []
        lines = self.out.read_text().splitlines(keepends=True)
        records = [json.loads(line) for line in lines if line.endswith("\n")]
        return [record for record in records if key is None or key in record]

    def failure(self, what: str) -> AssertionError:
        return AssertionError(
            f"worker {what} (exit {self.process.poll()}):\n{self.err.read_text()}"
        )

    def wait_until(self, ready: Callable[[], bool]) -> None:
        """Block until ``ready()`` while the worker runs (it must not exit first)."""
        deadline = time.monotonic() + GUARD
        while not ready():
            if self.process.poll() is not None and not ready():
                raise self.failure("exited early")
            if time.monotonic() > deadline:
                raise self.failure(f"still waiting after {GUARD} s")
            time.sleep(0.02)

    def wait_record(self, key: str) -> dict[str, Any]:
        """The first record holding ``key``, once written."""
        self.wait_until(lambda: bool(self.records(key)))
        return self.records(key)[0]

    def finish(self) -> list[dict[str, Any]]:
        """Every record, after the worker exited successfully."""
        try:
            code = self.process.wait(timeout=GUARD)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise self.failure(f"did not finish in {GUARD} s") from None
        if code != 0:
            raise self.failure("failed")
        return self.records()

    def kill(self) -> None:
        """SIGKILL: no cleanup, no rollback by the process itself."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=GUARD)


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Callable[..., Worker]]:
    """Start workers with ``workers(url, name, *command, env=None)``; any still running at
    the end of the test is killed."""
    started: list[Worker] = []

    def start(url: str, name: str, *command: Any, env: dict[str, str] | None = None) -> Worker:
        started.append(Worker(tmp_path, url, name, *command, env=env))
        return started[-1]

    yield start
    for worker in started:
        if worker.process.poll() is None:
            worker.kill()


@pytest.fixture
def storage_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database: a new SQLite file, or a new schema (dropped afterwards)
    on the PostgreSQL server of ``POSTGRES_ENV``."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'studies.db'}"
        return
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"no PostgreSQL server: set {POSTGRES_ENV} (.ci/run starts one)")
    schema = f"test_{uuid.uuid4().hex[:12]}"
    server = sa.create_engine(url)
    with server.begin() as connection:
        connection.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}"
    finally:
        with server.begin() as connection:
            connection.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        server.dispose()


BACKENDS = pytest.mark.parametrize("storage_url", ["sqlite", "postgresql"], indirect=True)


def unique_name() -> str:
    """A study name no earlier run used (a PostgreSQL database outlives the test run)."""
    return f"study-{uuid.uuid4().hex[:12]}"


def play(environment: Any, action: Any) -> list[float]:
    """One replicate's feedback to ``action``, as a user would tell it."""
    return np.asarray(environment.step(np.asarray(action)[None]))[0].tolist()


def bandit_environment(seed: int = 0) -> Any:
    environment = mixed_sign_bandit(horizon=200, instance=1)
    environment.reset(seed=seed, replicates=1)
    return environment


def dropwave_environment(seed: int = 0) -> Any:
    environment = dropwave()
    environment.reset(seed=seed, replicates=1)
    return environment


def run(study: Study, environment: Any, rounds: int) -> None:
    """``rounds`` asks, each told its feedback at once."""
    for _ in range(rounds):
        number, action = study.ask()
        study.tell(number, play(environment, action))


def snapshot(study: Study) -> tuple[tuple[Any, ...], list[tuple[Any, ...]]]:
    """The study's row and its evaluations' rows, as stored (any backend)."""
    with study.storage.engine.connect() as connection:
        row = connection.execute(sa.select(STUDIES).where(STUDIES.c.id == study.id)).one()
        rows = connection.execute(
            sa.select(EVALUATIONS)
            .where(EVALUATIONS.c.study_id == study.id)
            .order_by(EVALUATIONS.c.number)
        ).all()
    return tuple(row), [tuple(r) for r in rows]


def dump(path: Path) -> list[str]:
    """Every table of the SQLite file at ``path``, as SQL."""
    with closing(sqlite3.connect(path)) as connection:
        return list(connection.iterdump())


def copy_database(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite file (its write-ahead log included)."""
    with closing(sqlite3.connect(source)) as read, closing(sqlite3.connect(target)) as write:
        read.backup(write)


# ---------------------------------------------------------------------------- concurrency


@BACKENDS
def test_workers_share_one_study(
    storage_url: str, workers: Callable[..., Worker], tmp_path: Path
) -> None:
    """Three processes start at once on an empty database, create (or load) one bandit study
    and loop ask -> tell: the evaluations are numbered 0..M-1, each told observation is
    stored once under its number, every event has its own version, nothing is left pending,
    and a fresh load replays every stored action."""
    per_worker, n_workers = 12, 3
    name, spec = unique_name(), json.dumps(BANDIT.to_dict())
    go = tmp_path / "go"
    team = [
        workers(storage_url, name, "join", spec, per_worker, seed, go) for seed in range(n_workers)
    ]
    for worker in team:
        worker.wait_record("ready")
    go.touch()
    told: dict[int, dict[str, Any]] = {}
    for worker in team:
        records = [record for record in worker.finish() if "told" in record]
        numbers = [record["told"] for record in records]
        assert len(numbers) == per_worker and numbers == sorted(numbers)
        for record in records:
            assert record["told"] not in told, "two workers were given the same evaluation"
            told[record["told"]] = record
    total = per_worker * n_workers
    assert sorted(told) == list(range(total))

    study = Study.load(name, storage_url)  # replays: raises if any stored action differs
    evaluations = study.evaluations()
    assert [e.number for e in evaluations] == list(range(total))
    for evaluation in evaluations:
        assert evaluation.state == "complete"
        assert evaluation.observation == told[evaluation.number]["observation"]
        assert evaluation.objective == told[evaluation.number]["objective"]
    stored_rows = snapshot(study)[1]
    assert len(stored_rows) == total
    versions = [e.asked_version for e in evaluations] + [e.finished_version for e in evaluations]
    assert sorted(versions) == list(range(1, 2 * total + 1))  # one version per ask and tell
    assert study.version == 2 * total
    assert study.summary()["pending"] == 0
    number, _ = study.ask()  # the replayed study carries on
    assert number == total


def test_bo_workers_asking_at_once_get_distinct_pending_aware_actions(
    workers: Callable[..., Worker], tmp_path: Path
) -> None:
    """Two processes ask a GP-UCB study past its design at once and hold their evaluations:
    both are pending together, their actions differ, the later one is exactly the proposal
    made with the earlier one pending (the believer), and both tells are recorded."""
    url = f"sqlite:///{tmp_path / 'studies.db'}"
    name = unique_name()
    study = Study.create(name, DROPWAVE, storage=url)
    run(study, dropwave_environment(), N_DESIGN)
    go, hold = tmp_path / "go", tmp_path / "hold"
    pair = [workers(url, name, "loop", 1, seed, go, hold) for seed in (1, 2)]
    for worker in pair:
        worker.wait_record("ready")
    go.touch()
    first, second = sorted((w.wait_record("asked") for w in pair), key=lambda r: r["asked"])
    assert (first["asked"], second["asked"]) == (N_DESIGN, N_DESIGN + 1)
    rows = study.evaluations()
    assert [e.state for e in rows[N_DESIGN:]] == ["pending", "pending"]
    hold.touch()

    assert first["action"] != second["action"]
    engine = make_engine(DROPWAVE, study.problem)
    engine.apply([(0, "ask", row) for row in rows[: N_DESIGN + 1]])  # design told, first out
    believed, _ = engine.propose(second["asked"])
    assert believed == second["action"]
    blind = make_engine(DROPWAVE, study.problem)
    blind.apply([(0, "ask", row) for row in rows[:N_DESIGN]])
    assert blind.propose(second["asked"])[0] != believed  # the pending evaluation mattered

    told = {r["told"]: r for worker in pair for r in worker.finish() if "told" in r}
    stored = Study.load(name, url).evaluations()
    for evaluation in stored[N_DESIGN:]:
        assert evaluation.state == "complete"
        assert evaluation.observation == told[evaluation.number]["observation"]
    assert len(stored) == N_DESIGN + 2


# ---------------------------------------------------------------------------- crash safety


def test_process_killed_between_ask_and_tell(
    workers: Callable[..., Worker], tmp_path: Path
) -> None:
    """A process killed after its ask leaves the evaluation pending; another process (this
    one) tells it later and the study carries on."""
    url = f"sqlite:///{tmp_path / 'studies.db'}"
    name = unique_name()
    environment = bandit_environment()
    study = Study.create(name, BANDIT, storage=url)
    run(study, environment, 3)
    asker = workers(url, name, "ask", "hold")
    asked = asker.wait_record("asked")
    asker.kill()
    assert asked["asked"] == 3
    pending = Study.load(name, url).evaluation(3)
    assert (pending.state, pending.action) == ("pending", asked["action"])

    observation = play(environment, asked["action"])
    study.tell(3, observation)
    resumed = Study.load(name, url)
    told = resumed.evaluation(3)
    assert (told.state, told.observation) == ("complete", observation)
    assert resumed.summary()["pending"] == 0
    assert resumed.ask()[0] == 4


@BACKENDS
def test_process_killed_inside_a_tell_leaves_nothing(
    storage_url: str, workers: Callable[..., Worker], tmp_path: Path
) -> None:
    """A process killed inside a tell's locked transaction (after its writes, before the
    commit) leaves the database as before: the evaluation is pending, the lock is released
    (another process tells it), and the observation is recorded exactly once."""
    name = unique_name()
    environment = bandit_environment()
    study = Study.create(name, BANDIT, storage=storage_url)
    number, action = study.ask()
    observation = json.dumps(play(environment, action))
    before = snapshot(study)

    inside = tmp_path / "inside-the-transaction"
    teller = workers(
        storage_url, name, "tell", number, observation,
        env={"CAUSALBANDITS_TEST_SLOW_BUMP": str(inside)},
    )  # fmt: skip
    teller.wait_until(inside.exists)
    teller.kill()
    assert snapshot(study) == before  # rolled back
    assert Study.load(name, storage_url).evaluation(number).state == "pending"

    retry = workers(storage_url, name, "tell", number, observation)
    assert retry.finish()[0]["told"] == number  # the study's lock was released
    after = Study.load(name, storage_url)
    assert len(snapshot(after)[1]) == 1
    told = after.evaluation(number)
    assert (told.state, told.observation) == ("complete", json.loads(observation))
    assert (told.finished_version, after.version) == (2, 2)


def test_expired_evaluation_is_recorded_when_told_late(tmp_path: Path) -> None:
    """An evaluation pending longer than ``expire_after`` is expired by the next ask; telling
    it afterwards still records it, and a fresh load replays the history."""
    url = f"sqlite:///{tmp_path / 'studies.db'}"
    environment = bandit_environment()
    study = Study.create("expiring", replace(BANDIT, expire_after=0.5), storage=url)
    late, late_action = study.ask()
    time.sleep(0.6)
    number, action = study.ask()
    assert (study.evaluation(late).state, study.evaluation(number).state) == ("expired", "pending")

    observation = play(environment, late_action)
    objective = study.tell(late, observation)
    recorded = study.evaluation(late)
    assert (recorded.state, recorded.observation, recorded.objective) == (
        "complete", observation, objective,
    )  # fmt: skip
    study.tell(number, play(environment, action))
    resumed = Study.load("expiring", url)  # replays the late tell in its order
    summary = resumed.summary()
    assert (summary["complete"], summary["expired"], summary["pending"]) == (2, 0, 0)
    number, _ = resumed.ask()
    assert study.evaluation(number).state == "pending"  # the live study replays that ask


# ---------------------------------------------------------------------------- resuming


def resumed_ask_matches(
    spec: StudySpec,
    environment: Any,
    rounds: int,
    workers: Callable[..., Worker],
    tmp_path: Path,
) -> None:
    """After ``rounds`` told asks, a failed one and a pending one, a process opening a copy of
    the database asks exactly what the uninterrupted study object asks next."""
    original, copy = tmp_path / "original.db", tmp_path / "copy.db"
    study = Study.create("resumed", spec, storage=f"sqlite:///{original}")
    run(study, environment, rounds)
    study.fail(study.ask()[0], "the sensor was down")
    study.ask()  # left pending
    copy_database(original, copy)
    resumer = workers(f"sqlite:///{copy}", "resumed", "ask")
    number, action = study.ask()
    resumed = resumer.finish()[0]
    assert (resumed["asked"], resumed["action"]) == (number, action)


def test_resumed_bandit_study_asks_what_the_uninterrupted_one_would(
    workers: Callable[..., Worker], tmp_path: Path
) -> None:
    """LinSEM-UCB: the resumed process replays every call of the policy."""
    resumed_ask_matches(BANDIT, bandit_environment(), 10, workers, tmp_path)


def test_resumed_bo_study_asks_what_the_uninterrupted_one_would(
    workers: Callable[..., Worker], tmp_path: Path
) -> None:
    """GP-UCB past its design, with a pending evaluation (a believed observation)."""
    resumed_ask_matches(DROPWAVE, dropwave_environment(), N_DESIGN, workers, tmp_path)


# ---------------------------------------------------------------------------- bad input


def test_refused_requests_leave_the_database_untouched(tmp_path: Path) -> None:
    """Every refused tell, fail, create and load raises :class:`StudyError` and leaves both
    tables byte-for-byte as they were; a retried tell or fail is a no-op."""
    path = tmp_path / "studies.db"
    url = f"sqlite:///{path}"
    environment = bandit_environment()
    study = Study.create("bandit", BANDIT, storage=url)
    told, told_action = study.ask()
    told_observation = play(environment, told_action)
    told_objective = study.tell(told, told_observation)
    pending, pending_action = study.ask()
    failed, _ = study.ask()
    study.fail(failed, "the sensor was down")
    bo = Study.create("bo", DROPWAVE, storage=url)
    bo_pending, _ = bo.ask()
    good = play(environment, pending_action)
    nan = [math.nan, *good[1:]]
    other_spec = replace(BANDIT, seed=6)

    refusals: dict[str, tuple[Callable[[], Any], str]] = {
        "NaN feedback": (lambda: study.tell(pending, nan), "finite"),
        "infinite feedback": (lambda: study.tell(pending, [math.inf, *good[1:]]), "finite"),
        "feedback of the wrong shape": (lambda: study.tell(pending, good[:-1]), "shape"),
        "feedback that is not numbers": (lambda: study.tell(pending, ["x"] * 50), "numbers"),
        "unknown evaluation": (lambda: study.tell(99, good), "no evaluation 99"),
        "another observation": (lambda: study.tell(told, good), "already told another"),
        "tell a failed evaluation": (lambda: study.tell(failed, good), "failed"),
        "fail a told evaluation": (lambda: study.fail(told, "late"), "already told"),
        "fail an unknown evaluation": (lambda: study.fail(99, "late"), "no evaluation 99"),
        "create an existing name": (lambda: Study.create("bandit", BANDIT, url), "exists"),
        "create an existing name, another spec": (
            lambda: Study.create("bandit", other_spec, url, load_if_exists=True),
            "another problem or policy",
        ),
        "load with another spec": (
            lambda: Study.load("bandit", url, spec=other_spec),
            "another problem or policy",
        ),
        "load an unknown study": (lambda: Study.load("nope", url), "no study 'nope'"),
        "BO: an unknown node": (lambda: bo.tell(bo_pending, {"X": 1.0, "Z": 0.5}), "unknown"),
        "BO: a missing node": (lambda: bo.tell(bo_pending, {"X": 1.0}), "missing"),
        "BO: NaN": (lambda: bo.tell(bo_pending, [math.nan, 0.5]), "finite"),
        "BO: wrong shape": (lambda: bo.tell(bo_pending, [1.0, 0.5, 0.2]), "shape"),
    }
    before = dump(path)
    assert any('INSERT INTO "evaluations"' in line for line in before)
    for reason, (request, message) in refusals.items():
        with pytest.raises(StudyError, match=message):
            request()
        assert dump(path) == before, reason

    assert study.tell(told, told_observation) == told_objective  # a retried tell
    study.fail(failed, "the sensor was down")  # a retried fail
    assert dump(path) == before
    study.tell(pending, good)  # the study still works
    assert dump(path) != before
