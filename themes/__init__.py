"""The playground's look: a dark and a light Theme, and the stylesheet that uses them.

Every colour in the app comes from theme variables ($success, $error, ...), in
`app.tcss` and in the widgets' markup, so switching theme recolours everything.
The meaning of the variables here: success = normal, warning = electing, accent =
waiting / selection, error = down and broken assumptions, secondary = the leader.
"""

from pathlib import Path

from textual.theme import Theme

STYLESHEET = Path(__file__).with_name("app.tcss")

DARK = Theme(
    name="bully-dark",
    primary="#5FA8D3",
    secondary="#F2C14E",
    accent="#B48EF0",
    warning="#F08A4B",
    error="#E5575B",
    success="#6BC46D",
    foreground="#E6E6E6",
    background="#16181D",
    surface="#1F232A",
    panel="#2A2F38",
    dark=True,
)

LIGHT = Theme(
    name="bully-light",
    primary="#1F6FA8",
    secondary="#A8730B",
    accent="#7346C2",
    warning="#C2561B",
    error="#B8262B",
    success="#2E8532",
    foreground="#1E1E1E",
    background="#F7F7F4",
    surface="#EDEDE8",
    panel="#DCDCD4",
    dark=False,
)

THEMES = (DARK, LIGHT)


def use_ours(app) -> None:
    """The app's themes are ours only (the palette offers them; their colours say what
    things are), starting dark: both apps call this on mount (ui/cluster_app.py)."""
    for theme in THEMES:
        app.register_theme(theme)
    app.theme = DARK.name
    for name in set(app.available_themes) - {theme.name for theme in THEMES}:
        app.unregister_theme(name)
