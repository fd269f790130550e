// Small runtime checkers for JSON that arrives from the server. They turn `unknown` into the typed
// shapes of protocol.ts and fail with a message that names the bad field, so a malformed message is
// reported (and dropped) instead of breaking the UI half-way through an update.
//
// Objects keep their unknown keys: the protocol forwards fields acpls does not know, and the UI may
// show them generically.

export class ProtocolError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
    this.name = "ProtocolError";
  }
}

export type Check<T> = (value: unknown, path: string) => T;

export type JsonObject = { [key: string]: unknown };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing (the key is missing)";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

export const str: Check<string> = (value, path) => {
  if (typeof value !== "string") throw new ProtocolError(path, `expected a string, got ${describe(value)}`);
  return value;
};

export const num: Check<number> = (value, path) => {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new ProtocolError(path, `expected a number, got ${describe(value)}`);
  }
  return value;
};

export const int: Check<number> = (value, path) => {
  const n = num(value, path);
  if (!Number.isInteger(n)) throw new ProtocolError(path, `expected an integer, got ${n}`);
  return n;
};

export const bool: Check<boolean> = (value, path) => {
  if (typeof value !== "boolean") throw new ProtocolError(path, `expected a boolean, got ${describe(value)}`);
  return value;
};

export const anyValue: Check<unknown> = (value) => value;

export const anyObject: Check<JsonObject> = (value, path) => {
  if (!isObject(value)) throw new ProtocolError(path, `expected an object, got ${describe(value)}`);
  return value;
};

export function arrayOf<T>(item: Check<T>): Check<T[]> {
  return (value, path) => {
    if (!Array.isArray(value)) throw new ProtocolError(path, `expected an array, got ${describe(value)}`);
    return value.map((element, index) => item(element, `${path}[${index}]`));
  };
}

/** A JSON object whose every value passes `item` (an environment, for example). */
export function record<T>(item: Check<T>): Check<Record<string, T>> {
  return (value, path) => {
    const source = anyObject(value, path);
    const out: Record<string, T> = {};
    for (const [key, v] of Object.entries(source)) out[key] = item(v, `${path}.${key}`);
    return out;
  };
}

export function oneOf<T extends string>(...allowed: T[]): Check<T> {
  return (value, path) => {
    const s = str(value, path);
    if (!(allowed as string[]).includes(s)) {
      throw new ProtocolError(path, `expected one of ${allowed.join(", ")}, got ${JSON.stringify(s)}`);
    }
    return s as T;
  };
}

export function nullable<T>(check: Check<T>): Check<T | null> {
  return (value, path) => (value === null ? null : check(value, path));
}

export function either<A, B>(a: Check<A>, b: Check<B>, what: string): Check<A | B> {
  return (value, path) => {
    try {
      return a(value, path);
    } catch {
      try {
        return b(value, path);
      } catch {
        throw new ProtocolError(path, `expected ${what}, got ${describe(value)}`);
      }
    }
  };
}

const OPTIONAL = Symbol("optional");
type Optional<T> = Check<T> & { [OPTIONAL]: true };

/** A key that may be absent. `null` counts as absent too (ACP sends `null` for "not given"). */
export function optional<T>(check: Check<T>): Optional<T | undefined> {
  const wrapped = ((value: unknown, path: string) =>
    value === undefined || value === null ? undefined : check(value, path)) as Optional<T | undefined>;
  wrapped[OPTIONAL] = true;
  return wrapped;
}

type Shape = { [key: string]: Check<unknown> };
type RequiredKeys<S extends Shape> = { [K in keyof S]: S[K] extends Optional<unknown> ? never : K }[keyof S];
type OptionalKeys<S extends Shape> = Exclude<keyof S, RequiredKeys<S>>;
type Checked<C> = C extends Check<infer T> ? T : never;
export type ShapeType<S extends Shape> = { [K in RequiredKeys<S>]: Checked<S[K]> } & {
  [K in OptionalKeys<S>]?: Exclude<Checked<S[K]>, undefined>;
} & JsonObject;

/** An object with the given keys checked; other keys are kept unchanged. */
export function object<S extends Shape>(shape: S): Check<ShapeType<S>> {
  return (value, path) => {
    const source = anyObject(value, path);
    const result: JsonObject = { ...source };
    for (const [key, check] of Object.entries(shape)) {
      const checked = check(source[key], `${path}.${key}`);
      if (checked === undefined) delete result[key];
      else result[key] = checked;
    }
    return result as ShapeType<S>;
  };
}
