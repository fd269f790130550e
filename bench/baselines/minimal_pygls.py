"""The P4 reference: the smallest pygls language server (start → `initialize` result)."""

from pygls.lsp.server import LanguageServer

server = LanguageServer("minimal", "1")

if __name__ == "__main__":
    server.start_io()
