"""The claims scoreboard: every paper claim of every saved report, its verdict, and for each
claim that does not hold a one-line cause.

A written report saves its claims beside it as ``claims.json`` (:func:`save_claims`);
:func:`scoreboard` reads every ``claims.json`` under a results folder (``docs/results``) and
the hand-kept causes beside it (``causes.yaml``: claim text -> ``cause`` and ``link``, the
decision or analysis that found it, a path from the repository's root; the key ``"*"``
covers every claim of the folder that has no entry of its own, e.g. a sensitivity run) and
renders one markdown page: counts per paper and verdict, then per paper and experiment every
claim.
"""

from __future__ import annotations

import json
import posixpath
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from causalbandits.experiments.evidence import Verdict
from causalbandits.experiments.report import Claim, markdown_table

CLAIMS_FILE = "claims.json"
CAUSES_FILE = "causes.yaml"
#: The key of a cause that covers every claim of its folder without an entry of its own.
ANY_CLAIM = "*"
#: Where the scoreboard page sits, relative to the repository's root: causes' links (paths
#: from the root) are rewritten relative to it, so they resolve on the site and on GitHub.
PAGE_FOLDER = "docs/results"
#: The verdicts that need a recorded cause on the scoreboard.
NEEDS_CAUSE = (Verdict.NOT_SIGNIFICANT, Verdict.CONTRADICTED, Verdict.NOT_REPRODUCED)


@dataclass(frozen=True)
class SavedClaims:
    """The claims of one saved report: ``experiment`` is the results folder relative to the
    scoreboard's root, ``paper`` the paper's title, ``description`` the experiment's."""

    experiment: str
    paper: str
    description: str
    claims: tuple[Claim, ...]


def save_claims(out_dir: str | Path, claims: Iterable[Claim], paper: str, description: str) -> Path:
    """Write ``claims.json`` into ``out_dir``; return its path."""
    path = Path(out_dir) / CLAIMS_FILE
    payload = {
        "paper": paper,
        "description": description,
        "claims": [{**asdict(c), "verdict": c.verdict.value} for c in claims],
    }
    path.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load_claims(path: str | Path, root: str | Path) -> SavedClaims:
    """One ``claims.json`` (``root``: the folder the experiment's name is relative to)."""
    path = Path(path)
    payload = json.loads(path.read_text(encoding="utf-8"))
    claims = tuple(
        Claim(**{**entry, "verdict": Verdict(entry["verdict"])}) for entry in payload["claims"]
    )
    experiment = path.parent.relative_to(root).as_posix()
    return SavedClaims(experiment, payload["paper"], payload["description"], claims)


def read_causes(folder: str | Path) -> dict[str, dict[str, str]]:
    """The ``causes.yaml`` of one results folder (empty when absent): claim -> cause, link."""
    path = Path(folder) / CAUSES_FILE
    if not path.exists():
        return {}
    causes = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    for text, entry in causes.items():
        if not isinstance(entry, dict) or not entry.get("cause"):
            raise ValueError(f"{path}: {text!r} needs a 'cause'")
    return causes


def collect(root: str | Path) -> list[SavedClaims]:
    """Every ``claims.json`` under ``root``, sorted by experiment."""
    root = Path(root)
    return [load_claims(path, root) for path in sorted(root.rglob(CLAIMS_FILE))]


def stale_causes(root: str | Path) -> list[tuple[str, str]]:
    """``(folder, claim)`` of the causes under ``root`` that name no saved claim needing a
    cause (a folder's ``"*"`` is stale when none of its claims needs one)."""
    root = Path(root)
    stale = []
    for path in sorted(root.rglob(CAUSES_FILE)):
        folder = path.parent
        claims = (
            load_claims(folder / CLAIMS_FILE, root).claims
            if (folder / CLAIMS_FILE).exists()
            else ()
        )
        needing = {c.text for c in claims if c.verdict in NEEDS_CAUSE}
        for text in read_causes(folder):
            if (text == ANY_CLAIM and not needing) or (text != ANY_CLAIM and text not in needing):
                stale.append((folder.relative_to(root).as_posix(), text))
    return stale


def _cause(causes: Mapping[str, Mapping[str, str]], text: str) -> str:
    entry = causes.get(text, causes.get(ANY_CLAIM))
    if entry is None:
        return "no cause recorded yet"
    link = entry.get("link")
    if not link:
        return entry["cause"]
    path, anchor = link.partition("#")[::2]
    relative = posixpath.relpath(path, PAGE_FOLDER) + (f"#{anchor}" if anchor else "")
    return f"{entry['cause']} ([source]({relative}))"


def _count_row(name: str, claims: Sequence[Claim]) -> list[object]:
    counts = Counter(c.verdict for c in claims)
    return [name, *(counts[v] for v in Verdict), len(claims)]


def _by_paper(saved: Sequence[SavedClaims], papers: Sequence[str]) -> dict[str, list[SavedClaims]]:
    """The saved claims grouped by paper, ``papers`` first in their order, then the others
    alphabetically."""
    found = {s.paper for s in saved}
    order = [p for p in papers if p in found] + sorted(found - set(papers))
    return {p: [s for s in saved if s.paper == p] for p in order}


def count_table(root: str | Path, papers: Sequence[str] = ()) -> str:
    """Claims per paper and verdict of the saved reports under ``root`` (the scoreboard's
    first table, also shown in the README)."""
    saved = collect(root)
    header = ["paper", *(v.value for v in Verdict), "claims"]
    rows = [
        _count_row(p, [c for s in group for c in s.claims])
        for p, group in _by_paper(saved, papers).items()
    ]
    rows.append(_count_row("all", [c for s in saved for c in s.claims]))
    return markdown_table(header, rows)


def scoreboard(root: str | Path, papers: Sequence[str] = ()) -> str:
    """The scoreboard page of the saved reports under ``root`` (``papers``: their order;
    papers not named follow alphabetically)."""
    by_paper = _by_paper(collect(root), papers)
    lines = [
        "# Claims scoreboard",
        "",
        "Every claim of every saved report under `docs/results`, generated by "
        "`causalbandits claims --write` from the `claims.json` beside each report and the "
        f"causes in the `{CAUSES_FILE}` beside it; do not edit by hand.",
        "",
        "Verdicts: **holds** (the paper's direction beyond the project's threshold, two "
        "standard errors of the paired mean difference; or a stated property that holds), "
        "**not significant** (within the threshold; the label says which way the mean "
        "points), **contradicted** (the opposite direction beyond the threshold), **not "
        "reproduced** (a stated property that fails), **n/a** (not checkable on these "
        "results).",
        "",
        count_table(root, papers),
    ]
    for paper, group in by_paper.items():
        lines += ["", f"## {paper}"]
        for s in group:
            if not s.claims:
                continue
            causes = read_causes(Path(root) / s.experiment)
            lines += [
                "",
                f"### {s.experiment}: {s.description} ([report]({s.experiment}/report.md))",
                "",
                markdown_table(
                    ["claim", "paper", "ours", "verdict", "test", "cause"],
                    [
                        [
                            c.text,
                            c.paper or "-",
                            c.ours,
                            c.label,
                            c.test or "-",
                            _cause(causes, c.text) if c.verdict in NEEDS_CAUSE else "",
                        ]
                        for c in s.claims
                    ],
                ),
            ]
    return "\n".join(lines) + "\n"
