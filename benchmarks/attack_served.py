"""Attack the served-model adapter through the real command, and print the rows
docs/reliability.md shows.

    python benchmarks/attack_served.py              # every case, a table row per class
    python benchmarks/attack_served.py --verbose    # and each case's last output line
    python benchmarks/attack_served.py --only slow  # the classes whose name holds "slow"

Each case starts a malicious OpenAI-compatible server on 127.0.0.1 (the fixture of the test
suite, tests/models/served_stub.py) that answers the first two rows of a four-row probe set
soundly and gives its case's reply from the third on, and runs ``chronoprobe probe generate``
(``probe pll`` for the scoring cases) against it in a process of its own, with
``--request-timeout 2 --retries 0 --concurrency 1`` and a reply cap of 1 MiB. It counts:

- a traceback (or a crash by a signal), and a hang (still running after 60 s);
- a request that outlived its timeout by more than a second: from the bad reply's request
  to the command's error line (its exit comes later, the process unwinding, seconds later on a
  loaded machine; a hang is counted as a hang only);
- answers lost: the command is run again against the same server (its URL is in each
  answer's cache key), now answering soundly, with the same answer cache, and every row
  answered before the bad reply that it asks again is one (that run must complete: a hang or
  a failure of it counts as such, and as a wrong outcome);
- a wrong outcome: not refused in one line naming the server and the model (exit code 2) where
  the case expects that, or not completed (exit code 0) where it expects the answers kept.

Base URLs that hold a key or a control character are attacked too: refused, and the key in no
file of the run, the output or the cache; one of them, a NUL, through ``chronoprobe.probe``, as
no command line can carry one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from attack_folders import chosen_cases, print_table  # run as a script: benchmarks/ is on the path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "models"))  # the test suite's malicious server

import served_stub as stub  # noqa: E402

LIMIT_S = 60  # a case still running after this is a hang
TIMEOUT_S = 2  # --request-timeout of every case
KEY = "sk-attack-0123456789abcdef"
TRACEBACK = "Traceback (most recent call last)"
ROWS = [
    {
        "id": f"r{i}",
        "period": "2019",
        "relation": "P36",
        "subject": f"Q{i}",
        "query": f"The capital of country {i} is [MASK].",
        "answers": [],
        "answer_labels": ["Paris"],
        "split": None,
    }
    for i in range(4)
]


@dataclass
class Case:
    group: str
    name: str
    expect: str  # "refused" (exit 2, one line) or "done" (exit 0)
    bad: object = None  # the reply from the third request on (a reply function or a Raw)
    view: str = "generate"
    extra: list[str] = field(default_factory=list)
    base_url: str | None = None  # a base URL to refuse, in place of the server's
    env: dict[str, str] = field(default_factory=dict)
    spec: str = "openai:attack"
    api: bool = False  # through chronoprobe.probe(...), not the command line


CASES: list[Case] = []


def reply_of(entry) -> object:
    return stub.raw_reply(entry) if isinstance(entry, stub.Raw) else entry


for _name, _entry in stub.SLOW.items():
    CASES.append(Case("slow and silent servers", _name, "refused", reply_of(_entry)))
for _name, _entry in stub.LARGE.items():
    CASES.append(Case("replies past the cap", _name, "refused", reply_of(_entry)))
for _name, _entry in stub.BROKEN.items():
    CASES.append(Case("replies that are no HTTP", _name, "refused", reply_of(_entry)))
for _name, _entry in stub.MALFORMED.items():
    CASES.append(Case("answers of the wrong shape", f"completions: {_name}", "refused", _entry))
for _name, _entry in stub.MALFORMED_CHAT.items():
    CASES.append(
        Case("answers of the wrong shape", f"chat: {_name}", "refused", _entry, extra=["--chat"])
    )
for _name, _entry in stub.MALFORMED_ECHO.items():
    CASES.append(
        Case("answers of the wrong shape", f"echo: {_name}", "refused", _entry, view="pll")
    )
COSMETIC = "cosmetic fields (answers kept)"
for _name, _body in stub.COSMETIC.items():
    CASES.append(Case(COSMETIC, _name, "done", lambda p, b, h, body=_body: (200, body, {})))
for _header, _wait in stub.RETRY_AFTER.items():
    if _wait is None or _wait <= 3:  # the waits of a minute are the tests' (without sleeping)
        CASES.append(
            Case(
                "Retry-After headers",
                f"Retry-After: {_header!r}",
                "done",
                stub.retry_then_answer(_header),
                extra=["--retries", "1"],
            )
        )
for _status in (301, 302, 303, 307, 308):
    CASES.append(
        Case(
            "redirects",
            f"{_status} to a URL with a key",
            "refused",
            stub.redirect(_status, f"http://elsewhere.invalid/v1?api_key={KEY}"),
        )
    )
CASES.append(Case("redirects", "302 without a Location", "refused", stub.redirect(302, None)))
CASES.append(
    Case("redirects", "302 to escape sequences", "refused", stub.redirect(302, "http://x/\x1b[2J"))
)
_SAID = "\x1b[2J[bold red]boom[/] :m: [/oops] \u202eevil"
for _spec in ("openai:m:", "openai:[/x]", "openai:a[red]b", "openai::smile:"):
    CASES.append(
        Case(
            "markup, emoji codes and escapes in what is printed",
            f"spec {_spec!r}, a server's words with markup and escapes",
            "refused",
            lambda p, b, h: (422, {"error": {"message": _SAID}}, {}),
            spec=_spec,
        )
    )
URLS = "base URLs with keys or control characters"
for _url in (
    "http://127.0.0.1:9/v1\r\nX-Injected: 1",
    f"http://127.0.0.1:9/v1\r\nAuthorization: Bearer {KEY}",
    "http://127.0.0.1:9/v1\n",
    "http://127.0.0.1:9/\tv1",
    "http://127.0.0.1:9/v1\u202e",
    "http://127.0.0.1:9/my v1",
    f"http://127.0.0.1:9/v1?api_key={KEY}",
    f"http://127.0.0.1:9/v1?key={KEY}",
    f"http://127.0.0.1:9/v1?x=1&token={KEY}",
    f"http://127.0.0.1:9/v1?access_token={KEY}",
    f"http://127.0.0.1:9/v1;apikey={KEY}",
    f"http://127.0.0.1:9/v1#key={KEY}",
    f"http://me:{KEY}@127.0.0.1:9/v1",
    "http://127.0.0.1:99999/v1",
    "ftp://127.0.0.1/v1",
):
    CASES.append(Case(URLS, repr(_url), "refused", base_url=_url))
CASES.append(  # no command line can carry a NUL (the OS refuses it in argv): Python can
    Case(
        URLS,
        "a NUL and a key, through the Python API",
        "refused",
        base_url=f"http://127.0.0.1:9/v1\x00{KEY}",
        api=True,
    )
)
CASES.append(
    Case(
        URLS,
        "$OPENAI_BASE_URL with a key",
        "refused",
        env={"OPENAI_BASE_URL": f"http://127.0.0.1:9/v1?api_key={KEY}"},
        base_url="",
    )
)


def echo_reply(text: str) -> dict:
    """A sound echo of ``text``: a token per character, the first without a log-probability."""
    logprobs = {
        "tokens": [*text, "x"],
        "token_logprobs": [None] + [-1.0] * len(text),
        "text_offset": [*range(len(text)), len(text)],
    }
    return {"model": "attack", "choices": [{"text": text + "x", "logprobs": logprobs}]}


def sound(path: str, body: dict, headers: dict):
    if body.get("echo"):
        return 200, echo_reply(body["prompt"]), {}
    if "messages" in body:  # --chat: a chat completion's shape
        return 200, {"model": "attack", "choices": [{"message": {"content": " Paris."}}]}, {}
    return 200, stub.completion(" Paris."), {}


def _limits() -> None:
    os.nice(10)


# chronoprobe.probe(...) with the case's base URL, its UserError printed as the command prints
# one (exit code 2): anything else is a traceback
API = """import sys, chronoprobe
try:
    chronoprobe.probe({view!r}, {data!r}, model={spec!r}, base_url={url!r}, out={out!r},
                      request_timeout={timeout}, retries=0, concurrency=1)
