"""What chronoprobe wrote, and only that: markers, temporaries of its own, checked replacement.

Researchers point chronoprobe at folders of results they cannot make again, so nothing here
trusts a name alone. A folder chronoprobe writes (a run directory, a command's ``--out``)
carries a marker file only chronoprobe writes; its temporaries live in a folder of its own
(:data:`TMP_DIR`) and nowhere else; and before a folder of outputs is replaced, every entry in
it is checked against the files chronoprobe recorded there: a file a user added, a link, or an
output edited since it was written stops the command instead of being deleted with the rest.
Nothing here follows a symbolic link it did not make.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import secrets
import shutil
import stat
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from chronoprobe.atomic import atomic_write_text
from chronoprobe.errors import UserError
from chronoprobe.inputs import file_identity
from chronoprobe.steps import STEP_RECORD, read_step_record
from chronoprobe.version import __version__

TMP_DIR = ".chronoprobe-tmp"
KEPT = "kept-"  # in the temporaries: earlier outputs a failed replacement could not put back
MARKER_FORMAT = 1  # raised when a marker's meaning changes; a newer one is refused
_MARKER_BYTES = 1 << 20  # a marker is a few lines; anything larger is not one of ours
_CHUNK = 1 << 20
SHOWN = 5  # names listed in a message before "and N more"


def lstat_kind(path: Path) -> str | None:
    """``"dir"``, ``"file"``, ``"link"`` or ``"other"`` for what is at ``path`` itself (a
    link is not followed); None when nothing is there."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except NotADirectoryError:  # a parent is a file: nothing can be here
        return None
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


def describe(kind: str) -> str:
    return {"link": "a symbolic link", "dir": "a folder", "file": "a file"}.get(
        kind, "not a regular file (a device, socket or pipe)"
    )


