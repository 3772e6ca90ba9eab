"""``OpenAIAgent``: any OpenAI-compatible ``/chat/completions`` server as an agent.

Works with the OpenAI API, vLLM's ``vllm serve`` / ``python -m vllm.entrypoints.openai.api_server``,
llama.cpp's server, SGLang, TGI... Standard library only (``urllib``): no ``openai`` package.

- ``act(observations)`` sends each observation as a one-turn chat (with ``system_prompt`` first
  when given), several requests at once (``max_workers`` threads), and returns the texts in order.
  ``chat(messages)`` sends a whole conversation and returns a :class:`ChatResult`.
- Requests that fail for a passing reason are retried up to ``max_retries`` times with exponential
  backoff (``backoff * 2**k`` seconds, at most ``max_backoff``, or the server's ``Retry-After``
  when it gives one): connection errors (refused, reset, closed early), timeouts, HTTP 408, 429 and
  5xx. Any other HTTP error (400 bad request, 401 bad key, 404 unknown model...) raises
  :class:`OpenAIError` at once with the server's own message; so does a 200 whose body is not a
  chat completion.
- ``timeout`` bounds each attempt: connecting, and every wait for data, is given that many seconds,
  and reading a response body stops once the attempt has lasted that long.
- Stop strings (default ``</tool_call>`` and ``</answer>``, as HFAgent) are sent as ``stop``. The
  API drops the matched stop string from the text; it is put back (vLLM names it in
  ``stop_reason``; otherwise a ``</tag>`` stop closes a ``<tag>`` the text left open), so an env
  sees the same text as from HFAgent. The text is then cut at the first stop string and, with
  ``stop_at_answer_block``, after the first complete ```` ```answer``` ```` / ```` ```idk``` ````
  block, which a server cannot stop at by itself (HFAgent's :class:`~solvergym.agents.hf.StopChecker`
  rule, applied to the finished text).
- Requests to a loopback host (127.0.0.0/8, ``localhost``, ``::1``) never go through an HTTP proxy
  from the environment.
"""
from __future__ import annotations

import http.client
import ipaddress
import json
import os
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..envs.parsing import fenced_blocks

__all__ = ["OpenAIAgent", "OpenAIError", "ChatResult", "truncate_at_stop", "RETRY_STATUS"]

DEFAULT_STOP: tuple[str, ...] = ("</tool_call>", "</answer>")  # HFAgent's (agents.hf.DEFAULT_STOP)
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class OpenAIError(RuntimeError):
    """A request that failed for good. ``status`` is the HTTP status (None without a response),
    ``body`` the server's response text, ``attempts`` how many requests were sent."""

    def __init__(self, message: str, *, status: int | None = None, body: str | None = None, attempts: int = 1):
        super().__init__(message)
        self.status, self.body, self.attempts = status, body, attempts


class _Retryable(Exception):
    def __init__(self, reason: str, status: int | None = None, body: str | None = None,
                 retry_after: float | None = None):
        super().__init__(reason)
        self.reason, self.status, self.body, self.retry_after = reason, status, body, retry_after


@dataclass
class ChatResult:
    text: str
    finish_reason: str  # the server's ("stop" / "length" / ...) or "stop" when cut here
    usage: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def clipped(self) -> bool:
        """Whether ``max_tokens`` cut the completion: the server's ``finish_reason == "length"``
        (a text cut here at a stop string or an answer block is "stop": it ended on its own)."""
        return self.finish_reason == "length"


def truncate_at_stop(text: str, stops: Sequence[str], answer_block: bool = True) -> tuple[str, bool]:
    """``text`` up to and including the first stop string or (``answer_block``) the end of the
    first complete ```` ```answer``` ```` / ```` ```idk``` ```` block, whichever ends first;
    ``(text, cut)`` with ``cut`` True when something was found."""
    end = None
    for s in stops:
        if s:
            i = text.find(s)
            if i != -1 and (end is None or i + len(s) < end):
                end = i + len(s)
    if answer_block and "```" in text:
        for block in fenced_blocks(text):
            if block.info in ("answer", "idk"):  # what final_answer_block (StopChecker) accepts
                if end is None or block.end < end:
                    end = block.end
                break
    if end is None:
        return text, False
    return text[:end], True


