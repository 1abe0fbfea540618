"""What an unknown command name was likely meant to be.

Names are lower case (``templama``), but papers spell them TempLAMA or CronQuestions, and a
released dataset is imported, not built: ``build templama`` names a command of another group.
A name close to a known one ("templam") gets the nearest, case aside.
"""

from __future__ import annotations

import difflib
from typing import Any

# what a command of each group is, to name it in a hint
_NOUNS = {"build": "a builder", "import": "an importer of released data", "probe": "a view"}
CLOSE = 0.75  # how alike a name must be to a command's to be suggested (difflib's ratio)


def _commands(group: Any, ctx: Any) -> list[str]:
    return list(group.list_commands(ctx))


def _nearest(name: str, known: list[str]) -> str | None:
    """The command of ``known`` closest to ``name`` with case folded, or None."""
    folded = {k.casefold(): k for k in known}
    close = difflib.get_close_matches(name.casefold(), list(folded), n=1, cutoff=CLOSE)
    return folded[close[0]] if close else None


def _usage(program: str, group: str, command: Any, root: Any) -> str:
    """``chronoprobe import templama PATHS... -o OUT``: the command with its arguments (as its
    usage line names them) and where it writes, as a user would start typing it."""
    ctx = type(root)(command, info_name=command.name, parent=root)
    pieces = [p for p in command.collect_usage_pieces(ctx) if p != command.options_metavar]
    words = [program, group, command.name, *pieces]
    if any(p.name == "out" for p in command.params):
        words += ["-o", "OUT"]
    return " ".join(words)


def unknown_command_hint(ctx: Any, group: Any, name: str) -> str | None:
    """Did you mean ..., for ``name`` unknown to ``group``: the command spelled alike but for
    its case, the command of that name in another group of the same program, else the
    nearest name in this group or another."""
    known = _commands(group, ctx)
    same = [c for c in known if c.casefold() == name.casefold()]
    if same:
        return f"Did you mean {same[0]!r}? (command names are lower case)"
    root = ctx.find_root()
    others = _other_groups(root, ctx) if root is not ctx else []
    program = root.info_name or "chronoprobe"
    for exact in (True, False):
        if not exact and (near := _nearest(name, known)):
            return f"Did you mean {near!r}?"
        for other, found in others:
            commands = _commands(found, root)
            match = next((c for c in commands if c.casefold() == name.casefold()), None)
            match = match if exact else _nearest(name, commands)
            if match is not None:
                what = _NOUNS.get(other, f"a command of `{program} {other}`")
                command = found.get_command(root, match)
                usage = _usage(program, other, command, root)
                return f"{match!r} is {what}: {usage}; its --help says more"
    return None


def _other_groups(root: Any, ctx: Any) -> list[tuple[str, Any]]:
    """The command groups of the program other than ``ctx``'s, by name."""
    out = []
    for other in _commands(root.command, root):
        found = root.command.get_command(root, other)
        if other != ctx.info_name and found is not None and hasattr(found, "list_commands"):
            out.append((other, found))
    return out
