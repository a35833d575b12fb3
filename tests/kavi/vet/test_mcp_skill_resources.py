"""`kavi serve` offers each served skill's Agent Skills folder as MCP resources with digests (the skills
extension's shape), beside the tools: read with the official SDK's client over stdio."""

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from typer.testing import CliRunner

from kavi.home import KaviHome
from kavi_assets.cli.main import app

SOURCES = Path(__file__).parent / "sources"


def test_served_skills_are_resources_with_digests(kavi_home: KaviHome, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAVI_AUTO_APPROVE", "READ_ONLY")
    folder = tmp_path / "isbn-check"
    shutil.copytree(SOURCES / "isbn-check", folder)
    res = CliRunner().invoke(app, ["vet", str(folder), "--proposal", str(SOURCES / "isbn_check.yaml")])
    assert res.exit_code == 0, res.output
    params = StdioServerParameters(command=sys.executable, args=["-m", "kavi_assets.cli", "serve"],
                                   env={**os.environ, "KAVI_HOME": str(kavi_home.root)})

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            seen["extension"] = (init.capabilities.experimental or {}).get("io.modelcontextprotocol/skills")
            seen["listed"] = {str(r.uri): r for r in (await session.list_resources()).resources}
            seen["index"] = await session.read_resource("skill://index.json")  # type: ignore[arg-type]
            seen["skill_md"] = await session.read_resource("skill://isbn-check/SKILL.md")  # type: ignore[arg-type]
            seen["code"] = await session.read_resource(
                "skill://isbn-check/scripts/isbn_check.py")  # type: ignore[arg-type]
            try:
                await session.read_resource("skill://isbn-check/../../ledger.duckdb")  # type: ignore[arg-type]
                seen["outside"] = "read"
            except Exception as err:  # the SDK raises the server's error
                seen["outside"] = str(err)
            seen["tools"] = [t.name for t in (await session.list_tools()).tools]
        return seen

    seen = anyio.run(scenario)
    assert seen["extension"] == {}
    assert "isbn_check" in seen["tools"]
    listed = seen["listed"]
    assert {"skill://index.json", "skill://isbn-check/SKILL.md", "skill://isbn-check/scripts/isbn_check.py",
            "skill://isbn-check/attestation.json", "skill://isbn-check/attestations/vsa.json"} <= set(listed)
    index = json.loads(seen["index"].contents[0].text)
    entry = index["skills"][0]
    assert entry["name"] == "isbn-check" and entry["url"] == "skill://isbn-check/SKILL.md"
    code = seen["code"].contents[0].text.encode()
    by_path = {f["path"]: f for f in entry["files"]}
    assert by_path["scripts/isbn_check.py"]["digest"] == "sha256:" + hashlib.sha256(code).hexdigest()
    assert listed["skill://isbn-check/scripts/isbn_check.py"].meta["digest"] == by_path["scripts/isbn_check.py"][
        "digest"]
    assert seen["skill_md"].contents[0].text.startswith("---\nname: isbn-check\n")
    assert seen["outside"] != "read"
