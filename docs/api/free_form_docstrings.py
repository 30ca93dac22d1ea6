"""A Griffe extension for the API reference (mkdocs.yml loads it): the library's docstrings
are free-form reST-flavoured text; two habits of theirs render badly as Markdown read by the
numpy docstring parser, and this rewrites them before parsing.

- A ``Parameters`` or ``Attributes`` section (the title underlined with dashes) lists
  ``name: description`` on one line, which the numpy parser reads as a name and a type,
  losing the description's first line: it becomes ``name`` with the description indented
  below. Prose after the section (past a blank line) would be read as more entries: it is
  moved above the section.
- Sphinx roles (``:class:`~a.b.C```, ``:func:`f```) render as literal text: they become code
  spans (``C``, ``f``), the ``~`` form keeping the last component only.

Two Sphinx conventions Griffe does not know are applied as well: ``#:`` comments above an
assignment (or after it, on its line) document the attribute, and a method without a
docstring takes the one of the method it overrides.
"""

from __future__ import annotations

import ast
import contextlib
import re
from typing import Any

import griffe

SECTIONS = ("Parameters", "Attributes")
ENTRY = re.compile(r"^(\*{0,2}[A-Za-z_]\w*(?:, \*{0,2}[A-Za-z_]\w*)*):(?:\s+(.*))?$")
ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|data|mod|exc|obj|const):`(~?)([^`]+)`")


def role_as_code(match: re.Match[str]) -> str:
    """A Sphinx cross-reference as a code span (``~``: the last dotted component only)."""
    target = re.sub(r"\s+", "", match.group(2))  # a role may break across lines
    return f"`{target.rsplit('.', 1)[-1] if match.group(1) else target}`"


def is_underline(line: str) -> bool:
    """Whether ``line`` underlines a numpy section title."""
    stripped = line.strip()
    return len(stripped) >= 3 and set(stripped) == {"-"}


def normalise(text: str) -> str:
    """The docstring ``text`` with its free-form sections in numpy form and its roles as
    code spans."""
    lines = ROLE.sub(role_as_code, text).split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        titled = i + 1 < len(lines) and is_underline(lines[i + 1])
        if not (titled and line.strip() in SECTIONS and not line.startswith(" ")):
            out.append(line)
            i += 1
            continue
        section = [line, lines[i + 1]]
        i += 2
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                following = next((rest for rest in lines[i + 1 :] if rest.strip()), None)
                if following is None or following.startswith(" ") or ENTRY.match(following):
                    section.append(line)
                    i += 1
                    continue
                break  # prose after the section
            if i + 1 < len(lines) and is_underline(lines[i + 1]) and not line.startswith(" "):
                break  # the next section
            entry = ENTRY.match(line)
            if entry:
                section.append(entry.group(1))
                if entry.group(2):
                    section.append("    " + entry.group(2))
            else:
                section.append(line)
            i += 1
        rest: list[str] = []
        while i < len(lines) and not (
            i + 1 < len(lines) and is_underline(lines[i + 1]) and not lines[i].startswith(" ")
        ):
            rest.append(lines[i])
            i += 1
        # Prose after the section goes above it, as part of the description.
        while rest and not rest[-1].strip():
            rest.pop()
        while rest and not rest[0].strip():
            rest.pop(0)
        if rest:
            out.extend([*rest, ""])
        while section and not section[-1].strip():
            section.pop()
        out.extend([*section, ""])
    return "\n".join(out).rstrip("\n")


def comment_docstring(lines: list[str], lineno: int) -> str | None:
    """The ``#:`` comment documenting the assignment on line ``lineno`` (1-based): the
    comment lines right above it, else a ``#:`` comment ending its line."""
    above, i = [], lineno - 2
    while i >= 0 and lines[i].strip().startswith("#:"):
        above.insert(0, lines[i].strip()[2:].strip())
        i -= 1
    if above:
        return "\n".join(above)
    _, inline, text = lines[lineno - 1].partition("  #: ")
    return text.strip() if inline else None


class FreeFormDocstrings(griffe.Extension):
    """Rewrites every docstring with :func:`normalise` once the object tree is built, after
    reading ``#:`` comments as docstrings; then methods without one inherit theirs."""

    def on_attribute_instance(
        self,
        *,
        node: ast.AST | griffe.ObjectNode,
        attr: griffe.Attribute,
        agent: Any,
        **kwargs: Any,
    ) -> None:
        """A ``#:`` comment as the docstring of an attribute that has none."""
        if attr.docstring is not None or not isinstance(node, ast.AST) or not attr.lineno:
            return
        text = comment_docstring(agent.code.split("\n"), attr.lineno)
        if text:
            attr.docstring = griffe.Docstring(text, lineno=attr.lineno, parent=attr)

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Normalise ``obj``'s docstring (parsed lazily, after this)."""
        if obj.docstring is not None:
            obj.docstring.value = normalise(obj.docstring.value)

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Give each method without a docstring the docstring of the one it overrides."""
        for cls in classes(pkg):
            with contextlib.suppress(Exception):  # a base that does not resolve: no MRO
                bases = cls.mro()
                for name, member in cls.members.items():
                    if member.is_alias or not member.is_function or member.docstring is not None:
                        continue
                    for base in bases:
                        found = base.members.get(name)
                        if found is not None and not found.is_alias and found.docstring:
                            member.docstring = griffe.Docstring(
                                found.docstring.value, lineno=member.lineno, parent=member
                            )
                            break


def classes(obj: griffe.Object) -> list[griffe.Class]:
    """Every class defined in ``obj`` (a module or a class), recursively."""
    found = []
    for member in obj.members.values():
        if member.is_alias:
            continue
        if member.is_class:
            found.append(member)
        if member.is_class or member.is_module:
            found.extend(classes(member))
    return found
