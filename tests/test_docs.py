"""The walk-through ``docs/adding-a-paper.md`` runs as written: its toy paper, added as a
package, is listed and reproduced by the CLI end to end and gives the stated verdicts."""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

from causalbandits.cli import main
from causalbandits.papers import catalogue

DOC = Path(__file__).resolve().parents[1] / "docs" / "adding-a-paper.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks(text: str) -> list[str]:
    """The fenced ``python`` code blocks of a markdown text, in order."""
    return BLOCK.findall(text)


@pytest.fixture(scope="module")
def toy_package(tmp_path_factory: pytest.TempPathFactory):
    """The doc's blocks written as the package ``toy_paper`` (its ``__init__.py``), imported
    and registered in the catalogue as the doc says."""
    blocks = python_blocks(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 5
    root = tmp_path_factory.mktemp("toy")
    package = root / "toy_paper"
    package.mkdir()
    # One block runs the experiment by hand; the package keeps the definitions.
    (by_hand,) = [block for block in blocks if block.startswith("experiment = dose(")]
    definitions = [block for block in blocks if block is not by_hand]
    (package / "__init__.py").write_text("\n".join(definitions), encoding="utf-8")
    sys.path.insert(0, str(root))
    try:
        import toy_paper  # noqa: PLC0415 (the package exists only once the doc is written out)

        with pytest.MonkeyPatch.context() as patch:
            for name, preset in toy_paper.EXPERIMENTS.items():
                patch.setitem(catalogue.EXPERIMENTS, name, preset)
            yield toy_paper, root, by_hand
    finally:
        sys.path.remove(str(root))
        sys.modules.pop("toy_paper", None)


def test_the_toy_paper_is_listed_and_reproduced(toy_package, capsys) -> None:
    _, root, _ = toy_package
    assert main(["list"]) == 0
    assert "toy-dose" in {line.split()[0] for line in capsys.readouterr().out.splitlines()}
    out = root / "reproduced"
    assert main(["reproduce", "toy-dose", "--quick", "--jobs", "1", "--out", str(out)]) == 0
    claims = json.loads((out / "claims.json").read_text())
    verdicts = {claim["text"]: claim["verdict"] for claim in claims["claims"]}
    assert verdicts == {
        "with 50 arms the pooled policy has lower regret than UCB1": "holds",
        "more arms cost the pooled policy less regret than UCB1": "holds",
    }
    df = pd.read_csv(out / "results.csv")
    # 2 arm counts x 2 algorithms x 4 replicates x 4 recorded rounds.
    assert len(df) == 2 * 2 * 4 * 4
    assert sorted(df["t"].unique()) == [125, 250, 375, 500]
    assert (df.groupby(["arms", "algorithm", "replicate"])["cum_regret"].diff().dropna() >= 0).all()


def test_the_by_hand_block_gives_the_cli_numbers_and_common_random_numbers(toy_package) -> None:
    module, root, by_hand = toy_package
    namespace = dict(vars(module))
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        exec(compile(by_hand, "by_hand", "exec"), namespace)  # noqa: S102 (the doc's block)
    results = namespace["results"]
    reproduced = pd.read_csv(root / "reproduced" / "results.csv")
    key = ["arms", "algorithm", "replicate", "t"]
    pd.testing.assert_series_equal(
        results.sort_values(key)["cum_regret"].reset_index(drop=True),
        reproduced.sort_values(key)["cum_regret"].reset_index(drop=True),
    )
    # Both algorithms met the same slopes: the best arm's value agrees by replicate.
    grid = module.dose(quick=True)
    run = module.BanditRun({"arms": 5, "algorithm": "UCB1"}, 1, [0, 1, 2])
    other = module.BanditRun({"arms": 5, "algorithm": "Pooled slope"}, 0, [0, 1, 2])
    first, second = grid.make_environment(run), grid.make_environment(other)
    assert (first.slopes == second.slopes).all()


def test_the_spec_is_a_bandit_grid_and_round_trips_through_yaml(toy_package) -> None:
    module, root, _ = toy_package
    experiment = module.TOY_ROBUST
    assert isinstance(experiment, module.BanditGrid)
    # 2 settings x 2 algorithms, one chunk of 4 replicates each.
    assert len(experiment.tasks()) == 4
    path = module.spec.to_yaml(root / "toy-robust.yaml")
    again = module.ExperimentSpec.from_yaml(path)
    assert again.fingerprint() == module.spec.fingerprint()


def test_a_saved_folder_re_renders_and_re_plots_from_its_long_table(toy_package) -> None:
    """docs/results keeps a run's manifest and gzipped long table, not its task files: both
    ``report`` and ``plot`` work from them (``plot`` refused them before)."""
    _, root, _ = toy_package
    run, saved = root / "reproduced", root / "saved"
    saved.mkdir()
    (saved / "manifest.json").write_bytes((run / "manifest.json").read_bytes())
    (saved / "results.csv.gz").write_bytes(gzip.compress((run / "results.csv").read_bytes()))
    assert main(["report", str(saved)]) == 0
    assert (saved / "report.md").read_text() == (run / "report.md").read_text()
    assert main(["plot", str(saved)]) == 0
