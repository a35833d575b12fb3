"""`kavi serve` (trusted skills over MCP), `kavi tools` (the same tools as function-calling schemas) and
`kavi search` (find a trusted skill before forging one); `check_close_skills` is `kavi propose`'s warning."""

import contextlib
import json
import re
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.text import Text

from kavi.home import KaviHome
from kavi_assets.cli.console import make_console
from kavi_assets.cli.errors import cli_errors

console = make_console()
err_console = make_console(stderr=True)
HomeOpt = Annotated[str | None, typer.Option("--home", help="skills home (default: $KAVI_HOME or ~/.kavi)")]
AllowOpt = Annotated[list[str] | None, typer.Option(
    "--allow", help="also serve skills of this side-effect class (FILE_WRITE, NETWORK, SECRET_READ); repeatable")]
AllowSkillOpt = Annotated[list[str] | None, typer.Option(
    "--allow-skill", help="also serve this skill, whatever its class; repeatable")]


def _fail(message: str, code: int = 2) -> None:
    err_console.print(Text.assemble(("error: ", "bold red"), message), soft_wrap=True)
    raise typer.Exit(code)


def _policy(allow: list[str] | None, allow_skill: list[str] | None) -> Any:
    from kavi.proposals.model import NAME_RE
    from kavi.serve.catalog import ServePolicy
    from kavi.skills.base import SideEffectClass

    classes = {SideEffectClass.READ_ONLY}
    for raw in allow or []:
        try:
            classes.add(SideEffectClass(raw.strip().upper()))
        except ValueError:
            _fail(f"--allow {raw!r} is not a side-effect class: use one of "
                  + ", ".join(c.value for c in SideEffectClass))
    for name in allow_skill or []:
        if len(name) > 64 or not NAME_RE.fullmatch(name):
            _fail(f"--allow-skill {name[:80]!r} is not a skill name (lowercase snake_case)")
    return ServePolicy(frozenset(classes), frozenset(allow_skill or []))


def tool_server(home: KaviHome, policy: Any, *, poll_s: float = 1.0) -> Any:
    """The MCP tool server of a home, its calls made by the runner `kavi run` uses."""
    from kavi.serve.server import SkillToolServer
    from kavi_assets.cli.runtime_cmd import _runner

    return SkillToolServer(home, _runner, policy, poll_s=poll_s)


def serve(
    http: Annotated[bool, typer.Option("--http", help="streamable HTTP on loopback instead of stdio")] = False,
    host: Annotated[str, typer.Option("--host", help="address to bind with --http")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="port with --http", min=1, max=65535)] = 8765,
    allow_remote: Annotated[bool, typer.Option(
        "--allow-remote", help="allow a non-loopback --host (the server has no authentication)")] = False,
    allow: AllowOpt = None,
    allow_skill: AllowSkillOpt = None,
    poll: Annotated[float, typer.Option("--poll", help="seconds between checks for new versions",
                                        min=0.05, max=3600)] = 1.0,
    home: HomeOpt = None,
) -> None:
    """Serve the trusted skills as MCP tools (stdio by default; --http for streamable HTTP at /mcp). Only
    READ_ONLY skills unless --allow CLASS or --allow-skill NAME; every call runs like `kavi run` and is logged
    with the MCP client as its caller."""
    import anyio

    from kavi.serve.server import BindRefused, check_bind

    policy = _policy(allow, allow_skill)
    h = KaviHome.from_env(home).ensure()
    server = tool_server(h, policy, poll_s=poll)
    server.refresh()  # a ledger that cannot be read fails here, as one line, not inside the protocol
    if http:
        try:
            check_bind(host, allow_remote)
        except BindRefused as err:
            _fail(str(err))
        err_console.print(f"kavi serve: {len(server.catalog.tools)} tools at http://{host}:{port}/mcp "
                          f"(streamable HTTP); Ctrl-C stops", highlight=False)
        server.serve_http(host, port, allow_remote=allow_remote)
        return
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(server.serve_stdio)


