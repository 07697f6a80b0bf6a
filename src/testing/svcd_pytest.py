"""svcd for pytest: a fixture giving each test a clean svcd (Python standard library and pytest only).

Copy this file next to your conftest.py and add ``pytest_plugins = ["svcd_pytest"]`` to it (or run
``pytest -p svcd_pytest``). One svcd runs per test session, on a free port, in memory, with the
``upstash`` dialect so the official ``qstash`` package works against it; the ``svcd`` fixture
resets its account before each test::

    def test_order_event(svcd, monkeypatch):
        monkeypatch.setenv("QSTASH_URL", svcd.url)          # or: svcd_env
        client = QStash(svcd.token, base_url=svcd.url)
        client.message.publish_json(url=f"{receiver}/orders", body={"orderId": 42})
        svcd.flush()
        assert svcd.messages()[0]["state"] == "DELIVERED"

Options: ``--svcd-clock manual``, ``--svcd-dialect svc``, ``--svcd-binary PATH`` (or $SVCD_BINARY;
otherwise ``svcd`` on PATH, e.g. from ``npm install svcd``).
"""

import atexit
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def to_ms(duration):
    """``"1h30m"``, ``"90s"``, ``"250ms"``, ``"2d"`` or an int of ms -> ms."""
    if isinstance(duration, int) and duration >= 0:
        return duration
    text = str(duration).strip()
    parts = re.findall(r"(\d+)(ms|s|m|h|d)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f'svcd: "{duration}" is not a duration (e.g. 1h30m, 90s, 250ms, or an int of ms)')
    return sum(int(n) * _UNITS[u] for n, u in parts)


def find_svcd(binary=None):
    """The command starting svcd: the binary given, $SVCD_BINARY, ``svcd`` on PATH, or the sources beside this file."""
    binary = binary or os.environ.get("SVCD_BINARY")
    if binary:
        return [binary]
    on_path = shutil.which("svcd")
    if on_path:
        return [on_path]
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    bun = os.path.join(root, "node_modules", ".bin", "bun")
    if os.path.exists(os.path.join(root, "src", "main.ts")) and os.path.exists(bun):
        return [bun, os.path.join(root, "src", "main.ts")]
    raise RuntimeError("svcd: no svcd executable found; set SVCD_BINARY, or install it (npm install -g svcd)")


class Svcd:
    """A running svcd: ``url``, ``token``, ``env``, and the test-double controls."""

    def __init__(self, process, url, env, workdir):
        self.process = process
        self.url = url
        self.env = env
        self.token = env["SVC_TOKEN"]
        self._workdir = workdir

    def request(self, method, path, body=None, headers=None):
        """One HTTP call with the token; returns (status, parsed JSON or text)."""
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        data = body.encode() if isinstance(body, str) else body
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        for name, value in (headers or {}).items():
            req.add_header(name, value)
        try:
            with urllib.request.urlopen(req, timeout=60) as res:
                status, text = res.status, res.read().decode()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read().decode()
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def _ok(self, method, path, body=None):
        status, answer = self.request(method, path, body)
        if status >= 300:
            raise AssertionError(f"svcd: {method} {path} answered {status}: {answer}")
        return answer

    def reset(self):
        return self._ok("POST", "/__svc/reset")

    def flush(self, timeout_ms=10_000):
        return self._ok("POST", f"/__svc/flush?timeout={timeout_ms}")

    def advance(self, duration, flush=True, timeout_ms=10_000):
        """Manual clock: moves forward, firing every timer due on the way, in order."""
        query = f"flush={str(flush).lower()}&timeout={timeout_ms}"
        return self._ok("POST", f"/__svc/clock/advance?{query}", {"ms": to_ms(duration)})

    def now(self):
        return self._ok("GET", "/__svc/clock")["now"]

    def wait_for_idle(self, timeout_ms=10_000):
        """Returns once nothing is in flight, due or delayed; with the manual clock a delayed message raises."""
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            self.flush(max(1, int((deadline - time.monotonic()) * 1000)))
            status = self._ok("GET", "/__svc/status")
            counts = status["messages"]
            if counts["inFlight"] + counts["due"] + counts["delayed"] == 0:
                return counts
            if status["clock"]["mode"] == "manual" and counts["inFlight"] + counts["due"] == 0:
                raise AssertionError(
                    f"svcd: {counts['delayed']} message(s) wait for a later time;"
                    " with the manual clock only advance() brings them due"
                )
            if time.monotonic() > deadline:
                raise AssertionError(f"svcd: not idle after {timeout_ms} ms: {counts}")
            time.sleep(0.02)

    def _all(self, path, query, key):
        items, cursor = [], None
        while True:
            params = dict(query, **({"cursor": cursor} if cursor else {}))
            page = self._ok("GET", f"{path}?{urllib.parse.urlencode(params, doseq=True)}")
            items.extend(page.get(key) or [])
            cursor = page.get("cursor")
            if not cursor:
                return items

    def messages(self, state=None, **log_filter):
        """One dict per message in publish order: its newest log entry plus ``states``, oldest first."""
        by_id = {}
        for entry in self._all("/v2/logs", dict(log_filter, count="1000"), "logs"):
            seen = by_id.get(entry["messageId"])
            if seen is None:
                by_id[entry["messageId"]] = dict(entry, states=[entry["state"]], _first=entry["time"])
            else:
                seen["states"].insert(0, entry["state"])
                seen["_first"] = entry["time"]
                if "body" not in seen and "body" in entry:
                    seen["body"] = entry["body"]
        messages = sorted(by_id.values(), key=lambda m: m["_first"])
        for message in messages:
            del message["_first"]
        wanted = [state] if isinstance(state, str) else state
        return [m for m in messages if not wanted or m["state"] in wanted]

    def dlq(self, **dlq_filter):
        return self._all("/v2/dlq", dlq_filter, "messages")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
        shutil.rmtree(self._workdir, ignore_errors=True)


def start_svcd(clock="real", dialect="upstash", args=(), env=None, binary=None, start_timeout=30):
    """Starts svcd on a free port, in memory; returns once it listens."""
    workdir = tempfile.mkdtemp(prefix="svcd-pytest-")
    command = find_svcd(binary) + ["--port", "0", "--host", "127.0.0.1", "--memory", "--log-level", "warn",
                                   "--clock", clock, "--dialect", dialect, *args]
    process = subprocess.Popen(command, cwd=workdir, env={**os.environ, **(env or {})},
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    atexit.register(lambda: process.poll() is None and process.kill())
    lines = []
    deadline = time.monotonic() + start_timeout
    reader = threading.Thread(target=lambda: [lines.append(line) for line in process.stdout], daemon=True)
    reader.start()  # also keeps draining svcd's output for as long as it runs
    while not any(line.startswith("export SVC_METRICS_TOKEN=") for line in list(lines)):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"svcd did not start ({' '.join(command)}):\n{''.join(lines)}")
        time.sleep(0.01)
    text = "".join(lines)
    url = re.search(r"svcd listening on (\S+)", text).group(1)
    first_account = text.split("\n# account ", 1)[1].split("\n\n", 1)[0]
    variables = dict(re.findall(r"^export ([A-Z0-9_]+)=(.*)$", first_account, re.M))
    return Svcd(process, url, variables, workdir)


def pytest_addoption(parser):
    group = parser.getgroup("svcd")
    group.addoption("--svcd-clock", default="real", choices=["real", "manual"], help="svcd's clock (default real)")
    group.addoption(
        "--svcd-dialect", default="upstash", choices=["svc", "upstash"], help="svcd's dialect (default upstash)"
    )
    group.addoption("--svcd-binary", default=None, help="the svcd executable (default $SVCD_BINARY or svcd on PATH)")


@pytest.fixture(scope="session")
def svcd_server(request):
    """One svcd for the whole session."""
    option = request.config.getoption
    server = start_svcd(clock=option("--svcd-clock"), dialect=option("--svcd-dialect"), binary=option("--svcd-binary"))
    yield server
    server.stop()


@pytest.fixture
def svcd(svcd_server):
    """The session's svcd, its account reset before the test."""
    svcd_server.reset()
    return svcd_server


@pytest.fixture
def svcd_env(svcd, monkeypatch):
    """``svcd`` with QSTASH_URL, QSTASH_TOKEN and the signing keys (and the SVC_ ones) set in os.environ."""
    for name, value in svcd.env.items():
        monkeypatch.setenv(name, value)
    return svcd
