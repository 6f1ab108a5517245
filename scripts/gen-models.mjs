#!/usr/bin/env node
// Generates pi-tool's built-in model registry (pi-tool/src/providers/models/builtin.json)
// from pi-ai's own registry, so that `builtin_models()` holds exactly what pi-ai's
// `builtinModels()` holds. Nothing in the output is typed by hand.
//
// Usage:
//   node scripts/gen-models.mjs PI_AI_PACKAGE_DIR            # rewrites the checked-in file
//   node scripts/gen-models.mjs PI_AI_PACKAGE_DIR --stdout   # prints it (the drift test)
//   node scripts/gen-models.mjs PI_AI_PACKAGE_DIR --out FILE
// where PI_AI_PACKAGE_DIR is an installed @earendil-works/pi-ai, for example
// bridges/pi/node_modules/@earendil-works/pi-ai after `npm ci --prefix bridges/pi`.
//
// The models are read through pi-ai's public API (`builtinModels().getModels(provider)`)
// rather than from dist/providers/data/*.json directly: pi-ai flattens each provider's
// per-API groups (model-catalog.js, later groups win on a shared id) and may apply
// defaults on the way, and going through its API replicates whatever it does.
//
// Output is deterministic: pi-ai's provider order, pi-ai's model order, pi-ai's key order
// inside each model, one model per line (diffs stay readable), no timestamp of ours. The
// header carries an FNV-1a 64 checksum of everything from the `"providers"` line on, so a
// test can tell a hand edit from generated data without Node.

import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

// Providers whose every model speaks one of pi-tool's three wire APIs. pi-ai 0.85.0 has
// more such providers (vercel-ai-gateway, huggingface, together, ...); these are the ones
// issue 9 names plus the common ones, keeping the checked-in data under 300 KB.
const PROVIDERS = new Set(["anthropic", "openai", "groq", "cerebras", "deepseek", "xai", "openrouter"]);
const APIS = new Set(["anthropic-messages", "openai-completions", "openai-responses"]);

const OUT_DEFAULT = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "..",
  "pi-tool",
  "src",
  "providers",
  "models",
  "builtin.json",
);

function fail(message) {
  process.stderr.write(`gen-models: ${message}\n`);
  process.exit(1);
}

// FNV-1a, 64 bit, over UTF-8 bytes; pi-tool's test computes the same.
function fnv1a64(text) {
  const prime = 0x100000001b3n;
  const mask = 0xffffffffffffffffn;
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text, "utf8")) {
    hash ^= BigInt(byte);
    hash = (hash * prime) & mask;
  }
  return hash.toString(16).padStart(16, "0");
}

const args = process.argv.slice(2);
const pkgDir = args[0];
if (!pkgDir || pkgDir.startsWith("--")) fail("usage: gen-models.mjs PI_AI_PACKAGE_DIR [--stdout | --out FILE]");
let out = OUT_DEFAULT;
let toStdout = false;
for (let i = 1; i < args.length; i++) {
  if (args[i] === "--stdout") toStdout = true;
  else if (args[i] === "--out" && args[i + 1]) out = args[++i];
  else fail(`unknown argument: ${args[i]}`);
}

const pkg = JSON.parse(readFileSync(path.join(pkgDir, "package.json"), "utf8"));
if (pkg.name !== "@earendil-works/pi-ai") fail(`${pkgDir} is ${pkg.name}, not @earendil-works/pi-ai`);
const dataDir = path.join(pkgDir, "dist", "providers", "data");
const manifest = JSON.parse(readFileSync(path.join(dataDir, ".manifest.json"), "utf8"));
const { builtinModels } = await import(pathToFileURL(path.join(pkgDir, "dist", "providers", "all.js")).href);
const registry = builtinModels();

const lines = ['"providers":{'];
const sourceFiles = {};
const providerIds = registry
  .getProviders()
  .map((p) => p.id)
  .filter((id) => PROVIDERS.has(id));
for (const id of PROVIDERS) {
  if (!providerIds.includes(id)) fail(`pi-ai ${pkg.version} has no provider ${id}`);
}
providerIds.forEach((id, p) => {
  const models = registry.getModels(id);
  if (models.length === 0) fail(`provider ${id} has no models`);
  lines.push(`${JSON.stringify(id)}:[`);
  models.forEach((model, m) => {
    if (model.provider !== id) fail(`${id}/${model.id} names provider ${model.provider}`);
    if (!APIS.has(model.api)) fail(`${id}/${model.id} uses api ${model.api}, which pi-tool has no provider for`);
    lines.push(JSON.stringify(model) + (m + 1 < models.length ? "," : ""));
  });
  lines.push("]" + (p + 1 < providerIds.length ? "," : ""));
  const file = `${id}.json`;
  if (manifest.files?.[file]) sourceFiles[file] = manifest.files[file];
});
lines.push("}}");
const body = lines.join("\n") + "\n";

const header = [
  `{"generator":"scripts/gen-models.mjs (generated, do not edit; regenerate with: node scripts/gen-models.mjs PI_AI_PACKAGE_DIR)",`,
  `"source":${JSON.stringify(`${pkg.name} ${pkg.version}`)},`,
  `"dataGeneratedAt":${JSON.stringify(manifest.generatedAt ?? null)},`,
  `"sourceSha256":${JSON.stringify(sourceFiles)},`,
  `"fnv1a64":"${fnv1a64(body)}",`,
].join("\n");
const text = header + "\n" + body;

if (toStdout) process.stdout.write(text);
else writeFileSync(out, text);