def tools(
    fmt: Annotated[str, typer.Option("--format", help="openai, anthropic or mcp")] = "mcp",
    allow: AllowOpt = None,
    allow_skill: AllowSkillOpt = None,
    short: Annotated[bool, typer.Option("--short", help="one line per tool instead of JSON")] = False,
    home: HomeOpt = None,
) -> None:
    """Print the tools `kavi serve` would serve, as function-calling schemas (JSON) for OpenAI, Anthropic or MCP."""
    from kavi.serve.catalog import FORMATS

    if fmt not in FORMATS:
        _fail(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")
    server = tool_server(KaviHome.from_env(home).ensure(), _policy(allow, allow_skill))
    server.refresh()
    specs = list(server.catalog.tools.values())
    if short:
        for t in specs:
            console.print(f"{escape(t.tool_name)}  {t.skill.side_effect_class.value}  v{t.skill.version}  "
                          f"{escape(t.description)}", highlight=False, soft_wrap=True)
        for name, why in sorted(server.catalog.withheld.items()):
            console.print(f"[dim]{escape(name)}  not served: {escape(why)}[/]", highlight=False, soft_wrap=True)
        return
    typer.echo(json.dumps(FORMATS[fmt](specs), indent=2))


def tools_lines(home: KaviHome) -> list[str]:
    """The end of `kavi demo`: the trusted skills as `kavi tools --short` lists them, and how to serve them."""
    try:
        server = tool_server(home, _policy(None, None))
        server.refresh()
    except Exception as err:  # the demo's own result stands; this is only a pointer onwards
        return [f"Trusted skills as agent tools: could not be listed ({type(err).__name__}: {err})"]
    lines = ["Trusted skills as agent tools (kavi tools --short):"]
    for t in server.catalog.tools.values():
        lines.append(f"  {t.tool_name}  {t.skill.side_effect_class.value}  v{t.skill.version}")
    for name, why in sorted(server.catalog.withheld.items()):
        opt_in = re.search(r"--allow [A-Z_]+", why)
        lines.append(f"  {name}  not served" + (f" without {opt_in.group(0)}" if opt_in else f" ({why})"))
    lines.append(f"Serve them to an agent over MCP: kavi serve --home {home.root} (stdio; --http for HTTP on loopback)")
    return lines


def search(
    query: Annotated[str, typer.Argument(help="what the skill should do, in words")],
    limit: Annotated[int, typer.Option("--limit", min=1, max=50)] = 10,
    proposals: Annotated[bool, typer.Option("--proposals", help="rank proposals not yet trusted too")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    home: HomeOpt = None,
) -> None:
    """Rank trusted skills by how well they match QUERY: by meaning (the packaged embedding model, or the endpoint
    KAVI_EMBEDDINGS_URL names) and by words (BM25 over descriptions, names, fields and examples), fused."""
    from kavi.ledger.records import ForgeRecords
    from kavi.ledger.store import Ledger
    from kavi.search.documents import SearchError
    from kavi.search.embeddings import EmbeddingError
    from kavi.search.extensions import ExtensionMissing
    from kavi.search.index import open_index

    h = KaviHome.from_env(home).ensure()
    index = open_index(h, ForgeRecords(Ledger(h.ledger_path)))
    kinds = ("skill", "proposal") if proposals else ("skill",)
    try:
        hits = index.search(query, kinds=kinds, limit=limit)
    except (SearchError, ExtensionMissing, EmbeddingError) as err:
        _fail(str(err))
    hits, reranked_by, not_reranked = _model_rerank(query, hits)
    if as_json:
        typer.echo(json.dumps({"mode": index.mode, "ranking": index.describe, "reranked_by": reranked_by,
                               "not_reranked": not_reranked, "query": query,
                               "results": [x.to_dict() for x in hits]}, indent=2))
        return
    if not_reranked:
        err_console.print(f"[yellow]![/] not re-ranked by the model: {escape(not_reranked)}", highlight=False,
                          soft_wrap=True)
    if reranked_by:
        console.print(f"[dim]the top {len([x for x in hits if x.reason])} re-ranked by {escape(reranked_by)}, "
                      "with its reasons[/]", highlight=False)
    scale = "score 1.0 = as close as the skill's own text" if index.mode == "bm25" else \
        "score 0 = an unrelated task, 1.0 = the same task in other words"
    console.print(f"[dim]{escape(index.describe)}; {scale}[/]", highlight=False)
    if not hits:
        console.print("no trusted skill shares a term with the query", highlight=False)
    for x in hits:
        kind = "" if x.kind == "skill" else " (proposal)"
        console.print(f"{x.score:5.2f}  [bold]{escape(x.ref)}[/]{kind}  {x.side_effect_class}  "
                      f"{escape(x.description)}", highlight=False, soft_wrap=True)
        if x.reason:
            console.print(f"       [dim]why:[/] {escape(x.reason)}", highlight=False, soft_wrap=True)


def _model_rerank(query: str, hits: list[Any]) -> tuple[list[Any], str | None, str | None]:
    """The hits re-ranked by the configured model (KAVI_LLM_BASE_URL; KAVI_SEARCH_RERANK=0 turns it off): (hits,
    the model that re-ranked them, why they were not re-ranked). No endpoint: the fused order, nothing said."""
    from kavi.llm.client import LLMClient, llm_settings
    from kavi.search.rerank import RerankError, rerank
    from kavi.settings import load_settings

    settings = load_settings()
    endpoint = llm_settings(settings)
    if endpoint is None or not settings.search_rerank or not hits:
        return hits, None, None
    try:
        return rerank(LLMClient(endpoint), query, hits), endpoint.models[0], None
    except RerankError as err:
        return hits, None, str(err)


def check_close_skills(home: KaviHome, proposal: Any, force: bool) -> None:
    """`kavi propose`: warn when a trusted skill is close to the proposal, and refuse it as a duplicate unless
    --force when the evidence says a close skill does its task (kavi.search.guard). A search that cannot run is a
    warning, never a refusal."""
    from kavi.search.index import SearchConfig

    config = SearchConfig.from_env()  # a bad threshold is a ConfigError: one line, exit 2
    refusal = show_close_skills(home, proposal, config=config)
    if refusal is not None and not force:
        _fail(refusal)


def show_close_skills(home: KaviHome, proposal: Any, *, records: Any = None, config: Any = None) -> str | None:
    """The duplicate guard as every command runs it: the close trusted skills printed, and the refusal returned
    (None when no skill does the proposal's task, or when the search cannot run, which is said on stderr)."""
    from kavi.ledger.records import ForgeRecords
    from kavi.ledger.store import Ledger
    from kavi.search.guard import check_duplicates

    try:
        result = check_duplicates(home, records or ForgeRecords(Ledger(home.ledger_path)), proposal, config)
    except Exception as err:  # the extension or an embedding endpoint: proposing still works without search
        err_console.print(f"[yellow]![/] could not search for close trusted skills: {escape(str(err))}",
                          highlight=False, soft_wrap=True)
        return None
    for line in result.warnings():
        console.print(f"[yellow]![/] {escape(line)}", highlight=False, soft_wrap=True)
    return result.refusal()


def register(app: typer.Typer) -> None:
    app.command("serve")(cli_errors(serve))
    app.command("tools")(cli_errors(tools))
    app.command("search")(cli_errors(search))
