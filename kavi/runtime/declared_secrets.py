"""The secrets handle: the values of the secrets a skill declared, and of no other."""

from collections.abc import Mapping, Sequence


class SecretsError(LookupError):
    """Base of the secrets handle's errors."""


class SecretNotDeclared(SecretsError):
    """A skill asked for a secret it did not declare."""


class SecretMissing(SecretsError):
    """A declared secret has no value in the environment the runtime was given."""


class DeclaredSecrets:
    """The secrets a skill declared; values of any other name are never even held."""

    def __init__(self, declared: Sequence[str], values: Mapping[str, str]) -> None:
        self._declared = tuple(dict.fromkeys(declared))
        self._values = {name: values[name] for name in self._declared if name in values}

    @classmethod
    def from_environ(cls, declared: Sequence[str], environ: Mapping[str, str] | None = None) -> "DeclaredSecrets":
        if environ is None:  # the process environment, through the settings (imported here: the gates import this)
            from kavi.settings import declared_secret_values

            return cls(declared, declared_secret_values(declared))
        return cls(declared, {name: environ[name] for name in declared if name in environ})

    @property
    def declared(self) -> tuple[str, ...]:
        return self._declared

    def get(self, name: str) -> str:
        if name not in self._declared:
            listed = ", ".join(self._declared) or "none"
            raise SecretNotDeclared(f"secret {name!r} was not declared by this skill (declared: {listed})")
        if name not in self._values:
            raise SecretMissing(f"declared secret {name!r} is not set in the environment")
        return self._values[name]

    def __repr__(self) -> str:
        # Never show values, even in a traceback.
        return f"DeclaredSecrets(declared={list(self._declared)!r})"
