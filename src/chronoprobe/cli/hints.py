"""What an unknown command name was likely meant to be.

Names are lower case (``templama``), but papers spell them TempLAMA or CronQuestions, and a
released dataset is imported, not built: ``build templama`` names a command of another group.
"""

from __future__ import annotations

from typing import Any

# what a command of each group is, to name it in a hint
_NOUNS = {"build": "a builder", "import": "an importer of released data", "probe": "a view"}


def _commands(group: Any, ctx: Any) -> list[str]:
    return list(group.list_commands(ctx))


def unknown_command_hint(ctx: Any, group: Any, name: str) -> str | None:
    """Did you mean ..., for ``name`` unknown to ``group``: the command spelled alike but for
    its case, or the command of that name in another group of the same program."""
    folded = name.casefold()
    same = [c for c in _commands(group, ctx) if c.casefold() == folded]
    if same:
        return f"Did you mean {same[0]!r}? (command names are lower case)"
    root = ctx.find_root()
    if root is ctx:
        return None
    program = root.info_name or "chronoprobe"
    for other in _commands(root.command, root):
        if other == ctx.info_name:
            continue
        found = root.command.get_command(root, other)
        if found is None or not hasattr(found, "list_commands"):
            continue
        for command in _commands(found, root):
            if command.casefold() == folded:
                what = _NOUNS.get(other, f"a command of `{program} {other}`")
                return f"'{command}' is {what}: see `{program} {other} {command} --help`"
    return None
