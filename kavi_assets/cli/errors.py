"""Expected failures the CLI reports as one clear message and an exit status, never a traceback."""

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.text import Text

from kavi_assets.cli.console import make_console

err_console = make_console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])


def expected_errors() -> tuple[type[BaseException], ...]:
    from kavi_assets.build.sandbox_dir import SandboxExistsError
    from kavi_assets.forge.pipeline import PromotionRefused
    from kavi_assets.home import HomePathError
    from kavi_assets.ledger.records import LedgerRecordError
    from kavi_assets.ledger.store import LedgerLockedError, LedgerSchemaError
    from kavi_assets.proposals.bounds import BoundsError
    from kavi_assets.proposals.model import ProposalError

    errors: list[type[BaseException]] = [
        ProposalError, LedgerRecordError, LedgerLockedError, LedgerSchemaError, PromotionRefused, HomePathError,
        SandboxExistsError, BoundsError,
    ]
    from kavi_assets.llm.client import LLMError
    from kavi_assets.llm.recorded import CassetteError
    from kavi_assets.policy.policy import PolicyError
    from kavi_assets.routing.thompson import NoModelAvailable

    errors += [LLMError, CassetteError, PolicyError, NoModelAvailable]
    from kavi_assets.forge.locks import ProposalBusy

    errors.append(ProposalBusy)  # another attempt of the proposal is running: the message names its pid and run
    try:
        from kavi_assets.runtime.errors import ChainMappingError, RuntimeRefusal
        from kavi_assets.runtime.handles import HttpHandleError, SecretsError, VaultPathError
        from kavi_assets.runtime.records import AmbiguousPrefix, RecordNotFound

        errors += [RuntimeRefusal, ChainMappingError, VaultPathError, HttpHandleError, SecretsError, AmbiguousPrefix,
                   RecordNotFound]
    except ImportError:
        pass
    return tuple(errors)


def cli_errors(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except expected_errors() as err:
            message = str(err)
            if type(err).__name__ == "ConfirmationRequired":
                message += " (pass --yes, or run it in a terminal and answer 'yes')"
            err_console.print(Text.assemble(("error: ", "bold red"), message), soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]
