"""Every algorithm's rules, declared once as data (RULES in its module), match its header's
numbered list and the `# rule N` tags of its code: a tag naming no declared rule, or a
declared rule that no code is tagged with, fails here. The table a machine hands the
screens (Node.rule_table) holds every rule its outputs can name, and in a run with
faults every output of a machine names one."""

from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from pathlib import Path

import pytest

import protocol
from playground.core.config import ClusterConfig
from playground.core.engine import run_sync
from protocol import ALGORITHMS, MUTEXES, machine
from protocol.interface import rule_key

from .support import at, make_engine

PROTOCOL = Path(protocol.__file__).parent
# Modules that apply rules another module declares (the ring's hops: ring.py's rules).
RULES_OF = {"ring_hops": "ring"}
TAG = re.compile(r"\brules?\s+(\d+(?:\s*(?:-|,|and)\s*\d+)*)")


def modules_with_rules() -> list[str]:
    return sorted(p.stem for p in PROTOCOL.glob("*.py") if "RULES = " in p.read_text())


def tagged(source: str) -> set[int]:
    """The rule numbers the comments name: a comment that begins with "rule" or "rules"
    ("# rule 4", "# rules 2 and 7", "# rules 1-3, 5: ...", "# rule 2 (and rule 1: ...)")."""
    found: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        text = token.string.lstrip("#").strip().lstrip("(")
        if not re.match(r"rules?\s+\d", text):
            continue
        for numbers in TAG.findall(text):
            for part in re.split(r"\s*(?:,|and)\s*", numbers):
                low, _, high = part.partition("-")
                found.update(range(int(low), int(high or low) + 1))
    return found


def applied(source: str) -> set[int]:
    """The numbers the code's `.rule(N)` / `.rule(N, SPACE)` calls name."""
    return {node.args[0].value for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "rule"
            and node.args and isinstance(node.args[0], ast.Constant) and type(node.args[0].value) is int}


def declared(name: str) -> dict[int, str]:
    return importlib.import_module(f"protocol.{RULES_OF.get(name, name)}").RULES


def test_every_algorithm_and_shared_module_declares_rules():
    with_rules = set(modules_with_rules())
    owners = {cls.__module__.rsplit(".", 1)[-1] for cls in (*ALGORITHMS.values(), *MUTEXES.values())}
    assert owners | {"interface", "probing"} <= with_rules


@pytest.mark.parametrize("name", modules_with_rules())
def test_the_rules_are_numbered_one_sentence_each_and_in_the_header(name):
    module = importlib.import_module(f"protocol.{name}")
    rules = module.RULES
    assert sorted(rules) == list(range(1, len(rules) + 1))
    for number, sentence in rules.items():
        assert sentence and "\n" not in sentence and sentence[0].isupper() and sentence.endswith("."), (number, sentence)
        assert re.search(rf"^\s+{number}\. \S", module.__doc__, re.MULTILINE), f"{name}'s header has no rule {number}"


@pytest.mark.parametrize("name", [*modules_with_rules(), *RULES_OF])
def test_every_tag_names_a_declared_rule_and_every_rule_is_tagged(name):
    source = (PROTOCOL / f"{name}.py").read_text()
    rules = declared(name)
    assert tagged(source) <= set(rules), f"{name}.py tags rules it does not declare: {tagged(source) - set(rules)}"
    assert applied(source) <= set(rules), f"{name}.py applies rules it does not declare: {applied(source) - set(rules)}"
    if name in RULES_OF:  # (it applies some of another module's rules: that module's test asks for all)
        return
    if name in RULES_OF.values():  # (its rules are tagged in its module and in those that apply them)
        source += "".join((PROTOCOL / f"{other}.py").read_text() for other, owner in RULES_OF.items() if owner == name)
    assert set(rules) <= tagged(source), f"{name}.py declares rules no code is tagged with: {set(rules) - tagged(source)}"


def test_the_tags_are_read_as_written():
    source = "x = 1  # rule 4\ny = 2  # rules 2 and 7\nz = 3  # rules 1-3, 5: drawn\n# (rule 9: why)\n# monitor rule 6\n"
    assert tagged(source) == {1, 2, 3, 4, 5, 7, 9}


@pytest.mark.parametrize("name", [*ALGORITHMS, *(f"classic+{m}" for m in MUTEXES), "raft+lamport"])
def test_a_machines_table_holds_its_own_its_shared_and_its_mutexs_rules(name):
    cls = machine(name)
    table = cls.rule_table()
    own = importlib.import_module(cls.__module__ if cls.mutex is None else cls.__mro__[1].__module__).RULES
    assert {rule_key(n) for n in own} <= set(table)
    if not cls.fixed_members:
        assert {rule_key(n, "members") for n in protocol.interface.RULES} <= set(table)
    if cls.mutex is not None:
        assert {rule_key(n, cls.mutex.name) for n in importlib.import_module(cls.mutex.__module__).RULES} <= set(table)
    assert next(iter(table)) == "1"  # its own first


RUNTIME_TIMERS = ("cs_think", "cs_hold")  # the workload's: the runner sets them, no rule does
RUNTIME_STATES = ("down", "left")  # a crash's and a leave's: the runner reports them


@pytest.mark.parametrize("name", [*ALGORITHMS, "classic+central", "raft+token-ring", "stoller+lamport",
                                  "garcia-molina+ricart-agrawala"])
def test_every_output_of_a_run_with_faults_names_a_rule_of_its_machines_table(name):
    """Crashes, recoveries, elects, a join and a leave, and the lock wanted: whatever a node
    sent, set, cancelled or became names the rule that made it (the runner's own timers
    and states name none), and only rules of its machine's table."""
    cls = machine(name)
    lines = ["8 crash 5", "12 elect 1", "26 recover 5", "34 crash 2", "50 recover 2", "60 elect 4"]
    if not cls.fixed_members:
        lines += ["40 join", "55 leave 3"]
    if cls.mutex is not None:
        lines += [f"{t} want {n}" for t in (5, 22, 45) for n in (1, 4)]
    config = ClusterConfig(timeout=4, probe_interval=3, delay_min=0.5, delay_max=1.5)
    engine, events = make_engine(5, config, at(*sorted(lines, key=lambda line: float(line.split()[0]))), algorithm=name)
    run_sync(engine, 100)
    table = cls.rule_table()
    ruled = [e for e in events if e.kind in ("send", "timer_set", "timer_cancel", "election_start", "state", "cs")]
    unruled = [e for e in ruled if e.rule is None and getattr(e, "name", None) not in RUNTIME_TIMERS
               and getattr(getattr(e, "status", None), "value", None) not in RUNTIME_STATES]
    assert not unruled, unruled[:3]
    assert {e.rule for e in ruled} - {None} <= set(table)
    assert len({e.rule for e in ruled}) > 5  # (the run reached a good many of them)
