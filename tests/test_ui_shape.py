"""The UI's shape (playground/ui/): thin apps, one widget a module. An app does what only
it does, on the control surface (run/control.py); the rest has modules of its own (the
screen and its keys, the palette, redraws, branching, export, the collector's policy),
so that a new capability is written into a place of its own, not into an app."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

from textual.app import App
from textual.widget import Widget

UI = Path(__file__).resolve().parent.parent / "playground" / "ui"
FEWER_METHODS_THAN = 20


def methods(cls: ast.ClassDef) -> list[str]:
    """What a class defines itself: its functions (properties and handlers too)."""
    return [node.name for node in cls.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]


def test_each_app_defines_fewer_than_twenty_methods():
    apps = {}
    for path in sorted(UI.glob("*.py")):
        module = importlib.import_module(f"playground.ui.{path.stem}")
        for node in ast.parse(path.read_text()).body:
            cls = getattr(module, node.name, None) if isinstance(node, ast.ClassDef) else None
            if inspect.isclass(cls) and issubclass(cls, App):
                # (a mixin only apps use would count as theirs: none is left)
                mixins = [base for base in cls.__bases__ if not issubclass(base, App)]
                assert not mixins, f"{node.name} mixes in {mixins}"
                apps[node.name] = methods(node)
    assert {"ClusterApp", "BullyApp", "RealApp"} <= set(apps)
    fat = {name: len(found) for name, found in apps.items() if len(found) >= FEWER_METHODS_THAN}
    assert not fat, fat


def test_one_widget_a_module():
    crowded = {}
    for path in sorted(UI.glob("*.py")):
        module = importlib.import_module(f"playground.ui.{path.stem}")
        widgets = [name for name, cls in vars(module).items()
                   if inspect.isclass(cls) and issubclass(cls, Widget) and cls.__module__ == module.__name__]
        if len(widgets) > 1:
            crowded[path.name] = widgets
    assert not crowded, crowded
