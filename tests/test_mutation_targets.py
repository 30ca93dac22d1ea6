"""``benchmarks/mutation.py``'s targets name modules, tests and functions that exist (a
refactor that renames a function must update the target, or its mutants go untested)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def defined_functions(module: Path) -> set[str]:
    """Top-level functions and ``Class.method`` names of a Python file."""
    names = set()
    for node in ast.parse(module.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names |= {f"{node.name}.{b.name}" for b in node.body if isinstance(b, ast.FunctionDef)}
    return names


def test_every_target_names_existing_modules_tests_and_functions(monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import mutation  # noqa: PLC0415 (benchmarks/ is not a package)

    try:
        for key, target in mutation.MODULES.items():
            module = ROOT / target.module
            assert module.is_file(), key
            for test in target.tests:
                assert (ROOT / test.split("::")[0]).is_file(), (key, test)
            missing = set(target.functions) - defined_functions(module)
            assert not missing, (key, sorted(missing))
    finally:
        sys.modules.pop("mutation", None)
        sys.modules.pop("mutation_survivors", None)


def test_every_hand_written_mutant_applies_to_its_target_exactly_once(monkeypatch) -> None:
    """``--listed`` refuses a mutant whose original text is gone (a refactor renamed it)."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import mutation  # noqa: PLC0415 (benchmarks/ is not a package)

    try:
        for mutant in mutation.LISTED:
            source = (ROOT / mutation.MODULES[mutant.key].module).read_text(encoding="utf-8")
            assert source.count(mutant.old) == 1, mutant.name
    finally:
        sys.modules.pop("mutation", None)
        sys.modules.pop("mutation_survivors", None)
