"""A generated hostile-input campaign against `bully-tui` (issue 17, "A campaign of our own").

    python -m tests.campaign [--root DIR] [--workers 2] [--seed N] [--report] [--only TEXT] [--list]
                             [--sample]

(from the repository's root). It runs every case; the suite (tests/test_campaign.py) runs
a seeded sample (`suite_sample`, `--sample`): every case with a signal, a terminal, a
standard output full or closed or a file-size limit, and a third of the others, of each
operator in each group and expectation.

How the cases are made. Nothing here is a hand-written list of inputs: `build_cases(seed)`
runs mutation operators over valid inputs, drawing what to mutate and with which value
from pools with one `random.Random(seed)`, so a seed gives the same list every time
(DEFAULT_SEED by default). Each operator covers every value of its pool at least once.
  - options of the headless run and of the live app: each option's valid values, its
    boundaries and just outside them, and the hostile pool (negative, zero, 1e308,
    1e-300, nan, inf, -inf, empty, spaces, Arabic and full-width digits, underscores,
    hex, a 5,000-digit number, long garbage, option-looking values, words), in either
    spelling (`--opt V` or `--opt=V`); names in other case, unknown options,
    abbreviations, missing values, options that do not apply;
  - `--at` lines: a valid command with one part mutated (time, command name, argument
    count, a rank, a value), and membership and partition rules (a node that has left,
    the last member leaving, a partition of everyone or no one);
  - scenario files: a generated valid file with one line mutated (named as "FILE line
    N"), and whole-file problems (BOM + CRLF, NUL, bad UTF-8, over 1 MB, a directory,
    /dev/zero, a FIFO, missing, an empty name);
  - transcripts for verify, replay and export: real transcripts are made once per
    campaign run by the checkout under test (`runner.Bases`), then one line is mutated per
    case (a wrong JSON type, a field deleted or added, values out of range, unknown
    names, a cut, an empty file, garbage...), or a well-formed alteration (verify:
    different); export's own options are mutated too;
  - --compare, an unwritable stdout (/dev/full) or a closed one (`>&-`), file-size limits
    (RLIMIT_FSIZE), signals at seeded random moments from the very start (0 s: Python's
    own start-up) on (a moment drawn past the start-up is the same moment of the
    command's work: counted from its first file, or bully-tui's first statement), and
    help;
  - `hunt`: small valid searches (random and exhaustive, on drawn algorithms and
    properties), each of its options set to hostile values, options that do not go
    together, outputs that exist, cannot be written or would be hidden (`-o .jsonl`),
    and signals during a search and while a finding's files are written (at seeded
    moments after the first file of the case appears);
  - lesson files (`bully-tui lesson`): a generated valid lesson checked, played headless
    and opened live, then with one line spoiled (named as "FILE line N": a directive,
    condition or task it cannot read, a setup the scenario parser refuses, a step that
    cannot end, a link to no glossary term), a step whose event never comes, whole-file
    problems (binary junk, empty, a directory, a FIFO, missing) and the subcommand's
    own arguments;
  - `serve`: its options with hostile values the contract refuses (a valid one would
    serve until the time limit), addresses not this machine's, URLs that are not
    http(s), missing values, ARGS that would serve itself, its help, and SIGINT, SIGTERM
    and SIGHUP at seeded moments while it serves.

How a case runs. A real subprocess, `[sys.executable, "-m", "playground", *argv]` as the
`bully-tui` command runs (`-m playground.cli` for a checkout that has no entry module),
with PYTHONPATH = the checkout under test, a fresh private cwd holding the case's files,
TMPDIR = a private empty directory, stdin /dev/null, stdout and stderr captured (or
stdout /dev/full, or closed), in a session of its own; optional RLIMIT_FSIZE (with SIGXFSZ ignored,
so writes past it fail with EFBIG like a full disk), a 4 GiB address-space guard, and a
time limit after which its process group is killed. Two cases run at a time. A case
whose start-up is not under test (no signal, or one a moment after its first file or
bully-tui's first statement, or a live view's once it shows its screen) is the same
process forked by a server that has done Python's start-up and the imports
(forkserver.py: a third of the CPU saved, each forked case tested to end as the spawned
one, its standard streams made as Python's start-up makes them, a closed one None);
BULLY_CAMPAIGN_SPAWN=1 spawns every case.

How it is judged (`judge`). The observed outcome (exit 0 accept, 2 refuse, 1 different
or write-error, 128+n a signal) is held against the case's expectation, the contract:
  refuse       exit 2, stdout empty, ONE stderr line "bully-tui: error: ..." (under 300
               characters) naming `names`; no file created; pre-existing files unchanged
  accept       exit 0, stderr empty or warnings; files written whole
  either       refuse or accept
  different    exit 1, one line "bully-tui: different: ..." (verify)
  searched     a hunt: exit 0 (nothing found) or 1 with nothing on stderr (found: its
               lines on stdout, its files whole)
  write-error  exit 1, one line "bully-tui: error: ..."; what is left is whole
  signal       whatever the moment (no rule depends on the machine's speed), one of:
               128+signum with at most one line ("bully-tui: interrupted" for SIGINT),
               files whole, TMPDIR empty, a sample of the transcripts left passing
               `verify` (-9 for SIGKILL); or the command had ended (0, 1 found, 2
               refused); or `killed`: the signal's default action while Python itself
               started, before bully-tui's first statement (status -signum, nothing on
               stderr, nothing made); or `python-start-up`: SIGINT after Python put its
               own handler in place and before bully-tui's first statement took it
               over, Python's own report (a KeyboardInterrupt, exit 1 or -2, no line of
               the checkout in it but playground/__main__.py's own lines before that
               statement; nothing made). A hunt's finding: its files all there, or none;
               none when a signal stopped it (unless its line says they were written)
  help         exit 0, help on stdout, stderr empty
A case that breaks it falls in a failure class: traceback (a traceback, or an exit
status outside the expected set), hang (the time limit), silent (exit 0 where a refusal
was due), misleading (a refusal that is not one clear line naming the problem),
misrefused (a refusal where the input was fine), partial (a file not whole, a temporary
file left behind, a pre-existing file changed, output on a refusal, one of a hunt's two
files without the other), or setup (the
checkout could not make the transcripts the case mutates).

Where it is. cases.py: the case record, the outcome names, the shared pools and verdicts,
the Builder; one module a family of cases: gen_options.py (options, the live app,
--compare, help), gen_at.py, gen_scenarios.py, transcripts.py (the setup transcripts and
the mutations) with gen_transcripts.py (verify, replay, export), gen_write_errors.py,
gen_signals.py, gen_hunt.py, gen_real.py; build.py puts them in order. spawn.py runs a
case's process, judge.py judges it, runner.py runs the cases (Bases, Campaign,
run_campaign), report.py sums up, __main__.py is the command line.
"""

