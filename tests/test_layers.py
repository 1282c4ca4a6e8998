"""The layers of README's "How it is built", as folders, and data flowing one way: each
folder imports only from the ones below it, and the widgets never reach into protocol/."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Each folder, and what it may import from (the stdlib and third-party packages aside).
BELOW = {
    "protocol": {"protocol"},
    "playground/core": {"protocol", "core"},
    "playground/record": {"protocol", "core", "record", "themes", "lessons"},
    "playground/run": {"protocol", "core", "record", "run"},
    "playground/real": {"protocol", "core", "record", "real"},
    "playground/ui": {"protocol", "core", "record", "run", "real", "ui", "themes"},
    "playground/cli": {"protocol", "core", "record", "run", "real", "ui", "cli", "__main__"},  # (python -m playground.cli)
}
OURS = {"protocol", "playground", "themes", "lessons", "core", "record", "run", "real", "ui", "cli"}
# The apps (names and titles for the palette and the title bar) and the model (roles, to
# colour by) read the algorithms' declarations; a widget draws what the model hands it.
READ_DECLARATIONS = {"app.py", "real_app.py", "cluster_app.py", "palette.py", "model.py"}
RUNTIME = ("core", "record", "run", "real")
# The UI reads the runtime through a few modules: the control surface and what a front
# end opens (run/control.py), the commands, the events, the looks and words, the real
# processes. More means a screen knows the runtime's insides.
UI_READS_AT_MOST = 5


def imported(path: Path) -> set[str]:
    """The top folders of ours that a module imports from: "core" for `from ..core.x`,
    "protocol" for `from protocol import`, "ui" for `from .model` inside ui/."""
    folder = path.parent.name
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            parts = (node.module or "").split(".")
            if node.level == 1:
                found.add(folder)
            elif node.level == 2:
                found.add(parts[0] if parts[0] else "playground")
            elif parts[0] in OURS:
                found.add(parts[1] if parts[0] == "playground" and len(parts) > 1 else parts[0])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names if a.name.split(".")[0] in OURS)
    return found


def test_each_folder_imports_only_from_the_folders_below_it():
    wrong = []
    for folder, allowed in BELOW.items():
        for path in sorted((ROOT / folder).glob("*.py")):
            package = {"playground"} if folder.startswith("playground") else set()  # (`from .. import x`)
            if extra := imported(path) - allowed - package:
                wrong.append(f"{path.relative_to(ROOT)} imports from {', '.join(sorted(extra))}")
    assert not wrong, "\n".join(wrong)


def test_widgets_never_reach_into_protocol():
    reaching = [p.name for p in sorted((ROOT / "playground/ui").glob("*.py"))
                if p.name not in READ_DECLARATIONS and "protocol" in imported(p)]
    assert not reaching


def runtime_modules(folder: Path) -> dict[str, set[str]]:
    """The runtime's modules the modules of a folder import, anywhere in them ("run.control"
    for `from ..run.control import Control`, "run.interrupt" for `from ..run import
    interrupt`), each with the modules that import it."""
    found: dict[str, set[str]] = {}
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            parts = (node.module or "").split(".")
            if node.level == 0 and parts[0] == "playground":
                parts = parts[1:]
            elif node.level != 2:
                continue
            if parts and parts[0] in RUNTIME:
                names = [".".join(parts[:2])] if len(parts) > 1 else [f"{parts[0]}.{a.name}" for a in node.names]
                for name in names:
                    found.setdefault(name, set()).add(path.name)
    return found


def test_the_ui_reads_the_runtime_through_a_few_modules():
    modules = runtime_modules(ROOT / "playground/ui")
    assert "run.control" in modules  # (the check reads the imports)
    assert len(modules) <= UI_READS_AT_MOST, "\n".join(f"{m}: {', '.join(sorted(by))}" for m, by in sorted(modules.items()))


def test_the_count_sees_each_way_of_importing_a_module(tmp_path):
    (tmp_path / "x.py").write_text("from ..run import interrupt\nfrom ..core.events import Event\n"
                                   "def f():\n    from playground.real.cluster import RealCluster\n"
                                   "from .model import LOG_CAP\nfrom protocol import machine\n")
    assert runtime_modules(tmp_path) == {"run.interrupt": {"x.py"}, "core.events": {"x.py"}, "real.cluster": {"x.py"}}


def test_the_check_sees_an_upward_import(tmp_path):
    """(What the first test relies on: a relative import two levels up is seen.)"""
    module = tmp_path / "core" / "x.py"
    module.parent.mkdir()
    module.write_text("from ..ui.app import BullyApp\nfrom .events import Event\nimport protocol\n")
    assert imported(module) == {"ui", "core", "protocol"}


def modules_imported_within(folder: Path) -> dict[str, set[str]]:
    """Each module of a folder -> the modules of the same folder it imports, anywhere in
    it (an import inside a function too: that is how a circle hides)."""
    graph = {}
    for path in sorted(folder.glob("*.py")):
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                found.update([node.module] if node.module else [a.name for a in node.names])
        graph[path.stem] = {name.split(".")[0] for name in found} - {path.stem}
    return graph


def circle(graph: dict[str, set[str]]) -> list[str]:
    """A circle of imports in `graph`, or []."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = "open"
        path.append(module)
        for other in sorted(graph.get(module, ())):
            if state.get(other) == "open":
                return path[path.index(other):] + [other]
            if other not in state and (found := visit(other)):
                return found
        state[module] = "done"
        path.pop()
        return []

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return []


def test_the_command_line_has_no_circle_of_imports():
    graph = modules_imported_within(ROOT / "playground/cli")
    assert "entry" in graph and "plan" in graph  # (the package is there, and read)
    assert not circle(graph), " -> ".join(circle(graph))


def test_the_circle_check_sees_one():
    assert circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert circle({"a": {"b"}, "b": set()}) == []


def test_the_registries_load_an_algorithm_when_it_is_asked_for_and_name_each_as_it_names_itself():
    """protocol's registries list names without importing the algorithms, so that a
    command refused at once, or one that runs one algorithm, does not pay for the rest;
    each entry, once loaded, is the class whose `name` is its key."""
    import subprocess
    import sys

    from protocol import ALGORITHMS, MUTEXES

    for registry in (ALGORITHMS, MUTEXES):
        assert all(registry[name].name == name for name in registry)
    script = ("import sys; from playground.cli import main; status = main(['--headless', '--nodes', '0']); "
              "print(status, sorted(m for m in sys.modules if m.startswith('protocol.')))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.stdout.split(maxsplit=1)[0] == "2", done.stderr
    assert done.stdout.split(maxsplit=1)[1].strip() == str(["protocol.interface", "protocol.mutex", "protocol.step_io"])
