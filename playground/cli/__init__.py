"""`bully-tui`: the command line, one module per subcommand. `main` (entry.py) runs the
main command (plan.py, run.py: the live app, `--headless` runs in virtual time,
`--compare`, real nodes) or a subcommand (verify, replay, export, hunt, node, merge,
attach: subcommands.py lists them); parser.py declares the options several commands
take, once.

Every argument is checked before anything runs. Whatever happens, the program ends with
one line and a status, never a traceback (entry.ending):
  0    done
  1    a file or standard output could not be written, `verify` found a difference,
       or `hunt` found a counterexample
  2    bad input: an argument, a scenario or a transcript (nothing was written)
  128 + n  stopped by signal n: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP
           (run/interrupt.py), with every file it wrote ending on a whole line.

Only what parsing needs is imported at first (the protocol's names, the parsers): a
refusal or --help answers at once; the rest comes with the command that needs it.
"""

from .entry import main

__all__ = ["main"]
