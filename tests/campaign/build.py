"""The campaign for a seed: every generator family in its order, on one Builder."""

from __future__ import annotations

from collections import Counter

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
