"""`bully-tui` (and `python -m playground`): the program's entry. Importing this module
takes the signals over; it is the first of our code that runs.

A signal (SIGINT, SIGTERM, SIGHUP) ends the process well at any moment of its life:

  1. Python's own start-up, before this file's first statement (README, "Bad input,
     signals, and what is left on disk").
     SIGTERM and SIGHUP kill the process by their default action: nothing printed,
     nothing made, status -n to the shell (128 + n). So does SIGINT until Python puts its
     own handler in place, a few milliseconds in; from then until this file runs,
     Python itself reports a Ctrl-C (KeyboardInterrupt, "Fatal Python error" while it
     imports `site`) and exits (1, or by SIGINT), having made nothing either; the
     campaign tells that report from ours (tests/signals_support.py, python_start_up). No
     program can take a signal before its first statement runs: this file makes that
     stretch as short as it can be. The console script pip writes imports only `re`
     and `sys` before it; `-m` only runpy.
  2. From the statement below until the command has begun (`cli.main`): nothing has
     been made yet, so a signal ends the process at once, with its one line and the
     status 128 + n (`_starting`). Imports cannot swallow that: nothing is raised.
  3. From then on, interrupt.py: the command cleans up what it was writing, says its
     line, and exits with 128 + n (or at once, where raising would lose the signal: in
     an import, a finalizer).
  4. A signal ignored when the process began stays ignored, from start to end: `nohup
     bully-tui hunt ...` outlives the terminal, and a script's background job (started
     with SIGINT ignored) is not stopped by a Ctrl-C meant for the script's caller. A live
     app excepted: it lives in its terminal, and ends with it (run/interrupt.py).
"""

import os  # (os and sys: loaded already by Python's start-up)
import signal
import sys


def _starting(signum: int, _frame: object) -> None:
    """A signal while bully-tui starts: nothing is made yet, so out at once, with the line
    interrupt.Stopped would say. (Not interrupt.py's handler: importing that module is
    part of the start-up.)"""
    what = "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
    try:
        os.write(2, f"bully-tui: {what}\n".encode())
    except OSError:
        pass  # (no stderr)
    finally:
        os._exit(128 + signum)


SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # (SIGINT first: Python's own handler raises)
for _signum in SIGNALS:
    if signal.getsignal(_signum) is not signal.SIG_IGN:  # (rule 4)
        signal.signal(_signum, _starting)


def main() -> int:
    _hold_closed_streams()
    from .cli import main as run  # (a signal meanwhile: _starting)
    from .run import interrupt

    try:
        interrupt.install()  # inside the try: its Stopped, from the first moment, is caught below
        status = run()
        for signum in SIGNALS:  # done, all said: a signal now ends the process at once, as at the start
            if signal.getsignal(signum) is not signal.SIG_IGN:  # (ignored: its line was said)
                signal.signal(signum, _starting)
    except KeyboardInterrupt as error:  # before cli.main's own handling began, or after it ended
        stop = interrupt.stopped_by(error) or interrupt.Stopped(signal.SIGINT)
        try:
            os.write(2, f"{interrupt.last_words(stop)}\n".encode())
        except OSError:
            pass
        status = stop.status
    return ended(status)


def _hold_closed_streams() -> None:
    """A standard stream closed by the caller (`>&-`) gets /dev/null on its number, so
    that no file opened later takes that number and receives what was meant for the
    stream. (Python has already set it to None in sys: cli.output.emit says it is closed.)"""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            held = os.open(os.devnull, os.O_RDWR)  # (the lowest free number: this one)
            if held != fd:
                os.dup2(held, fd)
                os.close(held)


def ended(status: int) -> int:
    """The command is done, its files closed and its words said: the process ends now.
    Python's own tear-down would free a big run's millions of objects one by one, for
    nothing (quitting the app at N = 64 took 2.7 s, 50 ms of it the app's)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:  # (None: closed before we started)
                stream.flush()
        except (OSError, ValueError):
            pass  # (cli.main has said what could not be written)
    os._exit(status)


if __name__ == "__main__":
    sys.exit(main())
