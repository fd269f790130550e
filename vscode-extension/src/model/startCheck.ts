// Before the server starts: does this .vsix fit this machine, and does the chosen Python import the
// whole server? (pure: no editor API). The .vsix says what it carries in bundled/manifest.json
// (scripts/bundle.py): the VS Code target it was built for and the CPython versions its compiled
// modules cover. `python -m acpls --self-check --json --platform <target>` (server/acpls/self_check.py)
// imports every server module and answers with the cause and the fix when it cannot start.

import { MIN_PYTHON } from "./python";

/** bundled/manifest.json of a .vsix. */
export interface BundleManifest {
  target: string;
  pythons: readonly string[];
}

export type ProblemKind = "python-too-old" | "wrong-platform" | "missing-module" | "broken-module";

export interface SelfCheckProblem {
  kind: ProblemKind | string;
  cause: string;
  fix: string;
}

export interface SelfCheckReport {
  ok: boolean;
  python: string;
  platform: string;
  speedups: Record<string, string>;
  /** What works less well here (agent terminals without pywinpty on Windows): logged, not fatal. */
  warnings: string[];
  problems: SelfCheckProblem[];
}

export type StartCheck = { ok: true; report: SelfCheckReport } | { ok: false; message: string };

/** The manifest's JSON, or undefined when it is not one (a development build has none). */
export function parseManifest(text: string | undefined): BundleManifest | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null) return undefined;
    const { target, pythons } = value as Record<string, unknown>;
    if (typeof target !== "string" || !Array.isArray(pythons) || !pythons.every((p) => typeof p === "string" && /^3\.\d+$/.test(p))) {
      return undefined;
    }
    return { target, pythons: pythons as string[] };
  } catch {
    return undefined;
  }
}

/** What to ask uv for: exactly the CPython versions the bundled compiled modules cover (uv would
 * otherwise download the newest CPython, which the .vsix has no orjson or pybase64 for). */
export function uvPythonRequest(manifest: BundleManifest | undefined): string {
  const floor = `>=${MIN_PYTHON[0]}.${MIN_PYTHON[1]}`;
  const minors = (manifest?.pythons ?? []).map((p) => Number(p.split(".")[1])).filter((m) => Number.isInteger(m));
  if (minors.length === 0) return floor;
  return `${floor},<3.${Math.max(...minors) + 1}`;
}

/** This machine as a VS Code target names it, from Node's process.platform and process.arch. */
export function runningTarget(platform: string, arch: string): string {
  return `${platform}-${arch}`;
}

/** Set when the .vsix was built for another platform than this machine's (checked before any
 * Python is looked for: nothing in it would run). */
export function platformMismatch(manifest: BundleManifest | undefined, here: string, version: string): string | undefined {
  if (manifest === undefined || manifest.target === here) return undefined;
  return (
    `this acpls package is for ${manifest.target}, and this machine is ${here}. ` +
    `Install the acpls extension for ${here}: the Marketplace picks it by itself; for a .vsix file, ` +
    `take acpls-${version}-${here}.vsix.`
  );
}

/** What the user reads when the self-check fails: its cause, then what to do in VS Code. */
export function problemMessage(problem: SelfCheckProblem, python: string, here: string): string {
  switch (problem.kind) {
    case "python-too-old":
      return `${problem.cause} (${python}). Set acpls.python to a Python ${MIN_PYTHON.join(".")} or newer, or clear it and acpls downloads one.`;
    case "wrong-platform":
      return `${problem.cause}. Install the acpls extension for ${here} (the Marketplace picks it by itself; for a .vsix file, take the one named ${here}).`;
    case "missing-module":
      return `${problem.cause}. Reinstall the acpls extension; if acpls.server.command or acpls.python points elsewhere, reinstall acpls there.`;
    default:
      return `${problem.cause}. Reinstall the acpls extension; if this persists, report it with the acpls log.`;
  }
}

/** The self-check's answer: its JSON on stdout with exit 0, or the first problem it names; when
 * there is no JSON (the Python could not even load acpls), the last line it wrote to stderr. */
export function readSelfCheck(code: number, stdout: string, stderr: string, python: string, here: string): StartCheck {
  const report = parseReport(stdout);
  if (report === undefined) {
    const last = stderr.split("\n").map((l) => l.trim()).filter((l) => l !== "").pop();
    return {
      ok: false,
      message:
        `${python} -m acpls --self-check did not run (exit ${code}${last === undefined ? "" : `: ${last}`}). ` +
        "Reinstall the acpls extension, or set acpls.python to a Python " +
        `${MIN_PYTHON.join(".")} or newer.`,
    };
  }
  const first = report.problems[0];
  if (report.ok && code === 0) return { ok: true, report };
  if (first === undefined) return { ok: false, message: `acpls --self-check failed with ${python} (exit ${code})` };
  return { ok: false, message: problemMessage(first, python, here) };
}

function parseReport(stdout: string): SelfCheckReport | undefined {
  try {
    const value: unknown = JSON.parse(stdout.trim());
    if (typeof value !== "object" || value === null) return undefined;
    const r = value as Record<string, unknown>;
    if (typeof r.ok !== "boolean" || !Array.isArray(r.problems)) return undefined;
    const problems = r.problems.filter(
      (p): p is SelfCheckProblem =>
        typeof p === "object" && p !== null && ["kind", "cause", "fix"].every((k) => typeof (p as Record<string, unknown>)[k] === "string"),
    );
    const speedups = typeof r.speedups === "object" && r.speedups !== null ? (r.speedups as Record<string, string>) : {};
    const warnings = Array.isArray(r.warnings) ? r.warnings.filter((w): w is string => typeof w === "string") : [];
    return {
      ok: r.ok,
      python: typeof r.python === "string" ? r.python : "?",
      platform: typeof r.platform === "string" ? r.platform : "?",
      speedups,
      warnings,
      problems,
    };
  } catch {
    return undefined;
  }
}

/** The log line for a server that starts: which fast paths it runs with (a Python newer than the
 * bundled modules cover runs on the standard library: slower, and worth a line). */
export function speedupsLine(report: SelfCheckReport): string {
  const parts = Object.entries(report.speedups).map(([name, used]) => `${name}: ${used}`);
  return `acpls self-check passed on Python ${report.python} (${report.platform}); ${parts.join(", ")}`;
}
