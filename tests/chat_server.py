"""A real HTTP server on 127.0.0.1 that speaks the chat-completions protocol, playing back scripted replies.

Shared by the tests of the llm agent, the strategies and the report; the `server` fixture in conftest.py
starts one per call and stops it after the test.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ChatServer:
    """Plays back scripted replies, each (status, body); or, given a function, answers body -> (status, body).
    A request with `"stream": true` gets a chat completion as server-sent events."""

    def __init__(self, replies):
        self.replies = replies if callable(replies) else list(replies)
        self.requests = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                server.requests.append({"path": self.path, "body": json.loads(self.rfile.read(length)),
                                        "auth": self.headers.get("Authorization")})
                if callable(server.replies):
                    status, body = server.replies(server.requests[-1]["body"])
                else:
                    status, body = server.replies.pop(0) if server.replies else (500, {"error": {"message": "no more"}})
                streamed = status == 200 and server.requests[-1]["body"].get("stream") and "choices" in body
                data = sse(body) if streamed else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/event-stream" if streamed else "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("retry-after-ms", "10")
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def completion(*calls, content=None):
    tool_calls = [{"id": f"call_{i}", "type": "function",
                   "function": {"name": name, "arguments": json.dumps(arguments)}}
                  for i, (name, arguments) in enumerate(calls)]
    message = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return 200, {"id": "c1", "object": "chat.completion", "created": 0, "model": "scripted",
                 "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
                 "usage": {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107}}


def sse(body: dict) -> bytes:
    """A chat completion as the server-sent events of a streamed one: its message, its finish, its usage."""
    base = {key: body[key] for key in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    choice = body["choices"][0]
    delta = dict(choice["message"])
    if "tool_calls" in delta:
        delta["tool_calls"] = [dict(call, index=i) for i, call in enumerate(delta["tool_calls"])]
    chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
              {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
              {**base, "choices": [], "usage": body.get("usage")}]
    return b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks) + b"data: [DONE]\n\n"
