// Generates pi-tool/tests/data/openai_sse/corpus.json: bodies cut into network chunks,
// with every CR/LF combination, comments, fields and multi-byte characters split across
// chunks, and the SSE messages the openai SDK 6.40.0's `_iterSSEMessages` yields for
// each (event, data). pi-tool's `openai_sse` decoder must yield the same.
//
//   node scripts/gen-openai-sse-corpus.mjs [path/to/node_modules]   (default /tmp/pc/node_modules)
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const modules = process.argv[2] ?? "/tmp/pc/node_modules";
const require = createRequire(path.join(modules, "openai", "package.json"));
const { _iterSSEMessages } = require("./core/streaming.js");

// A small deterministic PRNG (mulberry32), so the corpus is reproducible.
let seed = 0x5eed;
function rand() {
	seed = (seed + 0x6d2b79f5) | 0;
	let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
	t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
	return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (items) => items[Math.floor(rand() * items.length)];

const NEWLINES = ["\n", "\r", "\r\n"];
const LINES = [
	() => `data: {"n":${Math.floor(rand() * 100)}}`,
	() => "data: caf\u00e9 \u{1F600} \u4e2d",
	() => "data:no-space",
	() => "data:  two-spaces",
	() => "data",
	() => "data:",
	() => `event: ${pick(["message", "thread.run", "error", ""])}`,
	() => ": comment",
	() => "id: 7",
	() => "retry: 10",
	() => "unknown: x",
	() => "data: [DONE]",
	() => "\ufeffdata: bom",
];

function body() {
	let text = "";
	const events = 1 + Math.floor(rand() * 4);
	for (let e = 0; e < events; e++) {
		const lines = 1 + Math.floor(rand() * 3);
		for (let l = 0; l < lines; l++) text += pick(LINES)() + pick(NEWLINES);
		// The blank line that ends the event (sometimes missing at the very end).
		if (e < events - 1 || rand() < 0.7) text += pick(NEWLINES);
	}
	return Buffer.from(text, "utf8");
}

function cut(bytes) {
	const chunks = [];
	let i = 0;
	while (i < bytes.length) {
		const n = 1 + Math.floor(rand() * Math.min(12, bytes.length - i));
		chunks.push(bytes.subarray(i, i + n));
		i += n;
	}
	return chunks;
}

async function messages(chunks) {
	const stream = new ReadableStream({
		start(controller) {
			for (const chunk of chunks) controller.enqueue(new Uint8Array(chunk));
			controller.close();
		},
	});
	const out = [];
	for await (const sse of _iterSSEMessages({ body: stream }, new AbortController())) {
		out.push({ event: sse.event, data: sse.data });
	}
	return out;
}

const cases = [];
for (let i = 0; i < 300; i++) {
	const chunks = cut(body());
	cases.push({
		chunks: chunks.map((c) => Buffer.from(c).toString("base64")),
		messages: await messages(chunks),
	});
}
const out = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "pi-tool", "tests", "data", "openai_sse", "corpus.json");
fs.writeFileSync(out, `${JSON.stringify(cases, null, 1)}\n`);
console.log(`${cases.length} cases -> ${out}`);
