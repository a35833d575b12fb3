"""The handles as skills' tests import them: `from kavi_assets.runtime.handles import Vault, FixtureHttp`.

The handles live in the core (`kavi.runtime.handles`); this path is the one forged tests name, so it stays.
"""

from kavi.runtime.handles import (
    DeclaredSecrets,
    FixtureHttp,
    HttpClient,
    HttpHandleError,
    SecretMissing,
    SecretNotDeclared,
    SecretsError,
    Vault,
    VaultLimitError,
    VaultPathError,
    VaultWriteDenied,
)

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
