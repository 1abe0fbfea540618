"""The shared step cache: one directory per finished step, named by the hash of what made it.

``<cache>/<kind>/<key>/`` appears only by renaming a finished work directory
(``<key>.partial/``) into place, so an entry either exists whole or not at all. A killed step
leaves its work directory behind, and with it the shards it finished, for the next attempt.

Entries are never shared with run directories or ``--out`` folders: those get copies, so an
edit to an output cannot reach the cache. An entry's files are made read-only, and its
``step.json`` records each file's sha256; serving an entry copies it and checks every file
against that record while copying, so an entry changed in place (by hand, or through a hard
link an older chronoprobe made into a run directory) is found out, dropped and computed again.

The cache serves only what it computed itself. Digests in a ``step.json`` prove nothing (whoever
wrote the folder wrote them too), so each entry's record is signed with a secret of the cache's
own: an HMAC-SHA256 under the key in ``<cache>/.chronoprobe-key`` (32 random bytes, made on first
use, readable by its owner only), kept in ``<cache>/.chronoprobe-index/<kind>/<key>``, outside
the entry. An entry without a MAC that verifies (forged, copied from another cache, written
before entries were signed, its MAC lost, the key replaced) is never served: it is computed
again, and the log says so in one line. An unfinished work directory is signed the same way
(bound to its inode), so the shards of an attempt this cache did not make are never resumed.
A cache folder that other users can write is refused (see :meth:`StepCache.check`).
"""

from __future__ import annotations

import fcntl
import grp
import hashlib
import hmac
import json
import os
import pwd
import secrets
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from chronoprobe.atomic import atomic_write_text
from chronoprobe.errors import UserError
from chronoprobe.runs.ownership import copy_hashed, file_record, lstat_kind, sha256_of, walk_files
from chronoprobe.step_context import SHARDS_DIR
from chronoprobe.steps import STEP_RECORD
from chronoprobe.version import __version__


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def step_key(
    kind: str,
    params: Any,
    inputs: dict[str, str],
    seed: int,
    fingerprint: Any = None,
    plugins: dict[str, str | None] | None = None,
) -> str:
    """The cache key: the kind, its params, the keys of its inputs, the seed and our version,
    and ``plugins``, the digest of each plugin module loaded (by name,
    :func:`chronoprobe.registry.loaded_plugins`): a plugin's code makes a step's output as
    much as chronoprobe's does, so an edited plugin must not be served its old results.
    Without plugins the payload is what it always was, so existing entries stay valid."""
    payload = {
        "kind": kind,
        "params": params,
        "inputs": inputs,
        "seed": seed,
        "fingerprint": fingerprint,
        "chronoprobe": __version__,
    }
    if plugins:
        payload["plugins"] = plugins
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


KEY_FILE = ".chronoprobe-key"  # the cache's secret, in its root
INDEX_DIR = ".chronoprobe-index"  # the MAC of each entry: <kind>/<key>, and <kind>/<key>.partial
_KEY_BYTES = 32
_MAC_BYTES = 256  # a MAC file holds 64 hex digits; anything larger is not one
_RECORD_BYTES = 64 << 20  # a step.json is kilobytes
_ENTRY_MAC = b"chronoprobe step cache entry 1"
_WORK_MAC = b"chronoprobe step cache work 1"


def _is_leftover(path: Path) -> bool:
    """A temporary file of :func:`chronoprobe.atomic.atomic_path` orphaned by a kill."""
    return path.name.startswith(".") and path.name.endswith(".tmp")


def temp_beside(target: Path, tag: str) -> Path:
    return target.with_name(f".{target.name}.{tag}-{secrets.token_hex(4)}.tmp")


def _remove(path: Path) -> None:
    """Delete what is at ``path``: a folder with what it holds, a file or a link (the link
    only, never what it points to)."""
    if lstat_kind(path) == "dir":
        shutil.rmtree(path)
    elif lstat_kind(path) is not None:
        path.unlink()


def replace_dir(source: Path, target: Path) -> None:
    """Rename ``source`` to ``target``, never leaving ``target`` half-deleted (a link at
    ``target`` is removed, never followed)."""
    for stale in target.parent.glob(f".{target.name}.old-*.tmp"):  # an earlier kill's
        _remove(stale)
    old = None
    if lstat_kind(target) is not None:
        old = temp_beside(target, "old")
        os.replace(target, old)
    os.replace(source, target)
    if old is not None:
        _remove(old)


