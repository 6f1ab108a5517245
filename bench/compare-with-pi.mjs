#!/usr/bin/env node
// Side by side: the same batch of trivial tool calls through Pi 0.85.0's Agent and
// through pi-tool's Agent, both with a scripted model. Prints the per-call times and
// the ratio in one run.
//
//   cd bench && npm ci && node compare-with-pi.mjs [CALLS=1000] [ROUNDS=20]
//
// Pi side: `Agent` from @earendil-works/pi-agent-core (pinned to 0.85.0 in
// package.json), a stream function that streams one assistant message with CALLS
// tool calls (three events per block, like pi-ai's faux provider, sharing one partial
// object so that the model costs Pi nothing), then "Done.". One no-op listener.
// Rust side: `cargo run --release -p pi-tool --example batch_timing` (same batch, same
// tool, same schema, one no-op listener), run from the repository root.
import { execFileSync } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Agent } from "@earendil-works/pi-agent-core";
import { createAssistantMessageEventStream } from "@earendil-works/pi-ai";

const CALLS = Number(process.argv[2] ?? 1000);
const ROUNDS = Number(process.argv[3] ?? 20);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

const MODEL = {
	id: "fake-1",
	name: "Fake Model",
	api: "fake",
	provider: "fake",
	baseUrl: "http://localhost:0",
	reasoning: false,
	input: ["text"],
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
	contextWindow: 128000,
	maxTokens: 4096,
};
const USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

function batchTurn(calls) {
	return Array.from({ length: calls }, (_, i) => ({ type: "toolCall", id: `call_${i}`, name: "echo", arguments: { i } }));
}

function scriptedStreamFn(turns) {
	let index = 0;
	return (model) => {
		const content = turns[index++] ?? [{ type: "text", text: "Done." }];
		const stream = createAssistantMessageEventStream();
		const base = { role: "assistant", api: model.api, provider: model.provider, model: model.id, usage: USAGE, timestamp: Date.now() };
		queueMicrotask(() => {
			const partial = { ...base, content: [], stopReason: "stop" };
			stream.push({ type: "start", partial });
			content.forEach((block, i) => {
				if (block.type === "toolCall") {
					partial.content.push({ ...block, arguments: {} });
					stream.push({ type: "toolcall_start", contentIndex: i, partial });
					stream.push({ type: "toolcall_delta", contentIndex: i, delta: JSON.stringify(block.arguments), partial });
					partial.content[i].arguments = block.arguments;
					stream.push({ type: "toolcall_end", contentIndex: i, toolCall: block, partial });
				} else {
					partial.content.push({ type: "text", text: block.text });
					stream.push({ type: "text_start", contentIndex: i, partial });
					stream.push({ type: "text_delta", contentIndex: i, delta: block.text, partial });
					stream.push({ type: "text_end", contentIndex: i, content: block.text, partial });
				}
			});
			const stopReason = content.some((b) => b.type === "toolCall") ? "toolUse" : "stop";
			const message = { ...base, content, stopReason };
			stream.push({ type: "done", reason: stopReason, message });
			stream.end(message);
		});
		return stream;
	};
}

const echo = {
	name: "echo",
	label: "echo",
	description: "echo",
	parameters: { type: "object", properties: { i: { type: "number" } } },
	execute: async () => ({ content: [{ type: "text", text: "ok" }] }),
};

async function piRun(calls, toolExecution) {
	const agent = new Agent({
		initialState: { systemPrompt: "", model: MODEL, tools: [echo] },
		streamFn: scriptedStreamFn([batchTurn(calls)]),
		toolExecution,
	});
	agent.subscribe(async () => {});
	const started = process.hrtime.bigint();
	await agent.prompt("go");
	const ns = Number(process.hrtime.bigint() - started);
	const results = agent.state.messages.filter((m) => m.role === "toolResult").length;
	if (results !== calls) throw new Error(`Pi produced ${results} tool results, expected ${calls}`);
	return ns / calls;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function piSide() {
	await piRun(CALLS, "parallel"); // warm-up (JIT)
	await piRun(CALLS, "sequential");
	const parallel = [];
	const sequential = [];
	for (let r = 0; r < ROUNDS; r++) {
		parallel.push(await piRun(CALLS, "parallel"));
		sequential.push(await piRun(CALLS, "sequential"));
	}
	return { parallelNsPerCall: median(parallel), sequentialNsPerCall: median(sequential) };
}

function rustSide() {
	const out = execFileSync(
		"cargo",
		["run", "-q", "--release", "-p", "pi-tool", "--example", "batch_timing", "--", String(CALLS), String(ROUNDS)],
		{ cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
	);
	return JSON.parse(out.trim().split("\n").pop());
}

const pi = await piSide();
const rust = rustSide();
const fmt = (ns) => (ns >= 1000 ? `${(ns / 1000).toFixed(2)} µs` : `${ns.toFixed(0)} ns`);
console.log(`batch of ${CALLS} trivial tool calls through the whole agent loop (median of ${ROUNDS} rounds)`);
for (const mode of ["parallel", "sequential"]) {
	const key = `${mode}NsPerCall`;
	console.log(
		`${mode.padEnd(10)}  Pi 0.85.0: ${fmt(pi[key]).padStart(10)}/call   pi-tool: ${fmt(rust[key]).padStart(10)}/call   pi-tool is ${(pi[key] / rust[key]).toFixed(1)}x faster`,
	);
}
