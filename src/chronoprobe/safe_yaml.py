"""YAML a user hands over (experiment configs, ``--set`` values, templates, SPARQL mappings),
read with bounds, so that a few bytes cannot hang or crash the reader.

PyYAML's safe loader runs no code, but three shapes still hurt it: an alias inside the
collection it names (``a: &a [*a]``) makes a value that holds itself, which anything walking it
follows forever; nesting thousands of levels deep (``[[[[...``) exhausts Python's stack; and
aliases of aliases (the "billion laughs") let a few hundred bytes stand for billions of
values. All three are refused while the document is composed, before any value is built, as a
:class:`yaml.YAMLError` whose mark gives the line, so every caller reports them as it reports a
syntax error: one line naming the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError

from chronoprobe.errors import UserError

# Deeper than any config, template or mapping is written by hand, far below Python's stack.
MAX_DEPTH = 64
# Values a document may hold once every alias is expanded. Templates and mappings hold a few
# thousand; a config a few hundred (its reader asks for a lower bound).
MAX_NODES = 1_000_000
# Characters of its scalars, aliases expanded: one long string named a million times is as
# much to write back out (a run's resolved config.yaml) as a million strings.
MAX_CHARACTERS = 64 << 20


class Refused(ComposerError):
    """A document valid as YAML but beyond the bounds above."""


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader, refusing recursive aliases and deep nesting while it composes."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._open: list[str | None] = []  # the anchors of the collections being composed

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) and event.anchor in self._open:
            raise Refused(
                None,
                None,
                f"the alias *{event.anchor} refers to a collection that holds it (a recursive "
                "alias, which stands for an endless value)",
                event.start_mark,
            )
        if not isinstance(event, yaml.CollectionStartEvent):
            return super().compose_node(parent, index)
        if len(self._open) >= MAX_DEPTH:
            raise Refused(None, None, f"nested more than {MAX_DEPTH} levels deep", event.start_mark)
        self._open.append(event.anchor)
        try:
            return super().compose_node(parent, index)
        finally:
            self._open.pop()


def expanded_size(root: yaml.Node, limit: int) -> tuple[int, int]:
    """How many nodes and scalar characters ``root`` holds with every alias expanded (each at
    most ``limit + 1`` and :data:`MAX_CHARACTERS` ``+ 1``), counted without expanding: an alias is
    the same node object as its anchor, so sizes are memoised per node. ``root`` must hold no
    recursive alias (:func:`compose` refuses those)."""
    sizes: dict[int, tuple[int, int]] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            sizes[id(node)] = (1, min(len(node.value), MAX_CHARACTERS + 1))
            continue
        if children_done or not children:
            nodes = 1 + sum(sizes[id(c)][0] for c in children)
            chars = sum(sizes[id(c)][1] for c in children)
            sizes[id(node)] = (min(nodes, limit + 1), min(chars, MAX_CHARACTERS + 1))
        else:
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes[id(root)]


def compose(text: str, max_nodes: int = MAX_NODES) -> yaml.Node | None:
    """The node tree of a YAML document (None when empty); :class:`yaml.YAMLError` for bad
    YAML, a recursive alias, nesting past :data:`MAX_DEPTH`, or more than ``max_nodes`` values
    or :data:`MAX_CHARACTERS` characters once aliases are expanded."""
    loader = _BoundedLoader(text)
    try:
        root = loader.get_single_node()
    finally:
        loader.dispose()
    if root is None:
        return None
    nodes, characters = expanded_size(root, max_nodes)
    if nodes > max_nodes or characters > MAX_CHARACTERS:
        what = f"{max_nodes:,} values" if nodes > max_nodes else f"{MAX_CHARACTERS:,} characters"
        raise Refused(
            None,
            None,
            f"the document expands to more than {what} once its aliases (*name) are "
            "resolved; refusing to read it",
            root.start_mark,
        )
    return root


def construct(root: yaml.Node | None) -> Any:
    """The Python value of a tree :func:`compose` gave (plain dicts, lists and scalars)."""
    if root is None:
        return None
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_document(root)
    finally:
        loader.dispose()


def load(text: str, max_nodes: int = MAX_NODES) -> Any:
    """``yaml.safe_load`` within the bounds above."""
    return construct(compose(text, max_nodes))


def problem_of(err: yaml.YAMLError) -> tuple[int | None, str]:
    """(line, reason) of a YAML error, for a one-line message; the line is None when unknown.
    A syntax error's reason starts "invalid YAML"; a document refused for its size does not."""
    mark = getattr(err, "problem_mark", None)
    reason = getattr(err, "problem", None) or str(err).splitlines()[0]
    context, where = getattr(err, "context", None), getattr(err, "context_mark", None)
    if context:  # "found duplicate anchor 'a'; first occurrence" + "second occurrence"
        reason = f"{context}{f' (line {where.line + 1})' if where else ''}, {reason}"
    if not isinstance(err, Refused):
        reason = f"invalid YAML: {reason}"
    return (mark.line + 1 if mark is not None else None), reason


def load_file(path: str | Path, max_nodes: int = MAX_NODES) -> Any:
    """A user's YAML file, bounded; ValueError ``FILE:LINE: reason`` for a file that is not
    UTF-8 or not valid YAML."""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{path}: a folder, not a YAML file")
    try:
        return load(path.read_text(encoding="utf-8"), max_nodes)
    except UnicodeDecodeError as err:
        raise UserError(f"{path}: not UTF-8 text (byte {err.start}): {err.reason}") from None
    except yaml.YAMLError as err:
        line, reason = problem_of(err)
        where = f"{path}:{line}" if line is not None else str(path)
        raise UserError(f"{where}: {reason}") from None
