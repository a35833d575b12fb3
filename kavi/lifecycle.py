"""Statuses, verdicts and failure kinds shared by every part of the forge."""

from enum import StrEnum

# The builder of a vetted attempt (`kavi vet`): a third party's code, not a model's answer. No model outcome is
# recorded for it, and a rejected one waits for a person instead of being retried by a model.
VETTED_BUILDER = "third-party (vetted)"


class ProposalStatus(StrEnum):
    PROPOSED = "PROPOSED"
    BUILT = "BUILT"
    VERIFIED = "VERIFIED"
    TRUSTED = "TRUSTED"
    FAILED = "FAILED"
    GATE_VIOLATION = "GATE_VIOLATION"
    ESCALATED = "ESCALATED"
    REVOKED = "REVOKED"
    # Split into child proposals (kavi.decompose): waits for them to be trusted and its composition verified.
    DECOMPOSED = "DECOMPOSED"


class Verdict(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    OMITTED = "omitted"


class FailureKind(StrEnum):
    GATE_VIOLATION = "GATE_VIOLATION"
    TIMEOUT = "TIMEOUT"
    BUILD_ERROR = "BUILD_ERROR"
    LLM_UNAVAILABLE = "LLM_UNAVAILABLE"
    LLM_BAD_OUTPUT = "LLM_BAD_OUTPUT"
    VERIFY_LINT = "VERIFY_LINT"
    VERIFY_TYPE = "VERIFY_TYPE"
    VERIFY_TEST = "VERIFY_TEST"
    ZERO_TESTS = "ZERO_TESTS"
    VERIFY_COVERAGE = "VERIFY_COVERAGE"
    VERIFY_POLICY = "VERIFY_POLICY"
    VERIFY_INVARIANT = "VERIFY_INVARIANT"
    VERIFY_ACCEPTANCE = "VERIFY_ACCEPTANCE"
    # The skill's time grows faster than its input, or passes the deadline at the input bound (the resource gate).
    VERIFY_RESOURCE = "VERIFY_RESOURCE"
    # Every deterministic gate passed and the coach (a second model reviewing spec, code, tests and gate report)
    # asked for changes: the builder's outcome, its findings go to the next packet.
    COACH_CHANGES_REQUESTED = "COACH_CHANGES_REQUESTED"
    UNKNOWN = "UNKNOWN"
    # The forge's own environment failed (a gate tool missing, a full disk, a file-size limit, an oversized prompt):
    # not the model's outcome, never fed to the router, retried later outside the model's attempt budget.
    INFRASTRUCTURE = "INFRASTRUCTURE"
    # No endpoint is configured and the recorded model has nothing for this proposal: a configuration problem for
    # the person running the forge, not the model's outcome (never fed to the router, never retried on its own).
    LLM_NOT_CONFIGURED = "LLM_NOT_CONFIGURED"
    # The model endpoint failed after the request-level retries (5xx, 429, a refused or dropped connection, a cut-off
    # or malformed answer, a timeout): the endpoint's fault, not the model's. No model outcome, no attempt of the
    # budget; the retry sensor tries again with its own backoff and escalates only a sustained outage.
    ENDPOINT_UNAVAILABLE = "ENDPOINT_UNAVAILABLE"


class Refusal(StrEnum):
    """Why the runtime refused to run a trusted skill; such a run's record says REFUSED and names one of these."""

    NOT_TRUSTED = "NOT_TRUSTED"  # the version was retired, or never promoted
    REVOKED = "REVOKED"
    SUSPECT = "SUSPECT"  # its re-verification failed and the setting keeps it from running
    TAMPERED = "TAMPERED"  # its bytes do not match the trusted hash
    SCHEMA = "SCHEMA"  # the input does not match the skill's input schema
    CLASS_NOT_ALLOWED = "CLASS_NOT_ALLOWED"  # its side-effect class is not allowed where it was called
    NO_SANDBOX = "NO_SANDBOX"  # no worker sandbox can be built here and the setting refuses to run without one
    BUSY = "BUSY"  # every worker of the server's pool was running a call
