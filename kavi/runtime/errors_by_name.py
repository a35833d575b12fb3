"""The exceptions a handle may raise, by name: how a contained skill gets the same exception the handle raised in
the forge (only these types cross; anything else arrives as a RuntimeError)."""

from kavi.runtime.declared_secrets import SecretMissing, SecretNotDeclared, SecretsError
from kavi.runtime.http_client import HttpHandleError
from kavi.runtime.model_endpoint import ModelHandleError
from kavi.runtime.vault import VaultLimitError, VaultPathError, VaultWriteDenied
from kavi.skills.base import SkillContextError

ERRORS: dict[str, type[BaseException]] = {
    cls.__name__: cls
    for cls in (
        FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError, PermissionError, ValueError,
        TypeError, KeyError, LookupError, TimeoutError, ConnectionError, OSError, RuntimeError,
        VaultPathError, VaultWriteDenied, VaultLimitError, HttpHandleError, SecretsError, SecretNotDeclared,
        SecretMissing, ModelHandleError, SkillContextError,
    )
}


def name_of(exc: BaseException) -> str:
    """The name the worker rebuilds `exc` by: its own class's if known, else its nearest known base's."""
    for cls in type(exc).__mro__:
        if cls.__name__ in ERRORS and ERRORS[cls.__name__] is cls:
            return cls.__name__
    return "RuntimeError"