from .build import DEFAULT_SEED, SUITE_SHARE, always_in_the_suite, build_cases, suite_sample
from .cases import (
                     ACCEPT,
                     DIFFERENT,
                     EITHER,
                     FAILURES,
                     FOUND,
                     GROUPS,
                     HELP,
                     KILLED,
                     PYTHON_START_UP,
                     REFUSE,
                     SEARCHED,
                     SIGNAL,
                     WRITE_ERROR,
                     Case,
                     SignalPlan,
)
from .forkserver import ForkServer
from .judge import judge
from .report import failure_table, summary
from .runner import FORK, REPO, WORKERS, Bases, Campaign, Result, run_campaign
from .spawn import Process, spawn, spawn_env

__all__ = ["ACCEPT", "DEFAULT_SEED", "DIFFERENT", "EITHER", "FAILURES", "FORK", "FOUND", "GROUPS", "HELP", "KILLED",
           "PYTHON_START_UP", "REFUSE", "REPO", "SEARCHED", "SIGNAL", "SUITE_SHARE", "WORKERS", "WRITE_ERROR", "Bases",
           "Campaign", "Case", "ForkServer", "Process", "Result", "SignalPlan", "always_in_the_suite", "build_cases",
           "failure_table", "judge", "run_campaign", "spawn", "spawn_env", "suite_sample", "summary"]
