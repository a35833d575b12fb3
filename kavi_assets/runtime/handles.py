"""The handles as skills' tests import them: `from kavi_assets.runtime.handles import Vault, FixtureHttp`.

The handles live in the core (`kavi.runtime.vault`, `.http_client`, `.declared_secrets`); this path is the one
forged tests name, so it stays.
"""

from kavi.runtime.declared_secrets import DeclaredSecrets, SecretMissing, SecretNotDeclared, SecretsError
from kavi.runtime.http_client import FixtureHttp, HttpClient, HttpHandleError
from kavi.runtime.vault import Vault, VaultLimitError, VaultPathError, VaultWriteDenied

__all__ = [
    "DeclaredSecrets",
    "FixtureHttp",
    "HttpClient",
    "HttpHandleError",
    "SecretMissing",
    "SecretNotDeclared",
    "SecretsError",
    "Vault",
    "VaultLimitError",
    "VaultPathError",
    "VaultWriteDenied",
]