def listing(names: list[str]) -> str:
    """``a, b, c and 4 more``."""
    shown = ", ".join(names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def read_marker(path: Path) -> dict[str, Any] | None:
    """The record in a marker file; None when there is none. A file of that name that is not
    a marker chronoprobe could have written (a link, a folder, not JSON, a newer format)
    refuses the folder: it is the one thing a folder is recognised by."""
    kind = lstat_kind(path)
    if kind is None:
        return None
    if kind != "file":
        raise UserError(f"{path}: {describe(kind)}, not the marker chronoprobe writes there")
    if path.stat().st_size > _MARKER_BYTES:
        raise UserError(f"{path}: too large to be the marker chronoprobe writes")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise UserError(
            f"{path}: damaged marker ({err}); chronoprobe cannot tell what it wrote"
        ) from None
    if not isinstance(data, dict) or type(data.get("format")) is not int:
        raise UserError(
            f"{path}: damaged marker (no format); chronoprobe cannot tell what it wrote"
        )
    if data["format"] > MARKER_FORMAT:
        raise UserError(
            f"{path}: written by a newer chronoprobe ({data.get('chronoprobe', 'unknown')}, "
            f"format {data['format']}); this one ({__version__}) reads format {MARKER_FORMAT}: "
            "upgrade chronoprobe, or pass another folder"
        )
    return data


def write_marker(path: Path, record: dict[str, Any]) -> None:
    data = {"format": MARKER_FORMAT, "chronoprobe": __version__, **record}
    atomic_write_text(path, json.dumps(data, indent=2) + "\n", own_tmp(path.parent))


def own_tmp(folder: Path) -> Path:
    """``folder/.chronoprobe-tmp``, a real folder: a link of that name is removed (the link
    only, never what it points to) so that nothing is written through it."""
    tmp = folder / TMP_DIR
    kind = lstat_kind(tmp)
    if kind == "link":
        tmp.unlink()
    elif kind not in (None, "dir"):
        raise UserError(
            f"{tmp}: {describe(kind)}; chronoprobe keeps its temporary files in a folder of "
            "that name: move it away"
        )
    tmp.mkdir(exist_ok=True)
    return tmp


def fresh_dir(tmp: Path, tag: str) -> Path:
    folder = tmp / f"{tag}-{secrets.token_hex(6)}"
    folder.mkdir()
    return folder


@contextmanager
def staging_folder(folder: Path) -> Iterator[Path]:
    """An empty folder in ``folder``'s own temporaries, to build outputs in before they are
    moved into ``folder``; deleted after the block (if anything is left of it)."""
    staged = fresh_dir(own_tmp(folder), "new")
    try:
        yield staged
    finally:
        shutil.rmtree(staged, ignore_errors=True)  # gone already once installed


@contextmanager
def locked_folder(folder: Path, busy: str) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` for the block; ``ValueError(busy)`` at once when
    another process holds it."""
    handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(busy) from None
        yield
    finally:
        os.close(handle)


def clear_tmp(folder: Path) -> None:
    """Delete ``folder/.chronoprobe-tmp``: everything in it was made by chronoprobe, but for
    earlier outputs a failed replacement could not put back (``kept-...``), left to the user."""
    tmp = folder / TMP_DIR
    kind = lstat_kind(tmp)
    if kind == "link":
        tmp.unlink()
    elif kind == "dir":
        kept = [entry for entry in os.listdir(tmp) if entry.startswith(KEPT)]
        if not kept:
            shutil.rmtree(tmp, ignore_errors=True)
            return
        for entry in set(os.listdir(tmp)) - set(kept):
            path = tmp / entry
            if lstat_kind(path) == "dir":
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def tmp_problem(folder: Path) -> str | None:
    kind = lstat_kind(folder / TMP_DIR)
    if kind in (None, "dir", "link"):
        return None
    return f"{folder / TMP_DIR} is {describe(kind)}, where chronoprobe keeps its temporary files"


def walk_files(folder: Path) -> list[str]:
    """Relative paths of the regular files under ``folder``, links not followed."""
    out = []
    for root, dirs, files in os.walk(folder):
        base = Path(root).relative_to(folder)
        for name in files:
            if lstat_kind(Path(root) / name) == "file":
                out.append((base / name).as_posix())
        dirs.sort()
    return sorted(out)


def foreign_entries(folder: Path, listed: Iterable[str], skip: Iterable[str] = ()) -> list[str]:
    """Entries under ``folder`` that chronoprobe did not write: anything but a regular file
    named in ``listed`` (a user's file, a link, a pipe), and folders holding only such.
    Top-level names in ``skip`` are not looked at. Links are never followed."""
    listed, skip = set(listed), set(skip)
    foreign = []
    for root, dirs, files in os.walk(folder):
        base = Path(root).relative_to(folder)
        for name in sorted(files + dirs):
            relative = (base / name).as_posix()
            if base == Path(".") and name in skip:
                continue
            kind = lstat_kind(Path(root) / name)
            if kind == "dir":
                continue
            if kind != "file" or relative not in listed:
                foreign.append(relative + ("" if kind == "file" else f" ({describe(kind)})"))
        dirs[:] = sorted(d for d in dirs if not (base == Path(".") and d in skip))
    return foreign


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def copy_hashed(source: Path, target: Path) -> str:
    """Copy ``source`` to a new file ``target`` and return the sha256 of what was copied:
    one read serves both, so serving a cache entry verified costs no more than copying it."""
    digest = hashlib.sha256()
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(source, "rb") as src, open(target, "xb") as dst:
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
            dst.write(chunk)
    return digest.hexdigest()


def file_record(path: Path, sha256: str | None = None) -> dict[str, Any]:
    """What a step record keeps of one output file to tell later whether it was changed."""
    info = path.stat()
    return {
        "sha256": sha256 or sha256_of(path),
        "bytes": info.st_size,
        "mtime_ns": info.st_mtime_ns,
    }


def changed_files(folder: Path, files: dict[str, Any], missing_ok: bool = False) -> list[str]:
    """The recorded files of ``folder`` that differ from their record, or are missing (unless
    ``missing_ok``: a deleted output holds nothing to lose). A file of at most
    :data:`~chronoprobe.inputs.CONTENT_LIMIT` is compared by its content (hashed
    once per process), whatever its times say. A larger one counts as unchanged when its size
    and modification time are the record's and its inode did not change after the step record
    was written (an edit whose old time was put back, ``touch -r``, ``cp -p``, moves the
    change time); otherwise it is hashed too (a file only touched is not changed)."""
    record_time = _ctime(folder / STEP_RECORD)
    changed = []
    for name, record in sorted(files.items()):
        path = folder / name
        kind = lstat_kind(path)
        if kind is None and missing_ok:
            continue
        try:
            if kind != "file":
                changed.append(name)
                continue
            info = path.stat()
            if info.st_size != record.get("bytes"):
                changed.append(name)
                continue
            identity = file_identity(path)  # by content, or (a large file) by stat
            if identity[0] == "sha256":
                if identity[1] != record.get("sha256"):
                    changed.append(name)
                continue
            trusted = info.st_mtime_ns == record.get("mtime_ns") and (
                record_time is not None and info.st_ctime_ns <= record_time + _SETTLE_NS
            )
            if not trusted and sha256_of(path) != record.get("sha256"):
                changed.append(name)
        except (AttributeError, OSError, ValueError):
            changed.append(name)
    return changed


def keep_unchanged(folder: Path, staged: Path, tmp: Path) -> bool:
    """When ``folder`` holds, unchanged, exactly the outputs staged in ``staged`` (the same
    names with the same digests in both step records), put only the staged step record in
    place (written through ``tmp``, a folder of chronoprobe's own beside it), and return True:
    the outputs keep their bytes, times and inodes, so whatever is keyed on them (a command
    given one as its input) finds them as they were. Otherwise nothing is done and the
    caller replaces the folder."""
    earlier, now = read_step_record(folder), read_step_record(staged)
    if lstat_kind(folder) != "dir" or earlier is None or now is None:
        return False
    names = now["outputs"]
    old, new = earlier.get("files", {}), now.get("files", {})
    if sorted(earlier["outputs"]) != sorted(names):
        return False
    for name in names:
        a, b = old.get(name), new.get(name)
        if not (isinstance(a, dict) and isinstance(b, dict)):
            return False
        if a.get("sha256") != b.get("sha256") or a.get("bytes") != b.get("bytes"):
            return False
    if changed_files(folder, {name: old[name] for name in names}):
        return False
    files = {name: file_record(folder / name, new[name]["sha256"]) for name in names}
    atomic_write_text(
        folder / STEP_RECORD, json.dumps({**now, "files": files}, indent=2) + "\n", tmp
    )
    return True


_SETTLE_NS = 5 * 10**9  # outputs are moved into place within moments of their record


def _ctime(path: Path) -> int | None:
    try:
        return path.stat().st_ctime_ns
    except OSError:
        return None


def install_outputs(staged: Path, target: Path, tmp: Path) -> None:
    """Make ``staged`` (a step's outputs and record) the folder ``target`` (checked by the
    caller): only the record is written when the outputs are those already there
    (:func:`keep_unchanged`), else the folder is replaced (:func:`replace_folder`)."""
    if not keep_unchanged(target, staged, tmp):
        replace_folder(staged, target, tmp)


def replace_folder(staged: Path, target: Path, tmp: Path) -> None:
    """Put ``staged`` at ``target`` by renames; the old ``target`` (a real folder, checked by
    the caller) is moved into ``tmp`` first and deleted there, so a kill at any moment leaves
    either folder whole at ``target``, or none, never a half-deleted one; a rename that fails
    puts the old folder back (see :func:`rename_all`)."""
    if lstat_kind(target) is None:
        os.replace(staged, target)
        return
    old = tmp / f"old-{secrets.token_hex(6)}"
    rename_all([(target, old), (staged, target)], old)
    shutil.rmtree(old, ignore_errors=True)


def rename_all(moves: Sequence[tuple[Path, Path]], old: Path) -> None:
    """Rename each (source, target) in order, the earlier outputs into ``old`` (a folder in
    the temporaries) and the new ones into place. When one fails, the renames done are undone,
    last first, before the error is raised: the earlier outputs stay where they were. Should an
    undo fail too, ``old`` is kept (renamed ``kept-...``, which temporaries are never cleared
    of) and the error says where."""
    done: list[tuple[Path, Path]] = []
    try:
        for source, target in moves:
            os.replace(source, target)
            done.append((source, target))
    except OSError as err:
        stuck = False
        for source, target in reversed(done):
            try:
                os.replace(target, source)
            except OSError:
                stuck = True
        if stuck:
            kept = old.with_name(f"{KEPT}{old.name}")
            os.replace(old, kept)
            what = f"the earlier outputs that could not be put back are in {kept}"
        else:
            what = "nothing was replaced: the earlier outputs are as they were"
        raise OSError(
            err.errno, f"{err.strerror}; {what}", err.filename, None, err.filename2
        ) from err


def remove_folder(folder: Path, tmp: Path) -> None:
    """Delete a folder chronoprobe made (checked by the caller): renamed into ``tmp`` first,
    so a kill leaves it whole or gone, and deleted there."""
    gone = tmp / f"gone-{secrets.token_hex(6)}"
    os.replace(folder, gone)
    shutil.rmtree(gone, ignore_errors=True)
