#!/usr/bin/env node
// Side by side: one streamed openai-completions response (a short text, then one tool
// call whose arguments are SIZE bytes sent in 4 KB deltas) through pi-ai 0.85.0's
// provider and through pi-tool's, both reading the same bytes from the same local HTTP
// server in one run. Prints time per run, MB/s and the ratio, and pi-tool's MB/s against a
// bare SSE decode of the same bytes (the floor, measured by the Rust side).
//
//   cd bench && npm ci && node compare-providers-with-pi.mjs [SIZES=10k,1m,10m] [ROUNDS=5]
//
// pi-ai re-parses the whole partial argument text on every delta (quadratic), so its
// 10 MB run takes minutes; PI_MAX=1m (the default) skips pi-ai above 1 MB and says so.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { createServer } from "node:http";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { streamSimple } from "@earendil-works/pi-ai/api/openai-completions";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const parseSize = (s) => Math.round(Number.parseFloat(s) * ({ k: 1e3, m: 1e6 }[s.at(-1).toLowerCase()] ?? 1));
const SIZES = (process.argv[2] ?? "10k,1m,10m").split(",").map(parseSize);
const ROUNDS = Number(process.argv[3] ?? 5);
const PI_MAX = parseSize(process.env.PI_MAX ?? "1m");
const DELTA = 4096;

// The body: the same generator as pi-tool's criterion bench (pi-tool/benches/provider_stream.rs).
function body(size) {
	const chunk = (delta, finish = null) =>
		`data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 0, model: "gpt-4o-mini", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
	const events = [chunk({ role: "assistant", content: "Writing the file now." })];
	const prefix = '{"path":"notes.txt","content":"';
	const args = prefix + "x".repeat(Math.max(0, size - prefix.length - 2)) + '"}';
	events.push(chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "write", arguments: "" } }] }));
	for (let i = 0; i < args.length; i += DELTA) {
		events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(i, i + DELTA) } }] }));
	}
	events.push(chunk({}, "tool_calls"));
	events.push(`data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 0, model: "gpt-4o-mini", choices: [], usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 } })}\n\n`);
	events.push("data: [DONE]\n\n");
	return events;
}

const bodies = new Map(SIZES.map((size) => [size, body(size)]));
// The size is the first path segment: base URL `ORIGIN/SIZE/v1`, for both sides.
const server = createServer((req, res) => {
	const events = bodies.get(Number(req.url.split("/")[1]));
	req.resume();
	req.on("end", () => {
		if (!events) return res.writeHead(404).end();
		res.writeHead(200, { "content-type": "text/event-stream" });
		for (const event of events) res.write(event);
		res.end();
	});
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const origin = `http://127.0.0.1:${server.address().port}`;

const modelFor = (size) => ({
	id: "gpt-4o-mini", name: "GPT-4o mini", api: "openai-completions", provider: "openai",
	baseUrl: `${origin}/${size}/v1`, reasoning: false, input: ["text"],
	cost: { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 16384,
});
const context = { messages: [{ role: "user", content: "Write notes.txt.", timestamp: 0 }] };

async function piOnce(size) {
	const t0 = process.hrtime.bigint();
	let last;
	for await (const e of streamSimple(modelFor(size), context, { apiKey: "bench" })) last = e;
	const ms = Number(process.hrtime.bigint() - t0) / 1e6;
	const content = last?.type === "done" ? last.message.content.at(-1)?.arguments?.content : undefined;
	if (content?.length !== size - 33) throw new Error(`pi-ai run failed: ${last?.type} ${last?.error?.errorMessage ?? ""}`);
	return ms;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = [];
for (const size of SIZES) {
	let pi = null;
	if (size <= PI_MAX) {
		await piOnce(size); // warm-up
		const times = [];
		for (let r = 0; r < ROUNDS; r++) times.push(await piOnce(size));
		pi = median(times);
	}
	results.push({ size, pi });
}
// The Rust side reads the same bytes from the same server (asynchronously: this process
// serves them).
const { stdout } = await promisify(execFile)(
	"cargo",
	["run", "-q", "--release", "-p", "pi-tool", "--features", "openai-completions", "--example", "provider_throughput", "--", origin, SIZES.join(","), String(ROUNDS)],
	{ cwd: ROOT, encoding: "utf8", maxBuffer: 1 << 20 },
);
const rust = JSON.parse(stdout);
server.close();

const mbs = (size, ms) => (size / 1e6 / (ms / 1e3)).toFixed(1);
console.log("size      pi-ai ms   pi-tool ms   floor ms   pi-ai MB/s  pi-tool MB/s  floor MB/s  pi-tool ns/B  pi-tool/pi-ai  pi-tool/floor");
for (const { size, pi } of results) {
	const r = rust[String(size)];
	console.log(
		[
			String(size).padEnd(9),
			(pi === null ? "skipped" : pi.toFixed(2)).padStart(9),
			r.provider_ms.toFixed(2).padStart(12),
			r.floor_ms.toFixed(2).padStart(10),
			(pi === null ? "-" : mbs(size, pi)).padStart(11),
			mbs(size, r.provider_ms).padStart(13),
			mbs(size, r.floor_ms).padStart(11),
			((r.provider_ms * 1e6) / size).toFixed(2).padStart(13),
			(pi === null ? "-" : `${(pi / r.provider_ms).toFixed(1)}x faster`).padStart(14),
			`${(r.provider_ms / r.floor_ms).toFixed(2)}x`.padStart(14),
		].join(" "),
	);
}
if (SIZES.some((s) => s > PI_MAX)) console.log(`(pi-ai skipped above ${PI_MAX} bytes: PI_MAX=10m runs it; its cost grows with the square of the size)`);
