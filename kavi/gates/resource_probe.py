"""Runs inside the gate sandbox, in the acceptance runner's process once its cases are done: the resource gate's
measurements (kavi.gates.resource judges them, outside the sandbox).

The job's `resource` section lists probes, each one input field and one shape (a repeated unit, a tail, a kind of
list); the inputs are built here, at growing sizes up to the input bound, so no large value crosses the pipe. Each
call is timed in CPU seconds of the calling thread (the clock is bound before any skill code is loaded, and a machine
busy with other work does not slow a CPU clock) and capped by a CPU-time signal. A probe stops growing once a call took
its call budget, or when the next size would take more than it; the probes share one budget.

Each measurement goes to the forge as soon as it is known, and before each call a line says which probe and size
start: when a call never returns (the sandbox's wall limit ends the job), the forge still knows what was running.
"""

import contextlib
import gc
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

# The calling thread's CPU clock, bound at import (before the skill's module runs): inside the sandbox the process
# CPU clock can advance in whole scheduler ticks, the thread's in nanoseconds.
_clock = time.thread_time
GROWTH = 4  # each size is this many times the previous one
START = 64
# Below these CPU times a call is repeated and its fastest run kept: short calls are the noisiest.
REPEAT_BELOW_S = 0.004
REPEATS = 3
STEEP = GROWTH ** 1.25  # a ratio to the previous size's time past this is measured again
NEXT_CALL_BUDGETS = 20  # a shape stops growing when its next size, at the growth seen, would take this many budgets


class CallCap(BaseException):
    """Raised into a call that ran past its CPU cap. A BaseException, so `except Exception` does not swallow it."""


@contextlib.contextmanager
def cpu_cap(seconds: float) -> Iterator[None]:
    """Interrupt the block with CallCap once this process has spent `seconds` of CPU in it (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def fire(_signum: int, _frame: object) -> None:
        raise CallCap

    previous = signal.signal(signal.SIGPROF, fire)
    signal.setitimer(signal.ITIMER_PROF, max(seconds, 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def sizes(bound: int) -> list[int]:
    """START, START*GROWTH, ... below `bound`, then `bound` itself."""
    out: list[int] = []
    size = START
    while size < bound:
        out.append(size)
        size *= GROWTH
    return [*out, bound] if bound > 0 else out


def make_text(shape: dict[str, Any], size: int) -> str:
    """`prefix`, then `unit` repeated, then `tail`: `size` characters in all (the prefix and tail kept whole)."""
    prefix, unit, tail = str(shape.get("prefix", "")), str(shape.get("unit") or "a"), str(shape.get("tail", ""))
    room = max(0, size - len(prefix) - len(tail))
    return prefix + (unit * (room // len(unit) + 1))[:room] + tail


def make_list(shape: dict[str, Any], size: int) -> list[Any]:
    """A list of `size` items: `cycle` repeats the shape's items in turn, `ascending` counts up (as ints or floats),
    `descending` counts down, `distinct` numbers a string stem."""
    mode = shape.get("mode")
    items = list(shape.get("items") or [0])
    if mode == "ascending":
        return [float(i) + 0.5 if shape.get("item") == "float" else i for i in range(size)]
    if mode == "descending":
        return [float(size - i) + 0.5 if shape.get("item") == "float" else size - i for i in range(size)]
    if mode == "distinct":
        stem = str(items[0]) if items and isinstance(items[0], str) else "w"
        return [f"{stem}{i}" for i in range(size)]
    return [items[i % len(items)] for i in range(size)]


def make_value(shape: dict[str, Any], size: int) -> Any:
    return make_list(shape, size) if shape.get("kind") == "list" else make_text(shape, size)


def _timed(call: Callable[[], None], cap_s: float) -> tuple[float, str]:
    """(CPU seconds, outcome) of one call: "ok", "error" (it raised: the caller pays that time too) or "stopped"."""
    started = _clock()
    try:
        with cpu_cap(cap_s):
            call()
        outcome = "ok"
    except CallCap:
        outcome = "stopped"
    except Exception:
        outcome = "error"
    return _clock() - started, outcome


def stops_before_next(previous_s: float, took_s: float, call_budget_s: float) -> bool:
    """Whether a shape stops after a call that took `took_s` (the previous size's took `previous_s`): its next size,
    at the growth this step showed (at least linear), would take NEXT_CALL_BUDGETS call budgets."""
    return previous_s > 0 and took_s > 0 and took_s * max(float(GROWTH), took_s / previous_s) > (
        NEXT_CALL_BUDGETS * call_budget_s)


def run_probes(section: dict[str, Any], call_for: Callable[[dict[str, Any], dict[str, Any]], Callable[[], None]],
               emit: Callable[[dict[str, Any]], None]) -> None:
    """Run every probe of the job's `resource` section; `call_for(probe, input)` gives the call to time (its context
    is built before, untimed). Emits {"probe", "size"} before each call and {"probe", "size", "s", "outcome"} after,
    and {"budget_spent": probe} when the budget ends the probes early."""
    # What the process holds so far (the tools, the skill, the cases' leftovers) leaves the collector's view: a
    # collection inside a timed call then costs what the call allocated, not what was loaded before it.
    gc.collect()
    gc.freeze()
    budget = float(section.get("budget_s") or 0.0)
    call_budget = float(section.get("call_budget_s") or 0.02)
    cap = float(section.get("call_cap_s") or 1.0)
    spent = 0.0
    for index, probe in enumerate(section.get("probes") or []):
        base = dict(probe.get("base") or {})
        field = str(probe.get("field"))
        shape = dict(probe.get("shape") or {})
        previous: tuple[int, float] | None = None
        for size in sizes(int(probe.get("bound") or 0)):
            remaining = budget - spent
            if remaining <= 0:
                emit({"budget_spent": index})
                return
            value = make_value(shape, size)
            position = probe.get("index")
            if isinstance(position, int) and isinstance(base.get(field), list) and 0 <= position < len(base[field]):
                # One positional argument of a list of them grows; the others (and the arity) stay.
                value = [value if i == position else item for i, item in enumerate(base[field])]
            call = call_for(probe, {**base, field: value})
            emit({"probe": index, "size": size})
            took, outcome = _timed(call, min(cap, remaining))
            runs = 1
            # A short call, or one that looks steeper than linear next to the previous size (a busy machine's caches
            # can slow one call down, never speed one up): repeated, the fastest kept.
            while outcome != "stopped" and runs < REPEATS and (
                    took < REPEAT_BELOW_S or (previous is not None and took > STEEP * previous[1])):
                again, again_outcome = _timed(call, took)  # never longer than the fastest so far
                runs += 1
                if again_outcome != "stopped" and again < took:
                    took, outcome = again, again_outcome
            spent += took * runs
            if outcome == "stopped" and took < cap * 0.99 and remaining < cap:
                outcome = "budget"  # the shared budget ran out under it: not a verdict on this call
            emit({"probe": index, "size": size, "s": round(took, 6), "outcome": outcome})
            if outcome in ("stopped", "budget") or took >= call_budget:
                break
            # The next size, at the growth seen so far (at least linear), would take NEXT_CALL_BUDGETS call budgets:
            # enough is known (an explosive growth stops here instead of at the cap).
            if previous is not None and stops_before_next(previous[1], took, call_budget):
                break
            previous = (size, took)
