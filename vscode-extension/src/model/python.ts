// Which Python runs the server (pure: no editor API; the probes and uv are injected).
//
// In order: the acpls.python setting (used as given, or an error that says what is wrong), the
// Python extension's interpreter, python3/python on PATH, a Python uv already knows, and last a
// Python the bundled uv downloads once. The first one that is 3.11 or newer wins.

// server/acpls/requirements.py PYTHON (tests/unit/test_requirements.py checks they agree).
export const MIN_PYTHON: readonly [number, number] = [3, 11];

export type PythonSource = "setting" | "python-extension" | "PATH" | "uv" | "uv-download";

export interface PythonChoice {
  python: string;
  source: PythonSource;
  version: string;
}

/** The major.minor version a command reports, or undefined when it cannot run. */
export type Probe = (command: string) => Promise<string | undefined>;

export interface UvPort {
  /** A Python 3.11+ that uv finds without downloading, or undefined. */
  find(): Promise<string | undefined>;
  /** Downloads one (shown to the user while it runs); throws with uv's reason when it cannot. */
  install(): Promise<void>;
}

export interface PythonInputs {
  configured: string;
  fromExtension: string | undefined;
  pathCommands: readonly string[];
  probe: Probe;
  /** undefined when this build carries no uv (a development build). */
  uv: UvPort | undefined;
}

export class PythonNotFound extends Error {}

export function isSupported(version: string | undefined): boolean {
  if (version === undefined) return false;
  const [major, minor] = version.split(".").map(Number);
  if (major === undefined || minor === undefined || Number.isNaN(major) || Number.isNaN(minor)) return false;
  return major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1]);
}

export async function choosePython(inputs: PythonInputs): Promise<PythonChoice> {
  if (inputs.configured !== "") return checkConfigured(inputs.configured, inputs.probe);
  const tried: string[] = [];
  const candidates: [string | undefined, PythonSource][] = [
    [inputs.fromExtension, "python-extension"],
    ...inputs.pathCommands.map((command): [string, PythonSource] => [command, "PATH"]),
  ];
  for (const [command, source] of candidates) {
    if (command === undefined) continue;
    const version = await inputs.probe(command);
    if (isSupported(version)) return { python: command, source, version: version as string };
    tried.push(version === undefined ? `${command} (not found)` : `${command} (${version})`);
  }
  if (inputs.uv === undefined) {
    throw new PythonNotFound(
      `acpls needs Python 3.11 or newer and found none (${tried.join(", ")}); install one and set acpls.python`,
    );
  }
  return fromUv(inputs.uv, inputs.probe, tried);
}

async function checkConfigured(python: string, probe: Probe): Promise<PythonChoice> {
  const version = await probe(python);
  if (version === undefined) {
    throw new PythonNotFound(`cannot run acpls.python (${python}); set it to a Python 3.11 or newer, or clear it`);
  }
  if (!isSupported(version)) {
    throw new PythonNotFound(`acpls needs Python 3.11 or newer, and acpls.python (${python}) is ${version}`);
  }
  return { python, source: "setting", version };
}

async function fromUv(uv: UvPort, probe: Probe, tried: string[]): Promise<PythonChoice> {
  const known = await uv.find();
  const knownVersion = known === undefined ? undefined : await probe(known);
  if (known !== undefined && isSupported(knownVersion)) {
    return { python: known, source: "uv", version: knownVersion as string };
  }
  try {
    await uv.install();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new PythonNotFound(
      `acpls needs Python 3.11 or newer: none was found (${tried.join(", ")}) and downloading one ` +
        `with uv failed: ${reason}. Connect to the network and run "acpls: Restart ` +
        "server\", or install Python 3.11+ and set acpls.python.",
    );
  }
  const installed = await uv.find();
  const version = installed === undefined ? undefined : await probe(installed);
  if (installed === undefined || !isSupported(version)) {
    throw new PythonNotFound(`uv installed a Python 3.11+ but cannot find it; set acpls.python`);
  }
  return { python: installed, source: "uv-download", version: version as string };
}
