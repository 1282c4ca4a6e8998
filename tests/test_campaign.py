"""Issue 17, "A campaign of our own": the generated hostile-input campaign of
tests/campaign/, run against this checkout as real processes, in shards.

Every case must hold its expectation (refuse, accept, different, write-error, signal or
help, as the package's docstring says); a case that does not falls in a failure class
(traceback, hang, silent, misleading, misrefused, partial, setup), and the test fails
with a table of those cases: class, name, argv, why, and the first 200 characters of
stderr. `python -m tests.campaign --report` runs the same from the command line.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

import pytest

from tests import campaign


def test_the_campaign_is_generated_deterministic_and_covers_every_subcommand():
    cases = campaign.build_cases(campaign.DEFAULT_SEED)
    again = campaign.build_cases(campaign.DEFAULT_SEED)
    other = campaign.build_cases(campaign.DEFAULT_SEED + 1)
    assert len(cases) >= 300
    assert [(c.name, c.argv, c.expect) for c in cases] == [(c.name, c.argv, c.expect) for c in again]
    assert [(c.name, c.argv) for c in cases] != [(c.name, c.argv) for c in other]
    assert len({c.name for c in cases}) == len(cases)
    groups = Counter(c.group for c in cases)
    assert set(groups) == set(campaign.GROUPS), groups
    expectations = Counter(c.expect for c in cases)
    assert {campaign.REFUSE, campaign.ACCEPT, campaign.EITHER, campaign.DIFFERENT, campaign.WRITE_ERROR,
            campaign.SIGNAL, campaign.HELP} <= set(expectations), expectations
    signals = [c for c in cases if c.signal is not None]
    assert len(signals) >= 40
    assert {c.signal.signum for c in signals} == {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL}
    assert any(c.signal.again_ms for c in signals)
    assert any(c.fsize for c in cases) and any(c.stdout_full for c in cases)


# The campaign runs as shards, so that the suite's processes (pytest-xdist) share it out
# with the other tests; the shards of one process share the setup transcripts.
SHARDS = 8


@pytest.fixture(scope="module")
def bases(tmp_path_factory) -> campaign.Bases:
    return campaign.Bases(campaign.REPO, tmp_path_factory.mktemp("campaign-bases"))


@pytest.mark.parametrize("shard", range(SHARDS))
def test_no_case_of_the_campaign_falls_in_a_failure_class(shard, bases):
    cases = [c for c in campaign.build_cases(campaign.DEFAULT_SEED) if c.index % SHARDS == shard]
    # Under pytest-xdist each of its processes runs one case at a time (as many as there are
    # cores in all); alone, the campaign's own two.
    workers = 1 if os.environ.get("PYTEST_XDIST_WORKER") else campaign.WORKERS
    results, seconds, setup = campaign.run_campaign(cases, root=campaign.REPO, workers=workers, bases=bases)
    report = campaign.summary(results, seconds, setup)
    print(report)
    failing = [r for r in results if r.failure]
    if failing:
        pytest.fail(f"{len(failing)} of {len(results)} cases fall in a failure class\n{report}\n\n"
                    f"{campaign.failure_table(failing, stderr_chars=200)}", pytrace=False)
