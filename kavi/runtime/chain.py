"""Chains: run trusted skills in sequence, each step's input built (kavi.runtime.steps) from an earlier step's output:
the previous step's, unless `from_step` names an earlier one."""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kavi.runtime.errors import ChainMappingError, ConfirmationRequired, SkillNotTrusted
from kavi.runtime.executor import CAPABILITIES, SkillRunner, needs_confirmation
from kavi.runtime.records import ExecutionRecord, new_id
from kavi.runtime.steps import ChainStep, build_step_input

__all__ = ["ChainSpec", "run_chain"]


class ChainSpec(BaseModel):
    """A sequence of steps; by default the chain stops at the first failed step."""

    model_config = ConfigDict(extra="forbid")

    steps: list[ChainStep] = Field(min_length=1)
    stop_on_failure: bool = True

    @model_validator(mode="after")
    def _sources_exist(self) -> "ChainSpec":
        for index, step in enumerate(self.steps):
            if step.from_step is not None and not 0 <= step.from_step < index:
                raise ValueError(
                    f"step {index} ({step.skill}): from_step {step.from_step} must name an earlier step "
                    f"(0..{index - 1})"
                    if index
                    else f"step 0 ({step.skill}): from_step is set but there is no earlier step"
                )
            if index == 0 and step.maps_from_source:
                raise ValueError(f"step 0 ({step.skill}) maps from a previous step, but it is the first step")
        return self


def run_chain(
    runner: SkillRunner,
    spec: ChainSpec,
    *,
    confirmed: bool,
    session_id: str | None = None,
    parent_execution_id: str | None = None,
) -> list[ExecutionRecord]:
    """Run the steps in one session; each record's parent is the previous step's record.

    Every step's skill must be trusted and, when it has side effects, confirmed — checked for all steps
    before the first one runs, so a chain never stops half-way for a refusal it could have foreseen. A step whose
    version the ledger will not run (revoked, suspect) leaves a REFUSED record before the chain is refused."""
    session = session_id or new_id()
    for index, step in enumerate(spec.steps):
        try:
            skill = runner.lookup(step.skill)
        except SkillNotTrusted as exc:
            raise runner.record_refusal(exc, dict(step.input or {}), session_id=session,
                                        parent_execution_id=parent_execution_id) from None
        if needs_confirmation(skill.side_effect_class) and not confirmed:
            raise ConfirmationRequired(
                f"chain step {index} runs {skill.name!r}, which is {skill.side_effect_class.value} "
                f"(it can {CAPABILITIES[skill.side_effect_class]}); confirm to run the chain"
            )
    records: list[ExecutionRecord] = []
    parent = parent_execution_id
    for index, step in enumerate(spec.steps):
        record = _run_step(runner, index, step, records, confirmed=confirmed, session=session, parent=parent)
        records.append(record)
        parent = record.execution_id
        if spec.stop_on_failure and not record.success:
            break
    return records


def _run_step(
    runner: SkillRunner,
    index: int,
    step: ChainStep,
    records: list[ExecutionRecord],
    *,
    confirmed: bool,
    session: str,
    parent: str | None,
) -> ExecutionRecord:
    partial: dict[str, Any] = dict(step.input or {})
    try:
        if step.maps_from_source:
            source_index = step.from_step if step.from_step is not None else index - 1
            source = records[source_index]
            if not source.success:
                raise ChainMappingError(
                    f"source step {source_index} ({source.skill_name}) failed, so there is no output to map from"
                )
            built = build_step_input(step, source.output_data())
        else:
            built = build_step_input(step, None)
    except ChainMappingError as exc:
        return runner.record_failure(
            step.skill,
            partial,
            f"ChainMappingError: step {index} ({step.skill}): {exc}",
            parent_execution_id=parent,
            session_id=session,
        )
    return runner.run(step.skill, built, confirmed=confirmed, parent_execution_id=parent, session_id=session)
