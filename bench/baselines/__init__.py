"""The relays acpls is measured against (bench/README.md, "Baselines")."""
