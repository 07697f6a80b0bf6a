"""A Python user's suite with the svcd_pytest plugin (run by test/integration/pytest-plugin.test.ts
with ``-p svcd_pytest --svcd-clock manual``)."""

import http.server
import threading

import pytest


@pytest.fixture(scope="module")
def receiver():
    """A local webhook endpoint recording what it gets; /broken answers 500."""
    received = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            received.append({"path": self.path, "body": body, "signature": self.headers.get("Upstash-Signature")})
            self.send_response(500 if self.path == "/broken" else 200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", received
    server.shutdown()


def test_publish_advance_and_dlq(svcd, receiver):
    url, received = receiver
    received.clear()
    status, answer = svcd.request("POST", f"/v2/publish/{url}/later", "in an hour", {"Upstash-Delay": "1h"})
    assert status == 200, answer
    svcd.request("POST", f"/v2/publish/{url}/broken", "x", {"Upstash-Retries": "1"})
    svcd.flush()
    assert [m["state"] for m in svcd.messages(url=f"{url}/later")] == ["CREATED"]
    with pytest.raises(AssertionError, match="only advance"):
        svcd.wait_for_idle()
    svcd.advance("1h")
    assert [r["body"] for r in received if r["path"] == "/later"] == ["in an hour"]
    assert svcd.wait_for_idle()["delayed"] == 0
    assert [entry["responseStatus"] for entry in svcd.dlq()] == [500]
    assert svcd.messages(state="FAILED")[0]["url"] == f"{url}/broken"


def test_reset_between_tests(svcd):
    assert svcd.messages() == [] and svcd.dlq() == []


def test_official_qstash_client(svcd_env, receiver):
    qstash = pytest.importorskip("qstash", reason="the official qstash package is not installed (pip install qstash)")
    import os

    url, received = receiver
    received.clear()
    client = qstash.QStash(os.environ["QSTASH_TOKEN"], base_url=os.environ["QSTASH_URL"])
    result = client.message.publish_json(url=f"{url}/orders", body={"orderId": 42})
    svcd_env.flush()
    assert [r["body"] for r in received] == ['{"orderId":42}']
    verifier = qstash.Receiver(current_signing_key=os.environ["QSTASH_CURRENT_SIGNING_KEY"], next_signing_key=os.environ["QSTASH_NEXT_SIGNING_KEY"])
    verifier.verify(signature=received[0]["signature"], body=received[0]["body"], url=f"{url}/orders")
    assert svcd_env.messages()[0]["messageId"] == result.message_id
