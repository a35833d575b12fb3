"""`kavi serve`: the trusted skills as an MCP server (the official `mcp` SDK's low-level server).

Every call goes through the runner `kavi run` uses (made by the same factory): the ledger's trusted versions,
the trust loader's hash check before any import, the handles of the skill's class, and one execution record per
run with the caller set to the MCP client's name and version from its initialize request. A refusal (tampered,
revoked, not trusted, a class not served, input the schema does not name) is a tool result with isError, never a
protocol error or a crash, and is recorded like a run; no tool error carries the home's absolute path or a traceback.

The server notices a promotion or a revocation by watching the ledger's and the registry's files (a stat every
`poll_s`; the ledger is read only when one of them changed) and sends `notifications/tools/list_changed` to
every session that has talked to it. A call checks the same files first, so a revocation is refused at once.
"""

import contextlib
import functools
import ipaddress
import json
import os
import sys
import threading
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from io import TextIOWrapper
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.session import ServerSession

from kavi.home import KaviHome
from kavi.runtime.errors import RuntimeRefusal
from kavi.serve.catalog import SEARCH_TOOL, Catalog, ServePolicy, as_mcp, build_catalog, tool_ref
from kavi.serve.skill_resources import EXTENSION, SkillResources

# (runner, execution log, trusted versions): what `kavi run` builds (kavi_assets.cli.runtime_cmd._runner).
RunnerFactory = Callable[[KaviHome], tuple[Any, Any, Any]]
MAX_CALLER_PART = 80
INSTRUCTIONS = ("Tools are the trusted skills of a Kavi forge: each was generated, passed every gate and was "
                "approved by a person. Call search_skills to find one before asking for a new skill.")


class _Server(Server[Any, Any]):
    """The SDK's server, announcing `tools.listChanged` however a transport asks for its options (the streamable
    HTTP session manager asks without notification options)."""

    def create_initialization_options(self, notification_options: NotificationOptions | None = None,
                                      experimental_capabilities: dict[str, dict[str, Any]] | None = None) -> Any:
        # The skills extension, declared where this SDK lets a server declare one (experimental capabilities).
        return super().create_initialization_options(notification_options or NotificationOptions(tools_changed=True),
                                                     {EXTENSION: {}, **(experimental_capabilities or {})})


class BindRefused(ValueError):
    """A non-loopback address without the explicit flag."""


def _clean(text: object) -> str:
    return "".join(c for c in str(text) if c.isprintable())[:MAX_CALLER_PART] or "?"


def caller_of(session: Any) -> str:
    """`mcp:NAME/VERSION` from the client's initialize request (printable characters, bounded)."""
    params = getattr(session, "client_params", None)
    info = getattr(params, "clientInfo", None)
    if info is None:
        return "mcp:unknown"
    return f"mcp:{_clean(getattr(info, 'name', '?'))}/{_clean(getattr(info, 'version', '?'))}"


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True)


def check_bind(host: str, allow_remote: bool) -> None:
    if host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        raise BindRefused(f"--host {host!r} is not an IP address (or localhost)") from None
    if not loopback and not allow_remote:
        raise BindRefused(f"--host {host} is not a loopback address: the tools would be reachable from other "
                          "machines without authentication; pass --allow-remote to do it anyway")


