"""The context a skill runs with: exactly the handles its side-effect class grants."""

from collections.abc import Mapping, Sequence
from pathlib import Path

from kavi.runtime.declared_secrets import DeclaredSecrets
from kavi.runtime.http_client import HttpClient
from kavi.runtime.vault import Vault
from kavi.skills.base import HttpHandle, ModelHandle, SideEffectClass, SkillContext


def context_for(
    side_effect_class: SideEffectClass,
    *,
    vault_root: Path,
    declared_secrets: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    http: HttpHandle | None = None,
    llm: ModelHandle | None = None,
    private_hosts: Sequence[str] | None = None,
) -> SkillContext:
    """Grant exactly what the class allows: vault read for all, write for FILE_WRITE, http for NETWORK,
    declared secrets for SECRET_READ. The classes are not cumulative: a NETWORK skill cannot write.
    The configured model endpoint, when there is one, is offered to every class. `private_hosts`: the hosts a real
    HTTP client may reach at loopback, link-local or private addresses (None: no address check, as in a gate)."""
    cls = SideEffectClass(side_effect_class)
    vault = Vault(vault_root, writable=cls is SideEffectClass.FILE_WRITE)
    client: HttpHandle | None = None
    if cls is SideEffectClass.NETWORK:
        client = http if http is not None else HttpClient(private_hosts=private_hosts)
    secrets = DeclaredSecrets.from_environ(declared_secrets, environ) if cls is SideEffectClass.SECRET_READ else None
    return SkillContext(vault=vault, http=client, secrets=secrets, llm=llm)
