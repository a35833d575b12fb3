"""The skill contract: one BaseSkill subclass per module, touching the world only through handles."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel


class SideEffectClass(StrEnum):
    """What a skill is allowed to do beyond computing: ordered from least to most power."""

    READ_ONLY = "READ_ONLY"
    FILE_WRITE = "FILE_WRITE"
    NETWORK = "NETWORK"
    SECRET_READ = "SECRET_READ"


class SkillContextError(RuntimeError):
    """A skill asked for a handle its side-effect class does not grant."""


class VaultHandle(Protocol):
    """The vault: a directory of notes; paths are relative and never leave it."""

    def read_text(self, path: str) -> str: ...

    def exists(self, path: str) -> bool: ...

    def list_files(self, pattern: str = "**/*") -> list[str]: ...

    def write_text(self, path: str, content: str, *, overwrite: bool = True) -> str:
        """Write a note; with `overwrite=False` an atomic exclusive create (FileExistsError if the path exists)."""
        ...


class HttpHandle(Protocol):
    """The HTTP client a NETWORK skill is given."""

    def get_json(self, url: str, params: Mapping[str, str] | None = None) -> Any: ...

    def get_text(self, url: str, params: Mapping[str, str] | None = None) -> str: ...


class SecretsHandle(Protocol):
    """The secrets a SECRET_READ skill declared, and no others."""

    def get(self, name: str) -> str: ...


class ModelHandle(Protocol):
    """The model endpoint the user configured, for any class: bounded completions and embeddings.

    A skill must work without it (the gates run without a model): check `self.llm.can_complete()` / `can_embed()` first.
    """

    def can_complete(self) -> bool: ...

    def can_embed(self) -> bool: ...

    def complete(self, prompt: str, max_tokens: int = 256) -> str: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class NoModel:
    """The model handle when no endpoint is configured: nothing is available."""

    def can_complete(self) -> bool:
        return False

    def can_embed(self) -> bool:
        return False

    def complete(self, prompt: str, max_tokens: int = 256) -> str:
        raise SkillContextError("no model endpoint is configured; check can_complete() first")

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise SkillContextError("no embedding model is configured; check can_embed() first")


NO_MODEL = NoModel()


@dataclass(frozen=True)
class SkillContext:
    """What the runtime hands a skill: the only ways out of pure computation."""

    vault: VaultHandle | None = None
    http: HttpHandle | None = None
    secrets: SecretsHandle | None = None
    llm: ModelHandle | None = None


InT = TypeVar("InT", bound=BaseModel)
OutT = TypeVar("OutT", bound=BaseModel)


class BaseSkill(Generic[InT, OutT]):
    """Subclass once per skill module; set the class attributes and implement `execute`.

    Example::

        class WordCount(BaseSkill[WordCountInput, WordCountOutput]):
            name = "word_count"
            description = "Count words."
            input_model = WordCountInput
            output_model = WordCountOutput
            side_effect_class = SideEffectClass.READ_ONLY

            def execute(self, input_data: WordCountInput) -> WordCountOutput: ...
    """

    name: ClassVar[str]
    description: ClassVar[str]
    input_model: type[InT]
    output_model: type[OutT]
    side_effect_class: ClassVar[SideEffectClass]

    def __init__(self, context: SkillContext | None = None) -> None:
        self._context = context if context is not None else SkillContext()

    @property
    def vault(self) -> VaultHandle:
        if self._context.vault is None:
            raise SkillContextError(f"skill {self.name!r} was given no vault handle")
        return self._context.vault

    @property
    def http(self) -> HttpHandle:
        if self._context.http is None:
            raise SkillContextError(f"skill {self.name!r} was given no HTTP client (needs NETWORK)")
        return self._context.http

    @property
    def secrets(self) -> SecretsHandle:
        if self._context.secrets is None:
            raise SkillContextError(f"skill {self.name!r} was given no secrets (needs SECRET_READ)")
        return self._context.secrets

    @property
    def llm(self) -> ModelHandle:
        return self._context.llm if self._context.llm is not None else NO_MODEL

    def execute(self, input_data: InT) -> OutT:
        raise NotImplementedError