class SkillToolServer:
    """The trusted skills of one home as MCP tools (and the state the MCP handlers share)."""

    def __init__(self, home: KaviHome, make_runner: RunnerFactory, policy: ServePolicy | None = None, *,
                 search: bool = True, poll_s: float = 1.0) -> None:
        self.home = home
        self._make_runner = make_runner
        self.policy = policy or ServePolicy()
        self.search_enabled = search
        self.poll_s = poll_s
        self._lock = threading.Lock()
        self._signature: tuple[Any, ...] | None = None
        self._runner: Any = None
        self._records: Any = None
        self._search: Any = None
        self.catalog = Catalog()
        self.refreshes = 0
        self._sessions: weakref.WeakSet[ServerSession] = weakref.WeakSet()
        self._workers: Any = None
        self._in_flight: set[threading.Event] = set()
        self.skill_files = SkillResources(home)

    @property
    def workers(self) -> Any:
        """The pool of contained workers every call runs in (started on first use, KAVI_RUN_WORKERS of them)."""
        with self._lock:
            if self._workers is None:
                from kavi.runtime.worker import WorkerPool
                from kavi.settings import read_setting

                self._workers = WorkerPool(read_setting("run_workers"))
            return self._workers

    def close(self) -> None:
        """Stop every call in flight (their workers are killed) and the pool's waiting workers."""
        for event in list(self._in_flight):
            event.set()
        if self._workers is not None:
            self._workers.close()

    # -- the ledger, watched -------------------------------------------------------------------------------
    def _file_signature(self) -> tuple[Any, ...]:
        marks: list[Any] = []
        for path in (self.home.ledger_path, Path(f"{self.home.ledger_path}.wal"), self.home.registry_path):
            try:
                st = path.stat()
                marks.append((st.st_ino, st.st_size, st.st_mtime_ns))
            except OSError:
                marks.append(None)
        return tuple(marks)

    def refresh(self, force: bool = False) -> bool:
        """Re-read the ledger when its files changed; True when the list of tools changed."""
        with self._lock:
            signature = self._file_signature()  # before reading: a change during the read is seen next time
            if not force and self._runner is not None and signature == self._signature:
                return False
            runner, _, trusted = self._make_runner(self.home)
            runner.workers = self._workers
            records = trusted.records
            meta = {(t.name, t.version): t for t in records.trusted_versions()}
            catalog = build_catalog(trusted.by_name, meta, self.policy, runner.loader)
            changed = self._runner is not None and catalog.key != self.catalog.key
            self._runner, self._records, self.catalog, self._signature = runner, records, catalog, signature
            self.refreshes += 1
            return changed

    def tools(self) -> list[types.Tool]:
        self.refresh()
        return [types.Tool.model_validate(d) for d in as_mcp(self.catalog.tools.values(), self.search_enabled)]

    # -- calls ---------------------------------------------------------------------------------------------
    def call(self, tool_name: str, arguments: Any, caller: str,
             cancelled: threading.Event | None = None) -> types.CallToolResult:
        """Run one tool call to completion (blocking: the MCP handler runs it in a thread); setting `cancelled` kills
        its worker (the client cancelled the request or went away)."""
        if not isinstance(tool_name, str):
            return _error("the tool name must be text")
        if tool_name == SEARCH_TOOL and self.search_enabled:
            return self._search_call(arguments)
        try:
            self.refresh()
        except Exception as exc:  # a locked or unreadable ledger: the call cannot be checked, so it is refused
            return _error(f"the ledger could not be read, so {tool_name[:80]!r} was not run: "
                          f"{type(exc).__name__}: {self._relative(str(exc))}")
        ref = tool_ref(tool_name)
        if ref is None:
            return _error(f"no tool named {tool_name[:80]!r}: tools are trusted skill names (NAME, or NAME__vN "
                          "for a pinned version)")
        runner = self._runner
        runner.workers = self.workers

        def admit(skill: Any) -> str | None:
            # Served means opted in: the --allow flags are this server's confirmation of side effects.
            served = self.policy.serves(skill.name, skill.side_effect_class)
            return None if served else self.policy.why_not(skill.name, skill.side_effect_class)

        try:
            data = self._bounded(arguments)
            # Every call goes through the runner, withheld tools too: its refusals (class not served, tampered,
            # revoked, schema) are execution records.
            record = runner.run(ref, data, confirmed=True, caller=caller, admit=admit, cancelled=cancelled)
        except RuntimeRefusal as exc:
            refused = getattr(exc, "record", None)
            return _error(f"refused: {self._relative(str(exc))}"
                          + (f" (execution {refused.short_id})" if refused is not None else ""))
        except ValueError as exc:  # the arguments' bounds (BoundsError)
            return _error(f"the arguments of {tool_name} were refused: {self._relative(str(exc))}")
        except Exception as exc:  # said in one line, never a traceback
            return _error(f"{tool_name} could not be run: {type(exc).__name__}: {self._relative(str(exc))}")
        meta = {"kavi/execution_id": record.execution_id, "kavi/ref": record.skill_name +
                (f"@{record.skill_version}" if record.skill_version is not None else ""),
                "kavi/duration_ms": record.duration_ms}
        if not record.success:
            what = "was refused" if record.refusal is not None else "failed"
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"{tool_name} {what} (execution {record.short_id}): "
                                                             f"{record.error}")],
                isError=True, _meta=meta)
        output = record.output_data()
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(output))],
                                    structuredContent=output if isinstance(output, dict) else None,
                                    isError=False, _meta=meta)

    def _relative(self, text: str) -> str:
        """`text` with the skills home's absolute path taken out (paths relative to the home)."""
        for root in sorted({str(self.home.root), str(self.home.root.resolve())}, key=len, reverse=True):
            text = text.replace(root + os.sep, "").replace(root, ".")
        return text

    @staticmethod
    def _bounded(arguments: Any) -> dict[str, Any]:
        """The arguments within the run-input bounds `kavi run --json` applies (size, depth, strings, numbers)."""
        from kavi.proposals.bounds import RUN_INPUT_BOUNDS, parse_json_bounded

        if arguments is None:
            return {}
        if not isinstance(arguments, dict):
            raise ValueError("arguments must be a JSON object of the skill's input fields")
        data = parse_json_bounded(json.dumps(arguments), RUN_INPUT_BOUNDS, "arguments")
        if not isinstance(data, dict):
            raise ValueError("arguments must be a JSON object of the skill's input fields")
        return data

    def _search_call(self, arguments: Any) -> types.CallToolResult:
        from kavi.search.documents import MAX_QUERY_CHARS, SearchError
        from kavi.search.index import open_index

        args = arguments if isinstance(arguments, dict) else {}
        query, limit = args.get("query"), args.get("limit", 5)
        if not isinstance(query, str) or not isinstance(limit, int) or isinstance(limit, bool):
            return _error(f"search_skills takes a query (text, at most {MAX_QUERY_CHARS} characters) and a limit "
                          "(a whole number from 1 to 20)")
        try:
            self.refresh()
            if self._search is None:
                self._search = open_index(self.home, self._records)
            hits = self._search.search(query, limit=max(1, min(limit, 20)))
        except SearchError as exc:
            return _error(f"search refused: {self._relative(str(exc))}")
        except Exception as exc:  # the extension, the ledger or the embedding endpoint: said, not raised
            return _error(f"search failed: {type(exc).__name__}: {self._relative(str(exc))}")
        served = {spec.ref: name for name, spec in self.catalog.tools.items()}
        results = [{**h.to_dict(), "tool": served.get(h.ref)} for h in hits]
        body = {"mode": self._search.mode, "ranking": self._search.describe, "results": results}
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(body))],
                                    structuredContent=body, isError=False)

    # -- the MCP server ------------------------------------------------------------------------------------
    async def _notify_sessions(self) -> None:
        for session in list(self._sessions):
            try:
                await session.send_tool_list_changed()
            except Exception:  # a session that went away: forget it
                self._sessions.discard(session)

    async def watch(self) -> None:
        """Poll the ledger's files and tell every session when the tools changed."""
        while True:
            await anyio.sleep(self.poll_s)
            try:
                changed = await anyio.to_thread.run_sync(self.refresh)
            except Exception:  # a locked ledger: try again at the next tick
                continue
            if changed:
                await self._notify_sessions()

    def build_server(self) -> Server[Any, Any]:
        from kavi import __version__

        @asynccontextmanager
        async def lifespan(_: Server[Any, Any]) -> AsyncIterator[dict[str, Any]]:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.watch)
                try:
                    yield {}
                finally:
                    tg.cancel_scope.cancel()
                    self.close()

        server: Server[Any, Any] = _Server("kavi-forge", version=__version__, instructions=INSTRUCTIONS,
                                          lifespan=lifespan)

        def remember() -> None:
            with contextlib.suppress(LookupError):  # the SDK's own cache refresh runs outside a request
                self._sessions.add(server.request_context.session)

        async def refreshed() -> None:
            # A change noticed by a request (before the watcher's next tick) is announced all the same.
            with contextlib.suppress(Exception):  # a locked ledger: the request itself says so
                if await anyio.to_thread.run_sync(self.refresh):
                    await self._notify_sessions()

        @server.list_tools()  # type: ignore[no-untyped-call,untyped-decorator]
        async def list_tools() -> list[types.Tool]:
            remember()
            await refreshed()
            return await anyio.to_thread.run_sync(self.tools)

        @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
        async def call_tool(name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
            remember()
            await refreshed()
            caller = caller_of(server.request_context.session)
            cancelled = threading.Event()
            self._in_flight.add(cancelled)
            try:
                # Abandoned on cancellation (the client cancelled, or went away): the event kills the call's worker.
                return await anyio.to_thread.run_sync(functools.partial(self.call, name, arguments, caller, cancelled),
                                                      abandon_on_cancel=True)
            finally:
                cancelled.set()
                self._in_flight.discard(cancelled)

        @server.list_resources()  # type: ignore[no-untyped-call,untyped-decorator]
        async def list_resources() -> list[types.Resource]:
            remember()
            rows = await anyio.to_thread.run_sync(self.resource_rows)
            return [types.Resource.model_validate(r) for r in rows]

        @server.read_resource()  # type: ignore[no-untyped-call,untyped-decorator]
        async def read_resource(uri: Any) -> list[ReadResourceContents]:
            found = await anyio.to_thread.run_sync(self.read_skill_file, str(uri))
            if found is None:
                raise ValueError(f"no served skill file at {str(uri)[:200]}")
            data, mime = found
            return [ReadResourceContents(content=data.decode("utf-8", "replace"), mime_type=mime)]

        return server

    def served_versions(self) -> list[tuple[str, int]]:
        """The latest version of each served tool: what the skills extension's resources offer."""
        self.refresh()
        return sorted({(spec.skill.name, int(spec.skill.version)) for spec in self.catalog.tools.values()
                       if spec.latest and spec.skill.version is not None})

    def resource_rows(self) -> list[dict[str, Any]]:
        return self.skill_files.listing(self.served_versions())

    def read_skill_file(self, uri: str) -> tuple[bytes, str] | None:
        return self.skill_files.read(uri, self.served_versions())

    async def serve_stdio(self) -> None:
        """Serve on stdin/stdout. The protocol gets its own copy of stdout; file descriptor 1 and sys.stdout then
        point at stderr, so a skill (or a library) that prints cannot corrupt the JSON-RPC stream."""
        from mcp.server.stdio import stdio_server

        protocol_fd = os.dup(1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        out = anyio.wrap_file(TextIOWrapper(os.fdopen(protocol_fd, "wb"), encoding="utf-8"))
        server = self.build_server()
        async with stdio_server(stdout=out) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    def serve_http(self, host: str, port: int, *, allow_remote: bool = False) -> None:
        """Streamable HTTP at http://HOST:PORT/mcp, loopback unless allow_remote; DNS-rebinding protection on."""
        import uvicorn
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from mcp.server.transport_security import TransportSecuritySettings
        from starlette.applications import Starlette
        from starlette.routing import Route
        from starlette.types import Receive, Scope, Send

        check_bind(host, allow_remote)
        hosts = [f"{host}:{port}", f"localhost:{port}", f"127.0.0.1:{port}"]
        security = TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                             allowed_origins=[f"http://{h}" for h in hosts])
        server = self.build_server()
        manager = StreamableHTTPSessionManager(app=server, security_settings=security)

        class Endpoint:
            """A raw ASGI endpoint (Starlette wraps a plain function as request/response; a Mount would redirect
            /mcp to /mcp/)."""

            async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
                await manager.handle_request(scope, receive, send)

        @asynccontextmanager
        async def app_lifespan(_: Starlette) -> AsyncIterator[None]:
            async with manager.run():
                yield

        app = Starlette(routes=[Route("/mcp", endpoint=Endpoint())], lifespan=app_lifespan)
        uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()
