"""acpls: a language server that turns what an ACP coding agent does into what the editor does."""

__version__ = "0.1.0"
