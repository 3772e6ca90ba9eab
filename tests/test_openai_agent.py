"""OpenAIAgent against a real HTTP server on 127.0.0.1 (http.server in a thread, real sockets):
request shape, retries with backoff on 5xx / 429 / timeouts / dropped and refused connections,
no retry on other client errors, stop-string restoration and the answer-block cut.
The same agent against vLLM's own server is in test_vllm.py."""
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from solvergym.agents.hf import StopChecker
from solvergym.agents.openai_agent import OpenAIAgent, OpenAIError, truncate_at_stop
from solvergym.envs.parsing import final_answer_block
from solvergym.evaluation import EvalConfig, load_records, run_eval


def completion(text, finish="stop", **choice):
    return {"id": "c1", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish,
                         **choice}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}


def reply(status=200, obj=None, headers=None, raw=None):
    def act(h):
        data = raw if raw is not None else json.dumps(obj if obj is not None else completion("ok")).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)
    return act


def echo(h):
    user = [m for m in h.request_json["messages"] if m["role"] == "user"][-1]["content"]
    reply(obj=completion("re: " + user))(h)


def hang(h):
    """Accept the request and answer nothing until the test ends (the client must time out)."""
    h.server.release.wait(30)


def drop(h):
    """Close the connection without a response."""
    h.close_connection = True


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.request_json = json.loads(body)
        srv = self.server
        with srv.lock:
            srv.requests.append({"path": self.path, "headers": dict(self.headers), "json": self.request_json})
            action = srv.script.pop(0) if srv.script else srv.default
        action(self)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.lock, srv.requests, srv.script, srv.default = threading.Lock(), [], [], echo
    srv.release = threading.Event()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    yield srv
    srv.release.set()
    srv.shutdown()
    srv.server_close()
    thread.join(10)


def test_act_sends_chat_requests_in_order(server):
    agent = OpenAIAgent(server.url, "tiny", api_key="sk-test", system_prompt="Be brief.", max_tokens=7,
                        temperature=0.5, top_p=0.9, seed=3, max_workers=3)
    obs = [f"question {i}" for i in range(5)]
    assert agent.act(obs) == [f"re: {o}" for o in obs]
    assert len(server.requests) == 5
    req = next(r for r in server.requests if r["json"]["messages"][-1]["content"] == "question 0")
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["Authorization"] == "Bearer sk-test"
    assert req["headers"]["Content-Type"] == "application/json"
    body = req["json"]
    assert body["model"] == "tiny" and body["max_tokens"] == 7 and body["temperature"] == 0.5
    assert body["top_p"] == 0.9 and body["seed"] == 3
    assert body["stop"] == ["</tool_call>", "</answer>"]
    assert body["messages"] == [{"role": "system", "content": "Be brief."},
                                {"role": "user", "content": "question 0"}]


def test_api_key_from_environment_and_none(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    OpenAIAgent(server.url + "/chat/completions", "m").act(["a"])
    assert server.requests[-1]["headers"]["Authorization"] == "Bearer sk-env"
    assert server.requests[-1]["path"] == "/v1/chat/completions"
    monkeypatch.delenv("OPENAI_API_KEY")
    OpenAIAgent(server.url, "m", extra_body={"top_k": 5}).act(["b"])
    assert "Authorization" not in server.requests[-1]["headers"]
    assert server.requests[-1]["json"]["top_k"] == 5


def test_retries_server_errors_and_rate_limits_then_succeeds(server):
    server.script = [reply(503, {"error": {"message": "overloaded"}}),
                     reply(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "0"}),
                     reply(502, raw=b"bad gateway")]
    agent = OpenAIAgent(server.url, "m", max_retries=3, backoff=0.01)
    assert agent.act(["x"]) == ["re: x"]
    assert len(server.requests) == 4


def test_gives_up_after_max_retries_with_the_server_message(server):
    server.default = reply(500, {"error": {"message": "boom"}})
    agent = OpenAIAgent(server.url, "m", max_retries=2, backoff=0.01)
    with pytest.raises(OpenAIError, match="boom") as info:
        agent.act(["x"])
    assert info.value.status == 500 and info.value.attempts == 3
    assert "gave up after 3 attempts" in str(info.value)
    assert len(server.requests) == 3


def test_client_errors_are_not_retried(server):
    server.default = reply(404, {"error": {"message": "The model `nope` does not exist."}})
    agent = OpenAIAgent(server.url, "nope", max_retries=5, backoff=0.01)
    with pytest.raises(OpenAIError, match="does not exist") as info:
        agent.act(["x"])
    assert info.value.status == 404 and info.value.attempts == 1
    assert len(server.requests) == 1


def test_timeout_is_retried_then_reported(server):
    server.default = hang
    agent = OpenAIAgent(server.url, "m", timeout=0.3, max_retries=1, backoff=0.01)
    t0 = time.monotonic()
    with pytest.raises(OpenAIError, match="timed out") as info:
        agent.act(["x"])
    # the server would hold each request for 30 s: the client gave up on both attempts by itself
    assert time.monotonic() - t0 < 20
    assert info.value.attempts == 2 and info.value.status is None
    assert len(server.requests) == 2


