"""What a served model's reply may hold, checked before any of it is used.

A reply is untrusted data. It is decoded once (JSON nested past the decoder's depth, invalid
UTF-8 and a body that is no JSON are each one reason), then read through a typed schema, one
per request kind: the fields an answer is made of (a completion's ``text``, a chat message's
``content``, the echoed ``token_logprobs`` and ``text_offset``) must have their types, and a
reply whose answer fields do not is refused with the path of the first bad value
(``$.choices[0].logprobs.text_offset[3]: Expected `int`, got `null```). Log-probabilities must
be finite numbers no greater than 0, offsets ascend from 0, and a text holds no lone surrogate
(half a UTF-16 pair, which JSON's escapes can spell and no file can hold).

Cosmetic fields never cost an answer: ``usage`` token counts that are no non-negative whole
numbers (lists, strings, NaN, 1e400, -3, true), and a ``model`` or ``system_fingerprint`` that
is no short line of text, count as unknown (see :func:`token_count`, :func:`label`). A
``Retry-After`` that is neither a number of seconds nor an HTTP date (``nan``, ``-1``,
``1e400``) is ignored, the client's own backoff taking its place.
"""

from __future__ import annotations

import json
import math
import unicodedata
from email.utils import parsedate_to_datetime
from typing import Annotated, Any

import msgspec

from chronoprobe.errors import UserError

# an offset past any prompt (2**40 characters) is no offset
_Offset = Annotated[int, msgspec.Meta(ge=0, le=2**40)]
_LONGEST_LABEL = 200  # characters of a model name or fingerprint kept
_SLACK = 1e-6  # a log-probability may exceed 0 by rounding


class BadReply(UserError):
    """A reply whose answer cannot be read; the message says why, without the server's
    name (the caller adds it)."""


class _Text(msgspec.Struct):
    text: str


class _Message(msgspec.Struct):
    content: str | None = None  # None: a refusal or a tool call, no text


class _Chat(msgspec.Struct):
    message: _Message


class _Echoed(msgspec.Struct):
    token_logprobs: list[float | None]
    text_offset: list[_Offset]


class _Scored(msgspec.Struct):
    logprobs: _Echoed | None = None


def decoded(body: bytes) -> Any:
    """The JSON value of a reply's body; :class:`BadReply` saying why there is none. NaN,
    Infinity and numbers past a float's range, which Python's json module writes and reads,
    are read (as NaN and infinities); the checks of each field then judge them."""
    try:
        return msgspec.json.decode(body)
    except RecursionError:
        raise BadReply("its JSON is nested too deeply") from None
    except (msgspec.DecodeError, msgspec.ValidationError):
        pass  # invalid UTF-8, NaN, 1e400, or no JSON: the standard library tells them apart
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadReply(f"it is not UTF-8 text (byte {err.start:,})") from None
    try:
        return json.loads(text, parse_constant=float, parse_int=_integer)
    except RecursionError:
        raise BadReply("its JSON is nested too deeply") from None
    except ValueError as err:  # JSONDecodeError, and numbers of more digits than int() reads
        raise BadReply(f"not JSON ({printable(text, 80)!r}: {err})") from None


def _integer(digits: str) -> int | float:
    """An integer of JSON text; one of more digits than any count (past the 4,300 that
    ``int()`` reads) as an infinity, which no check takes for a number."""
    if len(digits) <= 100:
        return int(digits)
    return -math.inf if digits.startswith("-") else math.inf


def choice(reply: Any) -> Any:
    """The first of the reply's ``choices``; :class:`BadReply` when it has none (with the
    server's ``error``, where it gave one)."""
    choices = reply.get("choices") if isinstance(reply, dict) else None
    if not isinstance(choices, list) or not choices:
        said = error_text(reply.get("error")) if isinstance(reply, dict) else None
        raise BadReply(f"no choices in it: {said}" if said else "no choices in it")
    return choices[0]


def _read(value: Any, kind: type, where: str) -> Any:
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as err:
        reason, _, path = str(err).partition(" - at `$")
        raise BadReply(f"{where}{path.rstrip('`')}: {reason}") from None
    except RecursionError:
        raise BadReply(f"{where}: nested too deeply") from None


