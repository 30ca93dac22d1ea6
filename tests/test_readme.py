"""The README's Python example runs as written."""

import importlib.util
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_example_runs(tmp_path, monkeypatch):
    blocks = python_blocks()
    assert blocks, "the README has no Python example"
    monkeypatch.chdir(tmp_path)
    gp_installed = importlib.util.find_spec("botorch") is not None
    for block in blocks:
        if "policies.excbo" in block and not gp_installed:
            continue  # the causal-BO example needs the gp extra (tests/conftest.py)
        exec(compile(block, str(README), "exec"), {})
    assert (tmp_path / "regret.png").stat().st_size > 1000


def test_readme_commands_match_ci():
    text = README.read_text(encoding="utf-8")
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    test_command = ci.strip().splitlines()[-1]
    assert test_command in text
