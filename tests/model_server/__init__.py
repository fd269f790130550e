"""A scripted model API on loopback for running real ACP agents offline (README.md)."""

from tests.model_server.script import Script, ScriptError, load_script, parse_script
from tests.model_server.server import ModelServer

__all__ = ["ModelServer", "Script", "ScriptError", "load_script", "parse_script"]