def clean_leftovers(directory: Path) -> None:
    """Remove temporary files and directories that a killed process left in ``directory``."""
    for path in list(directory.iterdir()):
        if _is_leftover(path):
            _remove(path)


def _read_small(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at ``path`` (a link is not followed, a pipe not waited
    on), at most ``limit`` of them; OSError or ValueError otherwise."""
    handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with open(handle, "rb") as stream:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise UserError("not a regular file")
        if info.st_size > limit:
            raise UserError(f"larger than {limit:,} bytes")
        return stream.read(limit + 1)


def _others_can_write(info: os.stat_result, me: int) -> str | None:
    """Who besides ``me`` (and root) can change what is in the folder of ``info``: its owner
    when that is another user, every user when it is world-writable, the members of its group
    when it is group-writable and the group is not the user's own private one."""
    if info.st_uid not in (me, 0):
        return f"owned by another user (uid {info.st_uid})"
    if info.st_mode & stat.S_IWOTH:
        return f"writable by every user (mode {stat.S_IMODE(info.st_mode):04o})"
    if info.st_mode & stat.S_IWGRP and not _private_group(info.st_gid, me):
        return f"writable by its group (gid {info.st_gid}, mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def _private_group(gid: int, me: int) -> bool:
    """The user's own group (named after them, with no other member), as many systems make
    one per user; the group-write bit of a folder in it lets no one else in."""
    try:
        group, user = grp.getgrgid(gid), pwd.getpwuid(me)
    except KeyError:
        return False
    return group.gr_name == user.pw_name and set(group.gr_mem) <= {user.pw_name}


class StepCache:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._secret: bytes | None = None

    def check(self) -> list[str]:
        """Before a run writes anything: make the cache folder if it is missing (open to its
        owner only) and its key (see :meth:`secret`), and refuse a folder another user can
        write: owned by another user, writable by every user (a shared ``/tmp`` folder), or
        inside a folder every user can write without the sticky bit that keeps one user from
        renaming another's folders. Returns a warning for a folder that the members of its
        group can write. (An entry is served only when its MAC verifies under a key only the
        owner can read, so such users could at most make the cache compute again; the
        refusal keeps them from racing it at all.)"""
        if lstat_kind(self.root) is None:
            self.root.mkdir(parents=True, mode=0o700)
        elif not self.root.is_dir():
            raise UserError(f"the step cache {self.root} is not a folder; set CHRONOPROBE_CACHE")
        me, warnings = os.geteuid(), []
        resolved = self.root.resolve()
        for folder in (resolved, *resolved.parents):
            info = os.stat(folder)
            problem = _others_can_write(info, me)
            if folder != resolved and (
                info.st_mode & stat.S_ISVTX or (problem or "").startswith("owned")
            ):
                continue  # sticky; or another's folder above: they cannot forge, only delete
            if problem is None:
                continue
            what = "is" if folder == resolved else f"is in {folder}, which is"
            line = f"the step cache {self.root} {what} {problem}, so others could change it"
            if problem.startswith("writable by its group"):
                warnings.append(f"{line}; `chmod g-w {folder}` keeps it yours")
            else:
                raise UserError(
                    f"{line}: set CHRONOPROBE_CACHE to a folder of your own (or run "
                    f"`chmod go-w {folder}` if it is yours)"
                )
        self.secret()
        return warnings

    def secret(self) -> bytes:
        """The cache's key, made on first use (written whole, then linked into place, so a
        second process never reads half of it). A key file that is a link, not the user's,
        or readable by others is refused: whoever can read it could sign entries."""
        if self._secret is not None:
            return self._secret
        path = self.root / KEY_FILE
        if lstat_kind(path) is None:
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = temp_beside(path, "new")
            handle = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with open(handle, "w", encoding="ascii") as stream:
                stream.write(secrets.token_hex(_KEY_BYTES) + "\n")
                stream.flush()
                os.fsync(handle)
            try:
                os.link(tmp, path)
            except FileExistsError:  # another process made it first: theirs is the key
                pass
            finally:
                tmp.unlink()
        problem = f"{path}: not the key chronoprobe keeps there"
        try:
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
                raise UserError(f"{problem} (a link or not a file)")
            if info.st_uid != os.geteuid() or info.st_mode & 0o077:
                raise UserError(
                    f"{problem} (it must be yours and readable by you only: owner uid "
                    f"{info.st_uid}, mode {stat.S_IMODE(info.st_mode):04o})"
                )
            text = _read_small(path, 4 * _KEY_BYTES).decode("ascii").strip()
            secret = bytes.fromhex(text)
        except (OSError, UnicodeDecodeError, ValueError) as err:
            reason = str(err) if str(err).startswith(str(path)) else f"{problem} ({err})"
            raise UserError(
                f"{reason}; without its key the cache cannot tell its own entries: delete the "
                "file (every entry is computed again once), or set CHRONOPROBE_CACHE"
            ) from None
        if len(secret) != _KEY_BYTES:
            raise UserError(f"{problem} ({len(secret)} bytes, not {_KEY_BYTES}); delete it")
        self._secret = secret
        return secret

    def _mac(self, *parts: bytes) -> str:
        return hmac.new(self.secret(), b"\0".join(parts), hashlib.sha256).hexdigest()

    def _index(self, kind: str, name: str) -> Path:
        return self.root / INDEX_DIR / kind / name

    def _write_mac(self, kind: str, name: str, mac: str) -> None:
        path = self._index(kind, name)
        for part in (path.parent.parent, path.parent, path):  # never written through a link
            if lstat_kind(part) not in (None, "file" if part == path else "dir"):
                _remove(part)
        atomic_write_text(path, mac + "\n")

    def _verifies(self, kind: str, name: str, mac: str) -> bool:
        try:
            kept = _read_small(self._index(kind, name), _MAC_BYTES).decode("ascii").strip()
        except (OSError, UnicodeDecodeError, ValueError):
            return False
        return hmac.compare_digest(kept, mac)

    def _entry_mac(self, kind: str, key: str, record: bytes) -> str:
        return self._mac(_ENTRY_MAC, kind.encode(), key.encode(), record)

    def _work_mac(self, kind: str, key: str, work: Path) -> str:
        info = os.lstat(work)
        return self._mac(
            _WORK_MAC, kind.encode(), key.encode(), f"{info.st_dev}:{info.st_ino}".encode()
        )

    def entry(self, kind: str, key: str) -> Path:
        return self.root / kind / key

    def has(self, kind: str, key: str) -> bool:
        return lstat_kind(self.entry(kind, key)) == "dir"

    @contextmanager
    def lock(self, kind: str, key: str) -> Iterator[bool]:
        """Hold the step's lock; yields False when another process had to be waited for.
        A link in the lock file's place is removed, never followed."""
        path = self.root / kind / f"{key}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        if lstat_kind(path) not in (None, "file"):
            _remove(path)
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                waited = False
            except BlockingIOError:
                fcntl.flock(handle, fcntl.LOCK_EX)
                waited = True
            try:
                yield not waited
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
        finally:
            os.close(handle)

    def work_dir(self, kind: str, key: str, fresh: bool) -> tuple[Path, str | None]:
        """The step's work directory, keeping only the finished shards of an earlier attempt
        of this cache's own; returns it and, when an attempt not signed by this cache was
        found there, what was discarded."""
        work = self.root / kind / f"{key}.partial"
        dropped = None
        there = lstat_kind(work)
        if there not in (None, "dir"):  # not made here: a link goes, never what it points to
            _remove(work)
        signed = there == "dir" and self._verifies(
            kind, f"{key}.partial", self._work_mac(kind, key, work)
        )
        if there == "dir" and not fresh and not signed:
            if any(work.iterdir()):
                dropped = f"{work}: an unfinished attempt this cache did not make; started afresh"
            fresh = True
        if fresh and lstat_kind(work) == "dir":
            shutil.rmtree(work)
        if lstat_kind(work) is None:
            work.mkdir(parents=True)
            self._write_mac(kind, f"{key}.partial", self._work_mac(kind, key, work))
        for path in work.iterdir():
            if path.name != SHARDS_DIR:
                _remove(path)
        if lstat_kind(work / SHARDS_DIR) == "link":
            _remove(work / SHARDS_DIR)
        for folder in [work / SHARDS_DIR, *(work / SHARDS_DIR).glob("*")]:
            if lstat_kind(folder) == "dir":
                clean_leftovers(folder)
        return work, dropped

    def commit(self, work: Path, kind: str, key: str, record: dict[str, Any]) -> Path:
        """Make a finished work directory the cache entry; its shards are no longer needed.

        ``record`` is written as its ``step.json`` with the digest of every file, signed, and
        the files are made read-only."""
        shutil.rmtree(work / SHARDS_DIR, ignore_errors=True)
        names = [name for name in walk_files(work) if name != STEP_RECORD]
        record = {**record, "files": {name: file_record(work / name) for name in names}}
        text = json.dumps(record, indent=2) + "\n"
        atomic_write_text(work / STEP_RECORD, text)
        for name in [*names, STEP_RECORD]:
            mode = (work / name).stat().st_mode
            (work / name).chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        self._write_mac(kind, key, self._entry_mac(kind, key, text.encode()))
        entry = self.entry(kind, key)
        replace_dir(work, entry)
        self._index(kind, f"{key}.partial").unlink(missing_ok=True)
        return entry

    def record(self, kind: str, key: str) -> dict[str, Any]:
        """The entry's record, once its MAC verifies; :class:`DamagedEntry` otherwise."""
        entry = self.entry(kind, key)
        where = f"cache entry {entry}"
        try:
            text = _read_small(entry / STEP_RECORD, _RECORD_BYTES)
        except (OSError, ValueError) as err:
            raise DamagedEntry(f"{where}: its step.json is unreadable ({err})") from None
        if not self._verifies(kind, key, self._entry_mac(kind, key, text)):
            raise DamagedEntry(
                f"{where}: not made by this cache (no MAC under its key verifies: copied in, "
                "forged, or written before entries were signed)"
            )
        try:
            record = json.loads(text)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
            raise DamagedEntry(f"{where}: its step.json is unreadable ({err})") from None
        files = record.get("files") if isinstance(record, dict) else None
        if not isinstance(files, dict) or not all(isinstance(f, dict) for f in files.values()):
            raise DamagedEntry(f"{where}: its step.json records no digests")
        present = [name for name in walk_files(entry) if name != STEP_RECORD]
        if sorted(files) != present:
            extra = sorted(set(present) - set(files)) or sorted(set(files) - set(present))
            raise DamagedEntry(f"{where}: its files are not those it recorded ({extra[0]})")
        return record

    def serve(self, kind: str, key: str, target: Path) -> dict[str, Any]:
        """Copy the entry's files into the empty folder ``target``, each checked against its
        recorded digest; returns the entry's record. Raises :class:`DamagedEntry` when the
        entry is not as this cache wrote it (then ``target`` may hold part of it)."""
        record = self.record(kind, key)
        entry = self.entry(kind, key)
        for name, recorded in record["files"].items():
            if copy_hashed(entry / name, target / name) != recorded.get("sha256"):
                raise DamagedEntry(f"cache entry {entry}: {name} was changed after it was written")
        return record

    def verified(self, kind: str, key: str) -> dict[str, Any]:
        """The entry's record once its MAC and every file's digest are checked (for reading
        an entry in place, as a training continues from one)."""
        record = self.record(kind, key)
        entry = self.entry(kind, key)
        for name, recorded in record["files"].items():
            if sha256_of(entry / name) != recorded.get("sha256"):
                raise DamagedEntry(f"cache entry {entry}: {name} was changed after it was written")
        return record

    def discard(self, kind: str, key: str) -> None:
        """Drop a damaged entry (renamed aside first, so no reader sees half of it)."""
        entry = self.entry(kind, key)
        if lstat_kind(entry) is not None:
            aside = temp_beside(entry, "damaged")
            os.replace(entry, aside)
            if lstat_kind(aside) == "dir":
                shutil.rmtree(aside, ignore_errors=True)
            else:
                aside.unlink()
        self._index(kind, key).unlink(missing_ok=True)


class DamagedEntry(UserError):
    """A cache entry that is not as this cache wrote it; it is dropped and computed again."""
