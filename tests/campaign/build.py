"""The campaign for a seed: every generator family in its order, on one Builder; and the
suite's seeded sample of it (`suite_sample`)."""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict

from .cases import Builder, Case
from .gen_at import gen_at
from .gen_faults import gen_faults
from .gen_hunt import gen_hunt
from .gen_lessons import gen_lessons
from .gen_options import gen_compare, gen_help, gen_live, gen_max_in_flight, gen_options
from .gen_real import gen_real
from .gen_scenarios import gen_scenarios
from .gen_serve import gen_serve
from .gen_signals import gen_signals
from .gen_transcripts import gen_export_options, gen_transcripts
from .gen_write_errors import gen_write_errors

DEFAULT_SEED = 17


def build_cases(seed: int = DEFAULT_SEED) -> list[Case]:
    """The campaign for `seed`: the same list every time."""
    b = Builder(seed)
    for family in (gen_options, gen_live, gen_at, gen_scenarios, gen_transcripts, gen_export_options, gen_compare,
                   gen_write_errors, gen_signals, gen_hunt, gen_real, gen_help, gen_lessons, gen_serve, gen_faults,
                   gen_max_in_flight):
        family(b)
    seen: Counter[str] = Counter()
    for index, case in enumerate(b.cases):
        seen[case.name] += 1
        if seen[case.name] > 1:
            case.name = f"{case.name}#{seen[case.name]}"
        case.index = index
    return b.cases


# The share of the plain cases the suite runs (suite_sample). Each is a few ms of CPU, but
# they are 700: a third is enough for a run to meet every kind of input of every group.
SUITE_SHARE = 1 / 3


def always_in_the_suite(case: Case) -> bool:
    """Whether the suite runs `case` whatever the sample: the rarer kinds (a signal, a
    terminal, a standard output full or closed, a file-size limit), where the moment and
    the circumstances, not the input, are what is drawn."""
    return (case.signal is not None or case.terminal or case.stdout_full or case.stdout_closed
            or case.fsize is not None)


def operator(case: Case) -> str:
    """What made the case: its name up to the first colon ("hunt-option", "negative", "serve")."""
    return case.name.split(":", 1)[0].split("#", 1)[0]


def suite_sample(cases: list[Case], seed: int = DEFAULT_SEED, share: float = SUITE_SHARE) -> list[Case]:
    """The cases the suite runs, in their order: every one `always_in_the_suite`, and of the
    others a seeded `share` of each operator in each group and expectation (at least one
    each), so that every group, expectation and operator is run; `python -m tests.campaign`
    runs them all."""
    rng = random.Random(seed)
    strata: dict[tuple[str, str, str], list[Case]] = defaultdict(list)
    for case in cases:
        if not always_in_the_suite(case):
            strata[(case.group, case.expect, operator(case))].append(case)
    kept = {case.index for case in cases if always_in_the_suite(case)}
    for key in sorted(strata):
        members = strata[key]
        kept.update(case.index for case in rng.sample(members, math.ceil(len(members) * share)))
    return [case for case in cases if case.index in kept]
