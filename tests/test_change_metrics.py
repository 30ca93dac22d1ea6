import numpy as np
import pandas as pd
import pytest

from causalbandits.envs.piecewise import ChangeRecord
from causalbandits.experiments.change_metrics import (
    detection_columns,
    detection_summary,
    score_detections,
)
from causalbandits.experiments.metrics import parameter_columns, summarise
from causalbandits.experiments.simulate import results_frame

CHANGES = [ChangeRecord(100, 2, 0), ChangeRecord(100, 3, 1), ChangeRecord(200, 2, 0)]


def test_hits_delays_and_false_alarms_by_hand():
    alarms = [
        (50, 2, 0),  # before any change: false alarm
        (103, 2, 0),  # first change of (2, 0): delay 3
        (110, 2, 0),  # second alarm of the same change: false alarm
        (150, 1, 1),  # unchanged pair: false alarm
        (230, 2, 0),  # the change at 200: delay 30
    ]  # (3, 1) is never flagged: missed
    scores = score_detections(CHANGES, alarms, [100, 200], 300)
    assert scores == {
        "detection_changes": 3,
        "detection_hits": 2,
        "detection_delay_sum": 33,
        "detection_false_alarms": 3,
    }


def test_an_alarm_after_the_next_change_point_does_not_count_for_the_earlier_change():
    scores = score_detections(CHANGES[1:2], [(200, 3, 1)], [100, 200], 300)
    assert scores["detection_hits"] == 0
    assert scores["detection_false_alarms"] == 1


class _Env:
    changes = CHANGES
    change_points = np.array([100, 200])
    horizon = 300


class _Policy:
    subgraph_detections = [[(101, 2, 0)], [(101, 3, 1), (205, 2, 0)]]


def test_columns_per_replicate_and_summaries():
    columns = detection_columns(_Env(), _Policy())
    assert columns["detection_hits"].tolist() == [1, 2]
    assert detection_columns(_Env(), object()) == {}
    result = {
        "t": np.array([150, 300]),
        "cum_regret": np.ones((2, 2)),
        "optimal_share": np.ones((2, 2)),
    }
    frame = results_frame(result, "a", [0, 1], columns, setting=0, system=4)
    assert frame["detection_hits"].tolist() == [1, 1, 2, 2]
    assert parameter_columns(frame) == ["system"]
    summary = summarise(frame)
    assert summary["detection_hits_mean"].tolist() == pytest.approx([1.5, 1.5])


def test_each_system_is_scored_against_its_own_changes():
    class Systems(_Env):
        changes_per_replicate = (CHANGES[:1], CHANGES[1:2])

    columns = detection_columns(Systems(), _Policy())
    assert columns["detection_changes"].tolist() == [1, 1]
    assert columns["detection_hits"].tolist() == [1, 1]
    assert columns["detection_false_alarms"].tolist() == [0, 1]  # (205, 2, 0) is not its change


def test_detection_summary_pools_replicates_at_the_last_round():
    columns = {"detection_changes": [3, 3], "detection_hits": [1, 2], "detection_delay_sum": [3, 9]}
    columns["detection_false_alarms"] = [2, 0]
    result = {"t": np.array([150, 300]), "cum_regret": np.ones((2, 2))}
    detector = results_frame(result, "a", [0, 1], columns, setting=0)
    plain = results_frame(result, "b", [0, 1], setting=0)
    summary = detection_summary(pd.concat([detector, plain], ignore_index=True))
    assert summary.index.tolist() == ["a"]
    row = summary.loc["a"]
    assert (row["changes"], row["hits"], row["rate"]) == (6, 3, 0.5)
    assert (row["delay"], row["false_alarms"]) == (4.0, 1.0)
    assert detection_summary(plain).empty
