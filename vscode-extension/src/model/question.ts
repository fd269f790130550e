// Questions from the agent (acpls/elicitation, editors/protocol.md 5.9), as the agent panel shows
// them: one form field per schema property in the agent's order, and the answer built back from what
// the user typed. acpls checks the answer against the form and asks again with the problems, so
// this only shapes values (a number that is not one goes as typed, for acpls to name).
// No `vscode` import: the webview and the unit tests use it too.

import type { ElicitationParams } from "../protocol";
import type { JsonObject } from "./validate";

export type FieldKind = "text" | "number" | "integer" | "boolean" | "choice" | "multi";
export type FieldOption = { value: string; title: string };
export type FormField = {
  name: string;
  label: string;
  description?: string;
  kind: FieldKind;
  required: boolean;
  options: FieldOption[];
  default?: string | number | boolean | string[];
  /** Bounds and format in words, shown under the field. */
  hint: string;
  format?: string;
};
/** What a panel form sends back: text for inputs, booleans for checkboxes, lists for multi-selects. */
export type FieldValues = Record<string, string | boolean | string[] | undefined>;

function record(value: unknown): JsonObject | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
}

function optionsOf(spec: JsonObject | undefined): FieldOption[] | undefined {
  if (spec === undefined) return undefined;
  if (Array.isArray(spec.enum) && spec.enum.length > 0) {
    return spec.enum.filter((v): v is string => typeof v === "string").map((v) => ({ value: v, title: v }));
  }
  const titled = spec.oneOf ?? spec.anyOf;
  if (Array.isArray(titled) && titled.length > 0) {
    return titled
      .map(record)
      .filter((o): o is JsonObject => o !== undefined && typeof o.const === "string")
      .map((o) => ({ value: o.const as string, title: typeof o.title === "string" ? o.title : (o.const as string) }));
  }
  return undefined;
}

function hintOf(prop: JsonObject): string {
  const words: [string, string][] = [
    ["minLength", "at least {} characters"],
    ["maxLength", "at most {} characters"],
    ["minimum", "at least {}"],
    ["maximum", "at most {}"],
    ["minItems", "choose at least {}"],
    ["maxItems", "choose at most {}"],
    ["format", "{}"],
    ["pattern", "matching {}"],
  ];
  return words
    .filter(([key]) => prop[key] !== undefined && prop[key] !== null)
    .map(([key, text]) => text.replace("{}", String(prop[key])))
    .join("; ");
}

function kindOf(prop: JsonObject): { kind: FieldKind; options: FieldOption[] } {
  const type = prop.type;
  if (type === "boolean") return { kind: "boolean", options: [] };
  if (type === "number" || type === "integer") return { kind: type, options: [] };
  if (type === "array") return { kind: "multi", options: optionsOf(record(prop.items)) ?? [] };
  const options = optionsOf(prop);
  return options !== undefined ? { kind: "choice", options } : { kind: "text", options: [] };
}

/** The form's fields, in `fieldOrder` (the agent's order), then any others by name. */
export function formFields(params: ElicitationParams): FormField[] {
  const schema = record(params.requestedSchema) ?? {};
  const props = record(schema.properties) ?? {};
  const required = Array.isArray(schema.required) ? schema.required.filter((n): n is string => typeof n === "string") : [];
  const order = (params.fieldOrder ?? []).filter((n) => record(props[n]) !== undefined);
  const rest = Object.keys(props).filter((n) => !order.includes(n) && record(props[n]) !== undefined).sort();
  return [...new Set([...order, ...rest])].map((name) => {
    const prop = record(props[name]) ?? {};
    const { kind, options } = kindOf(prop);
    const def = prop.default;
    const field: FormField = {
      name,
      label: typeof prop.title === "string" && prop.title !== "" ? prop.title : name,
      kind,
      required: required.includes(name),
      options,
      hint: hintOf(prop),
    };
    if (typeof prop.description === "string" && prop.description !== "") field.description = prop.description;
    if (typeof prop.format === "string") field.format = prop.format;
    if (typeof def === "string" || typeof def === "number" || typeof def === "boolean") field.default = def;
    else if (Array.isArray(def) && def.every((v) => typeof v === "string")) field.default = def as string[];
    return field;
  });
}

/** The answer's `content` from the panel's values: empty text and no choice mean "no value". */
export function contentFrom(fields: FormField[], values: FieldValues): JsonObject {
  const content: JsonObject = {};
  for (const field of fields) {
    const value = values[field.name];
    if (value === undefined) continue;
    if (field.kind === "boolean") {
      if (typeof value === "boolean") content[field.name] = value;
    } else if (field.kind === "multi") {
      if (Array.isArray(value)) content[field.name] = value;
    } else if (typeof value === "string" && value.trim() !== "") {
      if (field.kind === "number" || field.kind === "integer") {
        const number = Number(value.trim());
        content[field.name] = Number.isFinite(number) ? number : value;
      } else {
        content[field.name] = value;
      }
    }
  }
  return content;
}

/** One line for notifications and the status bar. */
export function questionSummary(params: ElicitationParams): string {
  const first = params.message.split("\n")[0] ?? "";
  return params.mode === "url" ? `${first} (${params.url ?? ""})` : first;
}

/** Only web pages are opened in the browser. */
export function isWebUrl(url: string | undefined): boolean {
  return url !== undefined && /^https?:\/\/[^/\s]+/i.test(url);
}
