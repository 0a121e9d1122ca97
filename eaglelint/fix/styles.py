"""How a generated delegation treats a held model that lacks the member: plain data.

Kept apart from delegation.py, which renders the members, so that the configuration,
the command line and the check options can name the styles without loading the fixer.
"""

STYLES = ("raise", "plain", "guard")
DEFAULT_STYLE = "raise"