def _whole(text: str, where: str) -> str:
    """``text``, if it is text: JSON's escapes can spell half a UTF-16 pair (``"\\ud800"``),
    which no file can hold (writing it raised UnicodeEncodeError)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        half = f"U+{ord(text[err.start]):04X}"
        raise BadReply(f"{where}: a lone surrogate ({half}) at character {err.start:,}") from None
    return text


def completion_text(reply: Any) -> str:
    """The text of a ``/completions`` reply's first choice."""
    return _whole(_read(choice(reply), _Text, "$.choices[0]").text, "$.choices[0].text")


def chat_text(reply: Any) -> str:
    """The content of a ``/chat/completions`` reply's first message ("" for none)."""
    content = _read(choice(reply), _Chat, "$.choices[0]").message.content or ""
    return _whole(content, "$.choices[0].message.content")


def echoed(reply: Any) -> tuple[list[int], list[float | None]] | None:
    """The character offset and log-probability of every token of an echoed prompt (None
    where the server gave no log-probability, which only its first token may lack); None
    when the reply holds no log-probabilities at all."""
    logprobs = _read(choice(reply), _Scored, "$.choices[0]").logprobs
    if logprobs is None or not logprobs.text_offset:
        return None
    offsets, values = logprobs.text_offset, logprobs.token_logprobs
    where = "$.choices[0].logprobs"
    if len(offsets) != len(values):
        raise BadReply(
            f"{where}: {len(values):,} token_logprobs for {len(offsets):,} text_offset values"
        )
    if offsets[0] != 0:
        raise BadReply(f"{where}.text_offset[0]: {offsets[0]}, not 0 (the prompt's start)")
    for i in range(1, len(offsets)):
        if offsets[i] < offsets[i - 1]:
            raise BadReply(f"{where}.text_offset[{i}]: {offsets[i]} before {offsets[i - 1]}")
    for i, value in enumerate(values):
        if value is None:
            if i:
                raise BadReply(f"{where}.token_logprobs[{i}]: null past the first token")
        elif not math.isfinite(value) or value > _SLACK:
            raise BadReply(f"{where}.token_logprobs[{i}]: {value!r} is no log-probability")
    return offsets, values


def token_count(value: Any) -> int | None:
    """A ``usage`` count, or None (unknown) for anything but a whole number from 0 to
    2**53 (a float that is one counts)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and 0 <= value <= 2**53 else None


def usage_counts(reply: Any) -> tuple[int | None, int | None]:
    """The prompt and completion tokens a reply's ``usage`` counts (None: not counted)."""
    usage = reply.get("usage") if isinstance(reply, dict) else None
    if not isinstance(usage, dict):
        return None, None
    return token_count(usage.get("prompt_tokens")), token_count(usage.get("completion_tokens"))


def label(value: Any) -> str | None:
    """A model name or fingerprint as a reply gives it, or None for anything but a line of
    visible text of at most 200 characters."""
    if not isinstance(value, str) or not 0 < len(value) <= _LONGEST_LABEL:
        return None
    return value if printable(value, _LONGEST_LABEL) == value else None


def error_text(error: Any) -> str | None:
    """The words of a server's error (OpenAI's ``{"message"}``, or a plain string), as one
    printable line; None when it gave none in words."""
    if isinstance(error, dict):
        error = error.get("message")
    return printable(error) if isinstance(error, str) and error.strip() else None


def printable(text: str, limit: int = 300) -> str:
    """``text`` as one line of at most ``limit`` characters: white space runs as one space,
    control and format characters (escape sequences, direction overrides) written as
    ``\\x1b``, ``\\u202e``."""
    line = " ".join(text[: limit * 4].split())
    if not line.isprintable():
        line = "".join(
            c if c.isprintable() or unicodedata.category(c) == "Zs" else ascii(c)[1:-1]
            for c in line
        )
    return line if len(line) <= limit else line[: limit - 3] + "..."


def retry_after(value: str | None, now: float) -> float | None:
    """The seconds a ``Retry-After`` header asks to wait: a number of seconds, or an HTTP
    date (``now`` is the current Unix time); None for a header that is neither, or absent."""
    if value is None:
        return None
    text = value.strip()
    if text.replace(".", "", 1).isdigit() and text.isascii() and len(text) <= 12:
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        return None
    try:
        return max(when.timestamp() - now, 0.0)
    except (OverflowError, OSError, ValueError):
        return None
