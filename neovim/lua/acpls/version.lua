-- The plugin's version: the server's (server/acpls/__init__.py) and the VS Code extension's
-- (vscode-extension/package.json) are the same; tests/unit/test_versions.py checks it.
return '0.1.0'