def _restore_stop(text: str, stops: Sequence[str], stop_reason: Any) -> str:
    """Put back the stop string a server dropped (see the module docstring)."""
    if isinstance(stop_reason, str) and stop_reason in stops:
        return text if text.endswith(stop_reason) else text + stop_reason
    for s in stops:
        if s.startswith("</") and s.endswith(">"):
            opener = "<" + s[2:]
            if text.rfind(opener) > text.rfind(s):
                return text + s
    return text


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class OpenAIAgent:
    """An OpenAI-compatible chat/completions endpoint as an agent (see the module docstring).

    ``base_url`` is the API root, e.g. ``http://127.0.0.1:8000/v1`` (``/chat/completions`` is
    appended unless it is already there); ``api_key`` defaults to ``$OPENAI_API_KEY`` and is sent
    as a bearer token when set. ``extra_body`` is merged into every request (server-specific
    fields, e.g. vLLM's ``{"include_stop_str_in_output": true}`` or ``top_k``).
    """

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        system_prompt: str | None = None,
        max_tokens: int = 256,
        temperature: float = 1.0,
        top_p: float = 1.0,
        stop: Sequence[str] | None = DEFAULT_STOP,
        stop_at_answer_block: bool = True,
        seed: int | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        max_workers: int = 4,
        extra_body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ):
        if timeout <= 0 or max_retries < 0 or backoff < 0 or max_workers < 1:
            raise ValueError("need timeout > 0, max_retries >= 0, backoff >= 0, max_workers >= 1")
        url = base_url.rstrip("/")
        if not url.endswith("/chat/completions"):
            url += "/chat/completions"
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        self.url, self.model = url, model
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.system_prompt = system_prompt
        self.max_tokens, self.temperature, self.top_p, self.seed = max_tokens, temperature, top_p, seed
        self.stop = tuple(s for s in (stop or ()) if s)
        self.stop_at_answer_block = stop_at_answer_block
        self.timeout, self.max_retries = float(timeout), int(max_retries)
        self.backoff, self.max_backoff = float(backoff), float(max_backoff)
        self.max_workers = max_workers
        self.extra_body = dict(extra_body or {})
        self.headers = dict(headers or {})
        handlers = [urllib.request.ProxyHandler({})] if _is_loopback(parts.hostname) else []
        self._opener = urllib.request.build_opener(*handlers)

    # ------------------------------------------------------------------ the agent protocol
    def act(self, observations: Sequence[str], envs: Sequence[Any] | None = None) -> list[str]:
        return [r.text for r in self.chat_many([[{"role": "user", "content": o}] for o in observations])]

    def chat_many(self, conversations: Sequence[Sequence[dict[str, str]]]) -> list[ChatResult]:
        """One completion per conversation, up to ``max_workers`` requests in flight, in order."""
        convs = list(conversations)
        if len(convs) <= 1 or self.max_workers == 1:
            return [self.chat(c) for c in convs]
        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(convs))) as pool:
            return list(pool.map(self.chat, convs))

    def chat(self, messages: Sequence[dict[str, str]], **overrides: Any) -> ChatResult:
        """One chat completion of ``messages``; ``overrides`` replace request fields."""
        messages = list(messages)
        if self.system_prompt and (not messages or messages[0].get("role") != "system"):
            messages = [{"role": "system", "content": self.system_prompt}, *messages]
        payload: dict[str, Any] = {
            "model": self.model, "messages": messages, "max_tokens": self.max_tokens,
            "temperature": self.temperature, "top_p": self.top_p,
        }
        if self.stop:
            payload["stop"] = list(self.stop)
        if self.seed is not None:
            payload["seed"] = self.seed
        payload.update(self.extra_body)
        payload.update(overrides)
        data = self.request(payload)
        try:
            choice = data["choices"][0]
            text = choice["message"]["content"] or ""
        except (KeyError, IndexError, TypeError) as e:
            raise OpenAIError(f"{self.url}: not a chat completion: {json.dumps(data)[:500]}",
                              status=200, body=json.dumps(data)) from e
        finish = choice.get("finish_reason") or "stop"
        stops = list(payload.get("stop") or [])
        if finish == "stop" and stops:
            text = _restore_stop(text, stops, choice.get("stop_reason"))
        text, cut = truncate_at_stop(text, stops, self.stop_at_answer_block)
        if cut:
            finish = "stop"
        return ChatResult(text, finish, data.get("usage") or {}, data)

    # ------------------------------------------------------------------ HTTP with retries
    def request(self, payload: dict[str, Any]) -> dict[str, Any]:
        """POST ``payload`` as JSON with the retry policy; the decoded JSON response."""
        body = json.dumps(payload).encode()
        attempts = 0
        while True:
            attempts += 1
            try:
                return self._attempt(body)
            except _Retryable as e:
                if attempts > self.max_retries:
                    raise OpenAIError(f"{self.url}: {e.reason} (gave up after {attempts} attempts)",
                                      status=e.status, body=e.body, attempts=attempts) from e
                delay = min(self.max_backoff, self.backoff * (2 ** (attempts - 1)))
                if e.retry_after is not None:
                    delay = min(self.max_backoff, max(0.0, e.retry_after))
                time.sleep(delay)
            except OpenAIError as e:
                e.attempts = attempts
                raise

    def _attempt(self, body: bytes) -> dict[str, Any]:
        headers = {"Content-Type": "application/json", "Accept": "application/json", **self.headers}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        deadline = time.monotonic() + self.timeout
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                raw = self._read(resp, deadline)
                status = resp.status
        except urllib.error.HTTPError as e:
            try:
                text = e.read().decode("utf-8", "replace")
            except Exception:  # the body may be cut short too
                text = ""
            finally:
                e.close()
            msg = _error_message(text) or e.reason
            if e.code in RETRY_STATUS or e.code >= 500:
                raise _Retryable(f"HTTP {e.code}: {msg}", e.code, text, _retry_after(e.headers)) from None
            raise OpenAIError(f"{self.url}: HTTP {e.code}: {msg}", status=e.code, body=text) from None
        except urllib.error.URLError as e:
            if isinstance(e.reason, (TimeoutError, socket.timeout)):
                raise _Retryable(f"timed out after {self.timeout:g} s") from None
            raise _Retryable(f"cannot connect: {e.reason}") from None
        except (TimeoutError, socket.timeout):
            raise _Retryable(f"timed out after {self.timeout:g} s") from None
        except (ConnectionError, http.client.HTTPException, OSError) as e:
            raise _Retryable(f"connection failed: {type(e).__name__}: {e}") from None
        text = raw.decode("utf-8", "replace")
        try:
            data = json.loads(text)
        except ValueError:
            raise OpenAIError(f"{self.url}: HTTP {status} with a body that is not JSON: {text[:200]!r}",
                              status=status, body=text) from None
        if not isinstance(data, dict):
            raise OpenAIError(f"{self.url}: HTTP {status} with unexpected JSON: {text[:200]!r}",
                              status=status, body=text)
        return data

    def _read(self, resp, deadline: float) -> bytes:
        chunks = []
        while True:
            if time.monotonic() > deadline:
                raise TimeoutError
            chunk = resp.read1(1 << 16)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)

    def __repr__(self) -> str:
        return f"OpenAIAgent({self.url!r}, model={self.model!r})"


def _error_message(text: str) -> str:
    """The ``error.message`` of an OpenAI-style error body, else the body's start."""
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip()[:300]
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
        if data.get("detail"):
            return str(data["detail"])
        if data.get("message"):
            return str(data["message"])
    return text.strip()[:300]


def _retry_after(headers: Any) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None  # an HTTP date: fall back to the exponential backoff
