"""The documentation site (mkdocs.yml, docs/): it builds with ``mkdocs build --strict``;
every ``causalbandits.…`` name a page writes in backticks is documented in the API
reference; the pages' Python blocks run; every built page loads in a headless Chromium with
no console error, failed request, broken link or anchor, or empty image.

A Python block is skipped with ``<!-- docs-test: skip (reason) -->`` on the line before it
(blank lines between allowed), a whole page with ``<!-- docs-test: skip-page (reason) -->``.
Set ``CAUSALBANDITS_SITE_DIR`` to build into that folder (kept, with the browser test's
screenshots under ``screenshots/``) instead of a temporary one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, is_dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: Folders of docs/ that are not hand-written pages: the saved reports and the API reference.
GENERATED = {"results", "api"}
#: Pages whose Python blocks another test runs, with that test.
TESTED_ELSEWHERE = {"adding-a-paper.md": "tests/test_docs.py runs its blocks as a package"}
SITE_DIR_ENV = "CAUSALBANDITS_SITE_DIR"
CHROMIUM = Path("/usr/bin/chromium")
NO_CHROMIUM = "no Chromium: install Debian's chromium (apt-get install chromium); .ci/run does"
#: Headless Chromium without network chatter (the network may be closed); Playwright gives
#: each launch a fresh profile (--user-data-dir) of its own.
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
BLOCK_TIMEOUT = 300
#: One screenshot per kind of page: the first of its candidates that the site has.
SCREENSHOTS = {
    "home": [""],
    "guide": ["getting-started/", "own-problem/linear-sem/", "studies/"],
    "reproduction": ["reproductions/robust-lcb/", "results/CLAIMS/"],
    "api": ["api/policies/"],
}
NAME = re.compile(r"causalbandits(?:[.:][A-Za-z_]\w*)+")
BARE = re.compile(r"(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?:\(.*\))?", re.DOTALL)
#: The packages whose ``__all__`` names a page may write bare (`RobustLCB`, `compare`).
EXPORTING = [
    "causalbandits",
    *(f"causalbandits.{layer}" for layer in ("graphs", "scm", "envs", "estimators")),
    *(f"causalbandits.{layer}" for layer in ("policies", "experiments", "studies", "data")),
]
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$")
SKIP = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<kind>skip-page|skip)\s*(?P<reason>.*?)\s*-->\s*$")

pytest.importorskip("mkdocs", reason="the docs extra is missing: pip install -e '.[docs]'")


def site_pages() -> list[Path]:
    """The hand-written pages of the site (docs/ without the reports and the API pages)."""
    return sorted(
        path for path in DOCS.rglob("*.md") if path.relative_to(DOCS).parts[0] not in GENERATED
    )


def page_id(path: Path) -> str:
    """A page's path under docs/."""
    return path.relative_to(DOCS).as_posix()


# --- the build ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Build:
    """A ``mkdocs build --strict`` of the repository's site."""

    site: Path
    returncode: int
    output: str

    def checked(self) -> Path:
        """The built site; fails the calling test when the build failed."""
        if self.returncode:
            pytest.fail("the site did not build (see test_the_site_builds_strictly)")
        return self.site


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    pytest.importorskip("mkdocstrings", reason="the docs extra is missing")
    pytest.importorskip("material", reason="the docs extra is missing")
    chosen = os.environ.get(SITE_DIR_ENV)
    site = Path(chosen).resolve() if chosen else tmp_path_factory.mktemp("site") / "site"
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    result = subprocess.run(
        command,
        cwd=ROOT,  # mkdocs.yml
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=900,
        check=False,
    )
    return Build(site, result.returncode, result.stdout + result.stderr)


