"""The ACP agent registry (agentclientprotocol/registry): its format, a bundled snapshot, and the
start command an agent's entry resolves to. Pure: no network, no event loop (services/ fetches)."""