def test_timeout_then_success(server):
    server.script = [hang]
    agent = OpenAIAgent(server.url, "m", timeout=0.3, max_retries=2, backoff=0.01)
    assert agent.act(["y"]) == ["re: y"]
    assert len(server.requests) == 2


def test_dropped_connection_is_retried(server):
    server.script = [drop, drop]
    agent = OpenAIAgent(server.url, "m", max_retries=2, backoff=0.01)
    assert agent.act(["z"]) == ["re: z"]
    assert len(server.requests) == 3


def test_refused_connection_is_retried_then_reported():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    agent = OpenAIAgent(f"http://127.0.0.1:{port}/v1", "m", max_retries=2, backoff=0.01, timeout=5)
    with pytest.raises(OpenAIError, match="cannot connect") as info:
        agent.act(["x"])
    assert info.value.attempts == 3 and info.value.status is None


def test_retry_after_is_capped_by_max_backoff(server):
    server.script = [reply(429, {"error": {"message": "later"}}, headers={"Retry-After": "120"})]
    agent = OpenAIAgent(server.url, "m", max_retries=1, backoff=0.01, max_backoff=0.05)
    t0 = time.monotonic()
    assert agent.act(["q"]) == ["re: q"]
    assert time.monotonic() - t0 < 20  # not the 120 s the server asked for


def test_a_200_that_is_not_a_completion_is_an_error(server):
    server.script = [reply(200, raw=b"<html>proxy login</html>")]
    agent = OpenAIAgent(server.url, "m", max_retries=3, backoff=0.01)
    with pytest.raises(OpenAIError, match="not JSON"):
        agent.act(["x"])
    server.script = [reply(200, {"object": "list", "data": []})]
    with pytest.raises(OpenAIError, match="not a chat completion"):
        agent.act(["x"])
    assert len(server.requests) == 2


def test_dropped_stop_strings_are_restored(server):
    server.script = [reply(obj=completion("<think>ok</think><answer>42")),
                     reply(obj=completion('<tool_call>{"x": 1}', stop_reason="</tool_call>")),
                     reply(obj=completion("plain text, no tag")),
                     reply(obj=completion("<answer>cut by length", finish="length"))]
    agent = OpenAIAgent(server.url, "m")
    texts = [agent.chat([{"role": "user", "content": "q"}]) for _ in range(4)]
    assert [t.text for t in texts] == ["<think>ok</think><answer>42</answer>", '<tool_call>{"x": 1}</tool_call>',
                                       "plain text, no tag", "<answer>cut by length"]
    assert [t.finish_reason for t in texts] == ["stop", "stop", "stop", "length"]
    assert texts[0].usage["total_tokens"] == 5


def test_text_is_cut_after_the_first_answer_block(server):
    long = "Let me think.\n```answer\nyes\n```\nActually ```answer\nno\n``` more"
    server.script = [reply(obj=completion(long, finish="length"))]
    r = OpenAIAgent(server.url, "m").chat([{"role": "user", "content": "q"}])
    assert r.text == "Let me think.\n```answer\nyes\n```" and r.finish_reason == "stop"
    assert final_answer_block(r.text) == ("answer", "yes")
    off = OpenAIAgent(server.url, "m", stop_at_answer_block=False)
    server.script = [reply(obj=completion(long, finish="length"))]
    assert off.chat([{"role": "user", "content": "q"}]).text == long


@pytest.mark.parametrize("text", [
    "a ```python\nx\n``` then ```idk``` and more",
    "x </tool_call> y ```answer\n1\n```",
    "```answer\n1\n``` y </answer>",
    "nothing to stop at",
    "```answer unclosed",
])
def test_truncate_at_stop_agrees_with_stop_checker(text):
    """The post-hoc cut keeps exactly what HFAgent's per-token StopChecker would have let through
    (fed one character at a time: the finest tokenisation)."""
    stops = ("</tool_call>", "</answer>")
    checker = StopChecker(stops, True)
    seen = ""
    for ch in text:
        seen += ch
        if checker.done(seen, ch):
            break
    cut, found = truncate_at_stop(text, stops)
    assert cut == seen and found == (seen != text or checker.done(text, text[-1]))


def test_bad_arguments():
    with pytest.raises(ValueError):
        OpenAIAgent("ftp://x/v1", "m")
    with pytest.raises(ValueError):
        OpenAIAgent("http://127.0.0.1:1/v1", "m", timeout=0)


def test_eval_sends_each_turn_the_whole_conversation_concurrently(server, tmp_path):
    server.default = reply(obj=completion("Let me think about it first."))  # no answer: a second turn
    agent = OpenAIAgent(server.url, "tiny", max_workers=4)
    cfg = EvalConfig("SolverTool-v0", agent="openai", instances=2, n_samples=2, env_kwargs={"max_turns": 2})
    run_eval(cfg, tmp_path / "run", agent=agent, progress=False)
    recs = load_records(tmp_path / "run")
    assert len(recs) == 4 and all(r["turns"] == 2 for r in recs)
    second = [r["json"]["messages"] for r in server.requests if len(r["json"]["messages"]) > 1]
    assert len(server.requests) == 8 and len(second) == 4
    for msgs in second:  # prompt, the first answer, the env's reply to it
        assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
        assert msgs[1]["content"] == "Let me think about it first." and "answer" in msgs[2]["content"]