def test_the_site_builds_strictly(build: Build) -> None:
    problems = [line for line in build.output.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert build.returncode == 0, "mkdocs build --strict failed:\n" + "\n".join(
        problems or build.output.splitlines()[-40:]
    )


# --- API names ------------------------------------------------------------------------------


class Ids(HTMLParser):
    """The ``id`` attributes (and ``a[name]``) of an HTML document."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if value and (key == "id" or (tag == "a" and key == "name")):
                self.ids.add(value)


def html_ids(text: str) -> set[str]:
    """The ids of the HTML ``text``."""
    parser = Ids()
    parser.feed(text)
    return parser.ids


def closes(line: str, fence: str) -> bool:
    """Whether ``line`` closes a block opened by ``fence`` (as long or longer, same mark)."""
    stripped = line.strip()
    return stripped.startswith(fence) and not stripped.strip(fence[0])


def without_fences(text: str) -> str:
    """``text`` without its fenced code blocks."""
    kept, fence = [], None
    for line in text.splitlines():
        if fence is not None:
            fence = None if closes(line, fence) else fence
        elif match := FENCE.match(line):
            fence = match.group("fence")
        else:
            kept.append(line)
    return "\n".join(kept)


def named_objects(text: str, exported: dict[str, str] | None = None) -> dict[str, str]:
    """The API objects the code spans of the Markdown ``text`` name, as written -> dotted
    path: a span starting with a ``causalbandits.…`` path (``module:attribute`` read as
    ``module.attribute``; a path may break after a dot), or a span that is a name a package
    exports (``exported``: name -> path), possibly dotted further or called
    (``Study.ask``, ``compare(...)``)."""
    names = {}
    for _, span in re.findall(r"(`+)(.+?)\1", without_fences(text), flags=re.DOTALL):
        content = re.sub(r"([.:])\s+", r"\1", span.strip())
        if match := NAME.match(content):
            names[match.group(0)] = match.group(0).replace(":", ".")
        elif exported and (match := BARE.fullmatch(content)):
            first, _, rest = match.group("name").partition(".")
            if first in exported:
                names[match.group("name")] = ".".join(filter(None, (exported[first], rest)))
    return names


def exported_names() -> dict[str, str]:
    """The names the library's packages export (``__all__``) -> their dotted paths."""
    exported = {}
    for package in EXPORTING:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", ()):
            if not name.startswith("_"):
                exported.setdefault(name, f"{package}.{name}")
    return exported


class Unresolved(Exception):
    """A dotted name that names no importable object."""


def locate(name: str) -> tuple[Any, str | None]:
    """The object the dotted ``name`` names; for an attribute that a class only declares (a
    dataclass field, an instance attribute), the class and the attribute's name."""
    parts = name.split(".")
    obj, depth = None, len(parts)
    while depth:
        module = ".".join(parts[:depth])
        try:
            obj = importlib.import_module(module)
            break
        except ModuleNotFoundError as error:
            if error.name is None or not module.startswith(error.name):
                raise Unresolved(f"{name}: importing {module} fails: {error}") from error
            depth -= 1
    if obj is None:
        raise Unresolved(f"{name}: no such module")
    for position, attribute in enumerate(parts[depth:], start=depth):
        last = position == len(parts) - 1
        if last and inspect.isclass(obj):
            fields = {f.name for f in dataclasses.fields(obj)} if is_dataclass(obj) else set()
            if attribute in fields or not hasattr(obj, attribute):
                return obj, attribute
        if not hasattr(obj, attribute):
            raise Unresolved(f"{name}: {'.'.join(parts[:position])} has no {attribute!r}")
        obj = getattr(obj, attribute)
    return obj, None


def resolve(name: str) -> tuple:
    """A key of the object ``name`` names, equal for every path to the same object: its
    identity for modules, classes, functions and other values, (class, name) for an
    attribute that the class only declares."""
    obj, declared = locate(name)
    if declared is not None:
        return ("declared", id(obj), declared)
    obj = getattr(obj, "__func__", obj)  # a bound method (a classmethod): its function
    if inspect.ismodule(obj) or inspect.isclass(obj) or inspect.isroutine(obj):
        return ("object", id(obj))
    # A value (a constant, a registry) may be re-exported: the same object under its name.
    return ("value", name.rsplit(".", 1)[-1], id(obj))


@pytest.fixture(scope="module")
def documented(build: Build) -> tuple[set[str], set[tuple]]:
    """The API reference's anchors (``causalbandits.…`` ids) and the keys of their objects;
    a documented dataclass documents its fields (its signature shows them)."""
    ids: set[str] = set()
    for page in (build.checked() / "api").rglob("*.html"):
        ids |= {i for i in html_ids(page.read_text(encoding="utf-8")) if NAME.fullmatch(i)}
    keys = set()
    for anchor in ids:
        with contextlib.suppress(Unresolved):
            keys.add(resolve(anchor))
            obj, declared = locate(anchor)
            if declared is None and inspect.isclass(obj) and is_dataclass(obj):
                keys |= {("declared", id(obj), field.name) for field in dataclasses.fields(obj)}
    return ids, keys


def test_every_api_name_on_a_page_is_in_the_api_reference(
    documented: tuple[set[str], set[tuple]],
) -> None:
    ids, keys = documented
    exported = exported_names()
    problems = []
    for page in site_pages():
        for written, path in sorted(
            named_objects(page.read_text(encoding="utf-8"), exported).items()
        ):
            if path in ids:
                continue
            where = f"{page_id(page)}: `{written}`" + ("" if written == path else f" ({path})")
            try:
                key = resolve(path)
            except Unresolved as error:
                problems.append(f"{where} does not import ({error})")
                continue
            if key not in keys:
                problems.append(f"{where} is not in the API reference (docs/api)")
    assert not problems, "\n".join(problems)


# --- the pages' Python blocks ---------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """A fenced Python block: its first line in the page, its code, its skip reason."""

    line: int
    code: str
    skip: str | None


def python_blocks(text: str) -> tuple[list[Block], str | None]:
    """The fenced ``python`` blocks of a page (dedented) with their skip reasons, and the
    page's own skip reason."""
    lines = text.splitlines()
    blocks, page_skip, pending, i = [], None, None, 0
    while i < len(lines):
        line = lines[i]
        marker = SKIP.match(line)
        if marker:
            reason = marker.group("reason").strip()
            if not re.fullmatch(r"\(.+\)", reason):
                raise ValueError(f"line {i + 1}: a docs-test marker needs a (reason): {line}")
            if marker.group("kind") == "skip-page":
                page_skip = reason[1:-1]
            else:
                pending = reason[1:-1]
            i += 1
            continue
        fence = FENCE.match(line)
        if not fence:
            if line.strip():
                pending = None  # a marker applies to the next block only
            i += 1
            continue
        indent, mark = fence.group("indent"), fence.group("fence")
        info = fence.group("info").strip()
        end = i + 1
        while end < len(lines) and not closes(lines[end], mark):
            end += 1
        if re.match(r"(python|py)\b", info):
            body = [
                row[len(indent) :] if row.startswith(indent) else row for row in lines[i + 1 : end]
            ]
            blocks.append(Block(i + 1, "\n".join(body), pending))
        pending = None
        i = end + 1
    return blocks, page_skip


def pages_with_python() -> list[Path]:
    """The site's pages with at least one Python block."""
    opening = re.compile(r"^[ \t]*(`{3,}|~{3,})\s*(python|py)\b", re.MULTILINE)
    return [page for page in site_pages() if opening.search(page.read_text(encoding="utf-8"))]


@pytest.mark.slow
@pytest.mark.parametrize("page", pages_with_python(), ids=page_id)
def test_the_python_blocks_of_a_page_run(page: Path, tmp_path: Path) -> None:
    if page.name in TESTED_ELSEWHERE:
        pytest.skip(TESTED_ELSEWHERE[page.name])
    blocks, page_skip = python_blocks(page.read_text(encoding="utf-8"))
    if page_skip:
        pytest.skip(f"marked skip-page: {page_skip}")
    running = [block for block in blocks if block.skip is None]
    if not running:
        pytest.skip("every Python block is marked skip")
    script = tmp_path / "page.py"
    script.write_text(
        "\n\n".join(f"# {page_id(page)}, line {b.line}\n{b.code}" for b in running) + "\n",
        encoding="utf-8",
    )
    try:
        result = subprocess.run(
            [sys.executable, str(script)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={**os.environ, "MPLBACKEND": "Agg"},
            timeout=BLOCK_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{page_id(page)}: its Python blocks ran over {BLOCK_TIMEOUT} s")
    assert result.returncode == 0, (
        f"{page_id(page)}: its Python blocks failed (script {script}):\n{result.stderr[-4000:]}"
    )


def test_a_skip_marker_applies_to_the_next_block_only() -> None:
    text = (
        "<!-- docs-test: skip (needs the data) -->\n\n```python\nslow()\n```\n\n"
        "Text.\n\n```python\nfast()\n```\n\n<!-- docs-test: skip (stale) -->\n\nText.\n\n"
        "```python\nalso_fast()\n```\n\n```bash\nls\n```\n"
    )
    blocks, page_skip = python_blocks(text)
    assert [(b.code, b.skip) for b in blocks] == [
        ("slow()", "needs the data"),
        ("fast()", None),
        ("also_fast()", None),
    ]
    assert page_skip is None
    with pytest.raises(ValueError, match="needs a"):
        python_blocks("<!-- docs-test: skip -->\n```python\nx\n```\n")


def test_names_are_read_from_code_spans_only() -> None:
    text = (
        "Use `causalbandits.envs.LinearSEMBandit(problem)` and `causalbandits.policies.\n"
        "bo_baselines:GPUCB`, not causalbandits.graphs.chain.\n\n"
        "```python\nimport causalbandits.scm\n```\n"
    )
    exported = {
        "Study": "causalbandits.studies.Study",
        "compare": "causalbandits.experiments.compare",
    }
    text += "`Study.ask`, `compare(specs)`, `Study (x)`, `study`, `compare == 1`.\n"
    assert named_objects(text, exported) == {
        "causalbandits.envs.LinearSEMBandit": "causalbandits.envs.LinearSEMBandit",
        "causalbandits.policies.bo_baselines:GPUCB": "causalbandits.policies.bo_baselines.GPUCB",
        "Study.ask": "causalbandits.studies.Study.ask",
        "compare": "causalbandits.experiments.compare",
    }


# --- the browser ----------------------------------------------------------------------------


def free_port() -> int:
    """A localhost port that is free now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def served(site: Path) -> Iterator[str]:
    """``site`` served by ``python -m http.server`` on a free localhost port: its base URL."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=site,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"http.server did not start on port {port}")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.terminate()
        server.wait(timeout=30)


class Targets:
    """Link targets fetched once each: their HTTP status and, for HTML, their ids."""

    def __init__(self) -> None:
        self.seen: dict[str, tuple[int, set[str] | None]] = {}

    def get(self, url: str) -> tuple[int, set[str] | None]:
        """The status of ``url`` and its ids (``None`` when it is not HTML)."""
        if url not in self.seen:
            try:
                with urllib.request.urlopen(url, timeout=30) as response:
                    body = response.read()
                    html = "html" in response.headers.get("Content-Type", "")
                    ids = html_ids(body.decode("utf-8", "replace")) if html else None
                    self.seen[url] = (response.status, ids)
            except urllib.error.HTTPError as error:
                self.seen[url] = (error.code, None)
        return self.seen[url]


#: The page's images and figures that render empty or with no size (hidden ones excepted).
EMPTY_IMAGES = """
async () => {
  const images = Array.from(document.images);
  await Promise.all(images.map((image) => {
    image.loading = "eager";
    return image.decode().catch(() => null);
  }));
  const problems = [];
  for (const element of [...images, ...document.querySelectorAll("figure")]) {
    const box = element.getBoundingClientRect();
    const shown = element.getClientRects().length > 0;
    const name = element.currentSrc || element.src || element.outerHTML.slice(0, 120);
    if (element.tagName === "IMG" && (!element.complete || element.naturalWidth === 0)) {
      problems.push(`image renders empty: ${name}`);
    } else if (shown && (box.width === 0 || box.height === 0)) {
      problems.push(`${element.tagName.toLowerCase()} of zero size: ${name}`);
    }
  }
  return problems;
}
"""


def built_pages(site: Path) -> list[str]:
    """The site's pages as paths relative to its root (``""`` for the home page)."""
    pages = []
    for index in sorted(site.rglob("index.html")):
        relative = index.parent.relative_to(site)
        if relative.parts[:1] != ("screenshots",):
            pages.append("" if relative == Path(".") else relative.as_posix() + "/")
    return pages


def check_links(hrefs: list[str], base: str, targets: Targets) -> list[str]:
    """The broken same-origin links of a page: a target that does not answer 200 or lacks
    the anchor."""
    problems = []
    for href in sorted(set(hrefs)):
        if not href.startswith(base):
            continue
        target, anchor = urldefrag(href)
        status, ids = targets.get(target)
        if status != 200:
            problems.append(f"link to {href}: HTTP {status}")
        elif anchor and ids is not None and unquote(anchor) not in ids:
            problems.append(f"link to {href}: no anchor #{unquote(anchor)} in {target}")
    return problems


def test_every_page_loads_in_a_browser(build: Build) -> None:
    site = build.checked()
    if not CHROMIUM.exists():
        pytest.skip(NO_CHROMIUM)
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is missing")
    pages = built_pages(site)
    shots = site / "screenshots"
    shots.mkdir(exist_ok=True)
    wanted = {
        next(c for c in candidates if c in pages): kind
        for kind, candidates in SCREENSHOTS.items()
        if any(c in pages for c in candidates)
    }
    problems: list[str] = []
    with served(site) as base, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS
        )
        try:
            tab = browser.new_page(viewport={"width": 1280, "height": 900})
            events: list[str] = []
            tab.on(
                "console",
                lambda m: (
                    events.append(f"console {m.type}: {m.text}") if m.type == "error" else None
                ),
            )
            tab.on("pageerror", lambda error: events.append(f"script error: {error}"))
            tab.on(
                "requestfailed",
                lambda r: (
                    None
                    if "ERR_ABORTED" in (r.failure or "")  # cut short by the next navigation
                    else events.append(f"failed request: {r.url} ({r.failure})")
                ),
            )
            tab.on(
                "response",
                lambda r: events.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None,
            )
            targets = Targets()
            for relative in pages:
                url = base + relative
                events.clear()
                response = tab.goto(url, wait_until="load", timeout=60_000)
                found = (
                    []
                    if response and response.status == 200
                    else [f"HTTP {response.status if response else 'no response'}"]
                )
                found += tab.evaluate(EMPTY_IMAGES)
                hrefs = tab.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
                found += check_links(hrefs, base, targets)
                found += events
                problems += [f"/{relative}: {problem}" for problem in found]
                if relative in wanted:
                    tab.screenshot(path=str(shots / f"{wanted[relative]}.png"))
        finally:
            browser.close()
    assert not problems, f"{len(problems)} problems on {len(pages)} pages:\n" + "\n".join(problems)
