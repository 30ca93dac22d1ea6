"""Presets of an optional extra: imported only when called, one clear line when missing."""

from __future__ import annotations

import pytest

from causalbandits.experiments.extras import MissingExtraError, needs_extra
from causalbandits.papers import catalogue


def test_a_missing_package_names_the_install_command() -> None:
    preset = needs_extra("lab", ["numpy", "no_such_package_for_the_test"], "builtins:max", 3)
    with pytest.raises(MissingExtraError, match=r"no_such_package_for_the_test: pip install"):
        preset(True)
    with pytest.raises(MissingExtraError, match=r"\.\[lab\]"):
        preset(False)


def test_installed_packages_call_the_target_with_quick_last() -> None:
    assert needs_extra("lab", ["numpy"], "builtins:max", 3)(False) == 3
    assert needs_extra("lab", ["numpy"], "builtins:max", -1)(True) is True


def test_the_catalogue_lists_a_preset_whose_extra_is_missing(monkeypatch) -> None:
    preset = needs_extra("lab", ["no_such_package_for_the_test"], "builtins:max", 1)
    monkeypatch.setitem(catalogue.EXPERIMENTS, "toy-extra", preset)
    assert "toy-extra: this experiment needs no_such_package_for_the_test" in (
        catalogue.describe("toy-extra")
    )