except chronoprobe.UserError as err:
    print(f"error: {{err}}", file=sys.stderr)
    sys.exit(2)
"""


def command(case: Case, data: Path, out: Path, url: str | None) -> list[str]:
    if case.api:
        values = {"view": case.view, "data": str(data), "spec": case.spec, "url": url}
        script = API.format(**values, out=str(out), timeout=TIMEOUT_S)
        return [sys.executable, "-c", script]
    args = [sys.executable, "-m", "chronoprobe", "probe", case.view, str(data), "-m", case.spec]
    if url:
        args += ["--base-url", url]
    args += ["--request-timeout", str(TIMEOUT_S), "--retries", "0", "--concurrency", "1"]
    if case.view == "generate":
        args += ["--max-tokens", "6"]
    return [*args, *case.extra, "-o", str(out)]


@dataclass
class Ran:
    text: str  # stdout and stderr
    code: int | None  # None: still running after LIMIT_S (a hang)
    said_at: float | None  # when its "error:" line came (time.monotonic), if one did


def run_command(args: list[str], env: dict[str, str]) -> Ran:
    """``args`` run to its end (killed after LIMIT_S), and when it printed its error: the
    request's end, which the process's own exit comes well after (its threads and modules
    unwound, on a loaded machine seconds later)."""
    process = subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, preexec_fn=_limits
    )
    lines: list[bytes] = []
    said: list[float] = []

    def read() -> None:
        for line in process.stdout:
            if not said and line.lstrip().startswith(b"error:"):
                said.append(time.monotonic())
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        code = process.wait(timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        code = None
    reader.join(5)
    return Ran(b"".join(lines).decode(errors="replace"), code, said[0] if said else None)


def attack(case: Case, scratch: Path) -> dict:
    folder = Path(tempfile.mkdtemp(dir=scratch))
    data = folder / "data"
    data.mkdir()
    (data / "examples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    env = {**os.environ, "CHRONOPROBE_CACHE": str(folder / "cache"), **case.env}
    env["CHRONOPROBE_MAX_RECORD_BYTES"] = "1M"
    env["OPENAI_API_KEY"] = KEY
    asked: list[tuple[str, bool]] = []  # (prompt, answered soundly)
    bad_at: list[float] = []
    lock = threading.Lock()

    def reply(path, body, headers):
        with lock:
            late = len(asked) >= 2
            asked.append((body.get("prompt") or json.dumps(body.get("messages")), not late))
            if late and not bad_at:
                bad_at.append(time.monotonic())
        if not late:
            return sound(path, body, headers)
        return case.bad(path, body, headers)

    outcome = {"group": case.group, "name": case.name, "hang": False, "over": False, "lost": []}
    with stub.StubServer(reply) as server:
        url = server.url if case.base_url is None else case.base_url
        ran = run_command(command(case, data, folder / "out", url), env)
        text, code = ran.text, ran.code
        outcome["hang"] = code is None
        if bad_at and case.expect == "refused" and not outcome["hang"]:
            ended = ran.said_at or time.monotonic()
            outcome["over"] = ended - bad_at[0] > TIMEOUT_S + 1
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        last = next((line for line in reversed(lines) if line.startswith("error:")), "")
        outcome["last"] = last or (lines[-1] if lines else "")
        outcome["tracebacks"] = TRACEBACK in text or (code is not None and code not in (0, 1, 2))
        outcome["refused"] = code == 2
        wrong = None
        if case.expect == "refused":
            if code != 2:
                wrong = f"expected a refusal, exit code {code}"
            elif case.base_url is None and not last.startswith(f"error: {case.spec} at "):
                wrong = "the line does not name the model and the server"
        elif code != 0:
            wrong = f"expected the answers kept, exit code {code}"
        files = [p for p in folder.rglob("*") if p.is_file()]
        if KEY in text or any(KEY.encode() in p.read_bytes() for p in files):
            wrong = "the key was written down"
        outcome["wrong"] = wrong
        answered = {prompt for prompt, sound_reply in asked if sound_reply}
        if case.expect == "refused" and case.base_url is None and not outcome["hang"]:
            # the same server (its URL is in every answer's cache key), now answering soundly
            again: list[str] = []

            def count(path, body, headers):
                with lock:
                    again.append(body.get("prompt") or json.dumps(body.get("messages")))
                return sound(path, body, headers)

            server.reply = count
            ran = run_command(command(case, data, folder / "again", server.url), env)
            if ran.code is None:
                outcome["hang"], outcome["wrong"] = True, "the run again hung"
            elif ran.code != 0:
                outcome["wrong"] = f"the run again failed: {ran.text.strip()[-200:]}"
            outcome["lost"] = sorted(answered & set(again))  # answered, and asked again
    return outcome


def main() -> None:
    args, chosen = chosen_cases(__doc__, CASES)
    with (
        tempfile.TemporaryDirectory(prefix="chronoprobe-attack-served-") as scratch,
        ThreadPoolExecutor(args.jobs) as pool,
    ):
        outcomes = list(pool.map(lambda c: attack(c, Path(scratch)), chosen))
    for o in outcomes:
        bad = o["tracebacks"] or o["hang"] or o["over"] or o["lost"] or o["wrong"]
        if args.verbose or bad:
            print(
                f"[{'FAIL' if bad else 'ok'}] {o['group']}: {o['name']}\n    {o['last'][:240]!r}",
                file=sys.stderr,
            )
            for problem in filter(None, ["hang" if o["hang"] else None, o["wrong"]]):
                print(f"    {problem}", file=sys.stderr)
            if o["over"]:
                print("    past the request timeout plus one second", file=sys.stderr)
            if o["lost"]:
                print(f"    {len(o['lost'])} answered rows asked again", file=sys.stderr)
    print_table(outcomes, "wrong", "answers lost", "past timeout + 1 s")


if __name__ == "__main__":
    main()
