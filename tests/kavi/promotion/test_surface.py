"""A version's capability surface, read from its code and proposal, widened by what the runtime observed."""

from typing import Any

from kavi.promotion.surface import narrowing, observed, surface_of, widening
from kavi.proposals.model import Proposal

CODE = b'''import json
import re
from typing import Any

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill

URL = "https://api.example.org/v1/items"


class S(BaseSkill[Any, Any]):
    def execute(self, input_data: Any) -> Any:
        self.vault.write_text("out.md", json.dumps(re.findall("x", "y")))
'''


def _proposal(word_count_spec: Any, **changes: Any) -> Proposal:
    return Proposal.model_validate({**word_count_spec(), **changes})


def test_the_surface_reads_imports_hosts_vault_writes_secrets_and_class(word_count_spec: Any) -> None:
    s = surface_of(CODE, _proposal(word_count_spec))
    assert s.imports == ("json", "re")  # the contract's own imports are not counted
    assert s.hosts == ("api.example.org",) and s.writes_vault is True
    assert s.side_effect_class == "READ_ONLY" and s.secrets == ()


def test_widening_names_each_addition_and_narrowing_each_removal(word_count_spec: Any) -> None:
    old = surface_of(b"import re\n", _proposal(word_count_spec))
    new = surface_of(CODE, _proposal(word_count_spec))
    assert widening(old, new) == ["imports: + json", "hosts: + api.example.org", "writes to the vault (it did not)"]
    assert widening(new, old) == []
    assert narrowing(new, old) == ["imports: - json", "hosts: - api.example.org", "no longer writes to the vault"]


def test_what_the_runtime_observed_counts_as_reached(word_count_spec: Any) -> None:
    declared = surface_of(b"import re\n", _proposal(word_count_spec))
    seen = observed(declared, [{"effect": "http.get", "url": "https://data.example.net/x?q=1", "ok": True},
                               {"effect": "secret.read", "name": "API_TOKEN"}, {"effect": "vault.write", "path": "a"}])
    assert seen.hosts == ("data.example.net",) and seen.secrets == ("API_TOKEN",) and seen.writes_vault
    # A new version that declares what the old one was only seen doing is not wider for it.
    assert widening(seen, seen) == []


def test_a_trusted_versions_observed_effects_come_from_the_execution_log(kavi_home: Any) -> None:
    """write_note (FILE_WRITE) seen fetching a host in its execution records: that host is part of what it reaches,
    read from the log's tail; a READ_ONLY version's log is never read."""
    from kavi.forge.surfaces import version_surface
    from kavi.runtime.records import ExecutionLog, ExecutionRecord
    from tests.factories import forge_ctx, trust_example

    trust_example(kavi_home, "write_note")
    ctx = forge_ctx(kavi_home)
    trusted = ctx.records.trusted("write_note")[0]
    log = ExecutionLog(kavi_home.executions_log)
    runs = (("write_note", trusted.source_sha256), ("write_note", "0" * 64), ("other", trusted.source_sha256))
    for name, sha in runs:
        log.append(ExecutionRecord(session_id="s", skill_name=name, source_hash=sha, side_effect_class="FILE_WRITE",
                                   input_json="{}", success=True, started_at="2026-11-29T00:00:00Z",
                                   finished_at="2026-11-29T00:00:01Z", duration_ms=1.0,
                                   effects=[{"effect": "http.get", "url": f"https://{name}-{sha[:4]}.example/x"}]))
    surface = version_surface(ctx, "write_note", trusted.source_sha256, None, "FILE_WRITE")
    assert f"write_note-{trusted.source_sha256[:4]}.example" in surface.hosts
    assert not any(h.startswith(("write_note-0000", "other-")) for h in surface.hosts)  # other versions, other skills
    assert version_surface(ctx, "write_note", trusted.source_sha256, None, "READ_ONLY").hosts == ()
