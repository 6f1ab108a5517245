#!/usr/bin/env node
// Runs the real pi-ai 0.85.0 `streamSimple` against a server that is already running
// (the Rust harness's mock server), to check that server: the harness then builds the
// output file from what its server received plus the events printed here, and compares
// it with expected/. Used by conformance-runner/tests/providers_oracle.rs.
//
// Input (stdin): {"api", "model", "context", "options", "port"}, the model already merged
// with DEFAULT_MODELS and pointed at the server. Output (stdout): {"events", "final"},
// normalised exactly as record.mjs normalises them (FORMAT.md 2.2, 2.3).
// pi-ai is loaded from $PI_AI_NODE_MODULES (default: ./node_modules beside this file,
// after `npm install`).

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
// Read before the scrub below, which deletes every PI_ variable.
const NODE_MODULES = process.env.PI_AI_NODE_MODULES ?? path.join(HERE, "node_modules");

// The recorder's hermetic environment.
for (const name of Object.keys(process.env)) {
	if (/^(PI_|OPENAI_|ANTHROPIC_|AZURE_|GEMINI_|GOOGLE_)/i.test(name) || /_proxy$/i.test(name)) {
		delete process.env[name];
	}
}

const piAi = (file) => import(pathToFileURL(path.join(NODE_MODULES, "@earendil-works/pi-ai/dist", file)).href);

const DEFAULT_API_KEY = "sk-test-0123456789abcdef";
const SCRATCH_BLOCK_KEYS = ["index", "partialJson", "partialArgs", "streamIndex", "customInput"];

// record.mjs's normalisation, unchanged.
function normaliseValue(value, port, key) {
	if (value === undefined) return "<undefined>";
	if (value === null) return null;
	if (typeof value === "string") return value.split(`127.0.0.1:${port}`).join("127.0.0.1:<port>");
	if (typeof value !== "object") {
		if (key === "timestamp" && typeof value === "number") return "<timestamp>";
		return value;
	}
	if (Array.isArray(value)) return value.map((v) => normaliseValue(v, port));
	const out = {};
	for (const [k, v] of Object.entries(value)) out[k] = normaliseValue(v, port, k);
	return out;
}
function stripScratch(block) {
	if (!block || typeof block !== "object") return block;
	const copy = { ...block };
	for (const k of SCRATCH_BLOCK_KEYS) delete copy[k];
	return copy;
}
function normaliseMessage(message, port) {
	if (!message || typeof message !== "object") return normaliseValue(message, port);
	const copy = { ...message };
	if (Array.isArray(copy.content)) copy.content = copy.content.map(stripScratch);
	return normaliseValue(copy, port);
}
function normaliseEvent(event, port) {
	const out = {};
	for (const [k, v] of Object.entries(event)) {
		if (k === "partial" || k === "message" || k === "error") out[k] = normaliseMessage(v, port);
		else if (k === "toolCall") out[k] = normaliseValue(stripScratch(v), port);
		else out[k] = normaliseValue(v, port, k);
	}
	return out;
}

// Push-time snapshots, as record.mjs takes them.
const { EventStream } = await piAi("utils/event-stream.js");
const snapshots = new WeakMap();
const originalPush = EventStream.prototype.push;
EventStream.prototype.push = function patchedPush(event) {
	if (!this.done && event && typeof event === "object" && !snapshots.has(event)) {
		snapshots.set(event, structuredClone(event));
	}
	return originalPush.call(this, event);
};

const job = JSON.parse(fs.readFileSync(0, "utf8"));
const options = { apiKey: DEFAULT_API_KEY, ...(job.options ?? {}) };
if (options.apiKey === null) delete options.apiKey;
const mod = await piAi(`api/${job.api}.js`);
const events = [];
for await (const event of mod.streamSimple(job.model, job.context, options)) events.push(snapshots.get(event));
const terminal = events.at(-1);
const final = terminal && (terminal.type === "done" || terminal.type === "error") ? (terminal.message ?? terminal.error) : null;
process.stdout.write(
	JSON.stringify({
		events: events.map((e) => normaliseEvent(e, job.port)),
		final: final ? normaliseMessage(final, job.port) : null,
	}),
);
