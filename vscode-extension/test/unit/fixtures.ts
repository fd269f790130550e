// Loads the golden editor messages of editors/fixtures/ (shared with the Python and Lua tests).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

export function fixturesDir(): string {
  let dir = __dirname;
  for (;;) {
    const candidate = join(dir, "editors", "fixtures");
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`editors/fixtures not found above ${__dirname}`);
    dir = parent;
  }
}

export type Fixture = { file: string; method?: string; params?: unknown; result?: unknown };

export function loadFixtures(): Fixture[] {
  const dir = fixturesDir();
  return readdirSync(dir)
    .filter((f) => f.startsWith("acpls_") && f.endsWith(".json")) // messages; settings.json is the settings schema
    .sort()
    .map((file) => ({ file, ...(JSON.parse(readFileSync(join(dir, file), "utf8")) as Omit<Fixture, "file">) }));
}

export function fixture(file: string): Fixture {
  const found = loadFixtures().find((f) => f.file === file);
  if (found === undefined) throw new Error(`no fixture ${file}`);
  return found;
}
