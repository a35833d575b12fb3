"""Errors the runtime raises when it refuses to run something; the CLI reports them without a traceback."""

from typing import Any

from kavi.infrastructure import EnvironmentFailure
from kavi.lifecycle import Refusal


class RuntimeRefusal(Exception):
    """Base of every refusal: nothing of the skill ran, and the message says why and what to do.

    `record` is the REFUSED execution record the refusal left, when the runner wrote one."""

    record: Any = None


class TrustError(RuntimeRefusal):
    """The skill's bytes do not match the ledger's hash, the file is missing, or the module is not a skill."""


class SkillLoadError(TrustError):
    """The hash matched, but executing the module's top level failed or it holds no single skill class."""


class SkillNotTrusted(RuntimeRefusal):
    """The skill is unknown or not in the trusted registry.

    `skill` is the refused version as the ledger knows it (None for a name never trusted), `kind` why."""

    def __init__(self, message: str, *, skill: Any = None, kind: Refusal = Refusal.NOT_TRUSTED) -> None:
        super().__init__(message)
        self.skill = skill
        self.kind = kind


class ClassNotAllowed(RuntimeRefusal):
    """The skill's side-effect class is not allowed where it was called (a server not opted in to it)."""


class NoSandbox(RuntimeRefusal):
    """No worker sandbox can be built on this machine, and KAVI_RUN_WITHOUT_SANDBOX refuses to run without one."""


class WorkersBusy(RuntimeRefusal):
    """Every worker of a bounded pool is running a call: retry shortly."""


class ExecutionLogError(RuntimeRefusal, EnvironmentFailure):
    """The execution log could not be written: a run whose start cannot be recorded does not run (the environment's
    failure: exit status 3)."""


class ConfirmationRequired(RuntimeRefusal):
    """A skill with side effects needs an explicit confirmation before it runs."""


class ReplayRefused(RuntimeRefusal):
    """A replay that would not run the same trusted code as the original execution."""


class ChainMappingError(ValueError):
    """A chain step's input could not be built from an earlier step's output."""
