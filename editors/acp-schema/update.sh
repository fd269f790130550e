#!/usr/bin/env bash
# Refresh the vendored ACP JSON Schemas from the npm package @agentclientprotocol/sdk (it ships
# schema/v1/schema{,.unstable}.json and schema/v2/schema{,.unstable}.json, and its LICENSE).
# Usage: editors/acp-schema/update.sh [VERSION]   (default: the newest published version)
# The tarball is fetched with `npm pack` into .cache/acp-sdk/; nothing else is installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="$root/.cache/acp-sdk"
package="@agentclientprotocol/sdk"
version="${1:-$(npm view "$package" version)}"
published="$(npm view "$package@$version" "time[$version]" 2>/dev/null || true)"
mkdir -p "$cache"
tarball="$cache/agentclientprotocol-sdk-$version.tgz"
if [ ! -f "$tarball" ]; then
  (cd "$cache" && npm pack --silent "$package@$version" >/dev/null)
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work"
for name in v1/schema.json v1/schema.unstable.json v2/schema.json v2/schema.unstable.json; do
  if [ ! -f "$work/package/schema/$name" ]; then
    echo "update-schemas: $package@$version has no schema/$name; not updated" >&2
    exit 1
  fi
done
for name in v1/schema.json v1/schema.unstable.json v2/schema.json v2/schema.unstable.json; do
  mkdir -p "$here/$(dirname "$name")"
  cp "$work/package/schema/$name" "$here/$name"
done
cp "$work/package/LICENSE" "$here/LICENSE"
cat > "$here/SOURCE.txt" <<TXT
ACP JSON Schemas (Agent Client Protocol), data only, licence Apache-2.0 (LICENSE beside this file,
copied from the package). Copied byte for byte from the npm package $package $version
(published ${published:-date unknown}), files schema/v1/schema{,.unstable}.json and
schema/v2/schema{,.unstable}.json. Refresh with \`make update-schemas\` (newest version) or
\`editors/acp-schema/update.sh VERSION\`.

v1/  protocolVersion 1: the stable protocol that agents speak today.
v2/  protocolVersion 2: the draft redesign (display-only agent-owned terminals, structured diffs,
     open enums with \`_\`-prefixed custom values, patch semantics).
schema.json = the stable surface; schema.unstable.json = stable plus unstable features.

Tests read these files from here (tests/schema.py, tests/agents/acp_schema.py) and fail when one
is missing. The server package does not read them at run time, so they are not in the wheel.
TXT
echo "update-schemas: ACP schemas now from $package $version"
