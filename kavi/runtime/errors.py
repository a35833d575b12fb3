"""Errors the runtime raises when it refuses to run something; the CLI reports them without a traceback."""


class RuntimeRefusal(Exception):
    """Base of every refusal: nothing of the skill ran, and the message says why and what to do."""


class TrustError(RuntimeRefusal):
    """The skill's bytes do not match the ledger's hash, the file is missing, or the module is not a skill."""


class SkillLoadError(TrustError):
    """The hash matched, but executing the module's top level failed or it holds no single skill class."""


class SkillNotTrusted(RuntimeRefusal):
    """The skill is unknown or not in the trusted registry."""


class ConfirmationRequired(RuntimeRefusal):
    """A skill with side effects needs an explicit confirmation before it runs."""


class ReplayRefused(RuntimeRefusal):
    """A replay that would not run the same trusted code as the original execution."""


class ChainMappingError(ValueError):
    """A chain step's input could not be built from an earlier step's output."""
