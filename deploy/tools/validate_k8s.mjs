#!/usr/bin/env node
// Offline validation of Kubernetes manifests (no cluster needed), two checks per object:
//
//   schema  the JSON schema of its apiVersion/kind (kubernetes-models 4.5.1,
//           @kubernetes-models/keda for keda.sh objects): wrong types, missing required
//           fields, bad enums. Unknown fields pass a schema check.
//   strict  every object becomes a typed TypeScript literal (`const o: IDeployment =
//           {...}`) checked with `tsc --noEmit --strict`: excess-property checks reject
//           unknown fields at any depth (a typo such as `readinesProbe`).
//
// An object whose apiVersion/kind has no model is an error: everything must be checked.
//
//   node deploy/tools/validate_k8s.mjs [--schema-only | --strict-only] FILE.yaml ... ('-' = stdin)
//
// Exit 0 when every object passes; 1 with one line per problem:
//   FILE: Kind/name: schema: /spec/replicas must be integer
//   FILE: Kind/name: strict: spec.template.spec.containers[0]: 'readinesProbe' does not exist ...
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

const deployDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const modulesDir = join(deployDir, "node_modules");

// apiVersion -> npm module prefix holding `${prefix}/${apiVersion}/${kind}`.
function modulePrefix(apiVersion) {
  if (apiVersion.startsWith("keda.sh/")) return "@kubernetes-models/keda";
  return "kubernetes-models";
}

async function loadModel(apiVersion, kind) {
  const spec = `${modulePrefix(apiVersion)}/${apiVersion}/${kind}`;
  try {
    const mod = await import(spec);
    if (typeof mod[kind] !== "function") return null;
    return { spec, cls: mod[kind] };
  } catch {
    return null;
  }
}

// JSON text of `value` (2-space indent) plus, for each output line, the path of the
// property it starts, so tsc's line numbers map back to manifest paths.
function serialise(value) {
  const lines = [];
  const paths = [];
  const emit = (text, path) => { lines.push(text); paths.push(path); };
  const walk = (v, path, indent, prefix, suffix) => {
    const pad = " ".repeat(indent);
    if (Array.isArray(v)) {
      if (v.length === 0) return emit(`${pad}${prefix}[]${suffix}`, path);
      emit(`${pad}${prefix}[`, path);
      v.forEach((item, i) => walk(item, `${path}[${i}]`, indent + 2, "", i + 1 < v.length ? "," : ""));
      return emit(`${pad}]${suffix}`, path);
    }
    if (v !== null && typeof v === "object") {
      const keys = Object.keys(v);
      if (keys.length === 0) return emit(`${pad}${prefix}{}${suffix}`, path);
      emit(`${pad}${prefix}{`, path);
      keys.forEach((k, i) => walk(v[k], path ? `${path}.${k}` : k, indent + 2,
                                  `${JSON.stringify(k)}: `, i + 1 < keys.length ? "," : ""));
      return emit(`${pad}}${suffix}`, path);
    }
    return emit(`${pad}${prefix}${JSON.stringify(v)}${suffix}`, path);
  };
  walk(value, "", 0, "", "");
  return { lines, paths };
}

function describe(obj) {
  return `${obj.kind}/${obj.metadata?.name ?? "(no name)"}`;
}

async function main(argv) {
  let doSchema = true;
  let doStrict = true;
  const files = [];
  for (const arg of argv) {
    if (arg === "--schema-only") doStrict = false;
    else if (arg === "--strict-only") doSchema = false;
    else files.push(arg);
  }
  if (files.length === 0) {
    console.error("usage: validate_k8s.mjs [--schema-only|--strict-only] FILE.yaml ... ('-' = stdin)");
    return 2;
  }

  const problems = [];
  const objects = []; // { file, obj, model }
  for (const file of files) {
    const text = file === "-" ? readFileSync(0, "utf8") : readFileSync(file, "utf8");
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length) {
        problems.push(`${file}: YAML: ${doc.errors[0].message}`);
        continue;
      }
      const obj = doc.toJS();
      if (obj === null || obj === undefined) continue;
      if (typeof obj !== "object" || !obj.apiVersion || !obj.kind) {
        problems.push(`${file}: a document without apiVersion/kind`);
        continue;
      }
      const model = await loadModel(obj.apiVersion, obj.kind);
      if (!model) {
        problems.push(`${file}: ${describe(obj)}: no schema for apiVersion ${obj.apiVersion} kind ${obj.kind}`);
        continue;
      }
      objects.push({ file, obj, model });
    }
  }

  if (doSchema) {
    for (const { file, obj, model } of objects) {
      try {
        new model.cls(obj).validate();
      } catch (e) {
        const errors = e.errors ?? [{ instancePath: "", message: e.message }];
        for (const err of errors) {
          const where = err.instancePath || "/";
          const extra = err.params?.allowedValues ? ` (${err.params.allowedValues.join(", ")})` : "";
          problems.push(`${file}: ${describe(obj)}: schema: ${where} ${err.message}${extra}`);
        }
      }
    }
  }

  if (doStrict && objects.length) {
    const dir = mkdtempSync(join(tmpdir(), "infera-strict-"));
    try {
      const sources = [];
      objects.forEach(({ obj, model }, i) => {
        const { lines, paths } = serialise(obj);
        const header = [
          `import type { I${obj.kind} } from ${JSON.stringify(model.spec)};`,
          `export const object${i}: I${obj.kind} =`,
        ];
        const name = `object${i}.ts`;
        writeFileSync(join(dir, name), [...header, ...lines, ";", ""].join("\n"));
        sources.push({ name, offset: header.length, paths });
      });
      writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({
        compilerOptions: {
          strict: true, noEmit: true, skipLibCheck: true, types: [],
          target: "es2020", module: "commonjs", moduleResolution: "node10",
          ignoreDeprecations: "5.0", baseUrl: ".",
          paths: { "*": [`${modulesDir}/*`] },
        },
        files: sources.map((s) => s.name),
      }));
      const tsc = spawnSync(process.execPath,
        [join(modulesDir, "typescript", "lib", "tsc.js"), "-p", join(dir, "tsconfig.json"), "--pretty", "false"],
        { encoding: "utf8" });
      if (tsc.status !== 0) {
        const out = `${tsc.stdout}${tsc.stderr}`;
        let mapped = 0;
        for (const line of out.split("\n")) {
          const m = /^(?:.*[\\/])?object(\d+)\.ts\((\d+),(\d+)\): error (TS\d+): (.*)$/.exec(line);
          if (!m) continue;
          const index = Number(m[1]);
          const { file, obj } = objects[index];
          const { offset, paths } = sources[index];
          const path = paths[Number(m[2]) - 1 - offset] ?? "";
          // Inline object types (CRD models) are long: name the type only when it is short.
          const message = m[5].replace(/in type '(\{.{100,})'\.?$/, "in its type.");
          problems.push(`${file}: ${describe(obj)}: strict: ${path || "(object)"}: ${message} [${m[4]}]`);
          mapped += 1;
        }
        if (mapped === 0) problems.push(`tsc failed: ${out.trim()}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  for (const p of problems) console.log(p);
  const checks = [doSchema && "schema", doStrict && "strict"].filter(Boolean).join("+");
  console.log(`${objects.length} object(s), ${checks}: ${problems.length ? `${problems.length} problem(s)` : "ok"}`);
  return problems.length ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
