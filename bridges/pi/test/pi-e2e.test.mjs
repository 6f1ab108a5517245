// End to end: the real Pi 0.85.0 (pi-coding-agent AgentSession, npm, pinned) loads the
// bridge extension from index.ts the way Pi loads any extension (jiti), the bridge
// starts the Rust `weather-mcp` server, and Pi's faux provider plays a model that calls
// `get_weather`. Checked: the registration (tool, schema, prompt snippet), the events,
// the tool results the model receives, a Rust error, and a cancellation that reaches the
// Rust tool (the server's log shows the abort) with the server still serving afterwards.
//
// Needs Node >= 22.19 (pi-coding-agent): run with node_modules/.bin/node (the `node`
// npm package). WEATHER_MCP_BIN names the server binary; without it the server is started
// with `cargo run -q --release --bin weather-mcp` from the repository root.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
	createAgentSession,
	DefaultResourceLoader,
	ModelRuntime,
	SessionManager,
	SettingsManager,
	VERSION,
} from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";

const HERE = dirname(fileURLToPath(import.meta.url));
// The package folder, as `pi -e bridges/pi` or `pi install` names it: Pi finds index.ts
// through the `pi.extensions` manifest in package.json.
const BRIDGE = resolve(HERE, "..");
const REPO = resolve(HERE, "..", "..", "..");
// Long enough that the cancellation certainly lands inside the lookup.
const LOOKUP_DELAY_MS = 1500;

const server = process.env.WEATHER_MCP_BIN
	? { command: process.env.WEATHER_MCP_BIN, args: [] }
	: { command: "cargo", args: ["run", "-q", "--release", "--bin", "weather-mcp"], cwd: REPO };

async function startSession(root) {
	const cwd = join(root, "work");
	const agentDir = join(root, "agent");
	mkdirSync(cwd, { recursive: true });
	mkdirSync(agentDir, { recursive: true });
	const log = join(root, "weather-mcp.log");
	const config = join(root, "pi-tool-mcp.json");
	writeFileSync(
		config,
		JSON.stringify({
			servers: [{ ...server, env: { WEATHER_MCP_LOOKUP_DELAY_MS: String(LOOKUP_DELAY_MS) }, stderrFile: log }],
		}),
	);
	process.env.PI_TOOL_MCP_CONFIG = config;

	const settingsManager = SettingsManager.inMemory({});
	const faux = fauxProvider({ provider: "faux", api: "faux-api", models: [{ id: "faux-1" }] });
	const modelRuntime = await ModelRuntime.create({
		authPath: join(agentDir, "auth.json"),
		modelsPath: join(agentDir, "models.json"),
		refreshOnCreate: false,
	});
	modelRuntime.registerNativeProvider(faux.provider);
	const resourceLoader = new DefaultResourceLoader({
		cwd,
		agentDir,
		settingsManager,
		noSkills: true,
		noPromptTemplates: true,
		noThemes: true,
		noContextFiles: true,
		additionalExtensionPaths: [BRIDGE],
	});
	await resourceLoader.reload();
	const { session, extensionsResult } = await createAgentSession({
		cwd,
		agentDir,
		model: faux.getModel(),
		thinkingLevel: "off",
		modelRuntime,
		settingsManager,
		sessionManager: SessionManager.inMemory(cwd),
		resourceLoader,
		tools: ["get_weather"],
	});
	assert.deepEqual(extensionsResult.errors, []);
	const extensionErrors = [];
	await session.bindExtensions({ onError: (error) => extensionErrors.push(error) });
	assert.deepEqual(extensionErrors, []);
	const events = [];
	session.subscribe((event) => events.push(event));
	return { session, faux, events, log };
}

const toolEvents = (events, id) =>
	events.filter((e) => e.type.startsWith("tool_execution_") && e.toolCallId === id);

/** The model asks for get_weather, then answers from the tool result it received. */
function scriptToolCall(faux, id, args, seen) {
	faux.setResponses([
		fauxAssistantMessage(fauxToolCall("get_weather", args, { id }), { stopReason: "toolUse" }),
		(context) => {
			seen.tools = context.tools;
			seen.toolResult = context.messages.findLast((m) => m.role === "toolResult");
			return fauxAssistantMessage("done");
		},
	]);
}

test("Pi 0.85.0 runs the Rust get_weather through the bridge", async (t) => {
	assert.equal(VERSION, "0.85.0");
	const root = mkdtempSync(join(tmpdir(), "pi-tool-mcp-bridge-"));
	const { session, faux, events, log } = await startSession(root);
	t.after(async () => {
		await session.extensionRunner.emit({ type: "session_shutdown", reason: "quit" });
		session.dispose();
		rmSync(root, { recursive: true, force: true });
	});

	await t.test("registers get_weather with its schema and prompt snippet", () => {
		assert.deepEqual(session.getActiveToolNames(), ["get_weather"]);
		const tool = session.getAllTools().find((t) => t.name === "get_weather");
		assert.ok(tool, "get_weather is registered");
		assert.equal(
			tool.description,
			"Return the demo temperature for Paris or Tokyo. Use only for a weather or temperature question about one of those cities.",
		);
		assert.deepEqual(tool.parameters.required, ["city"]);
		assert.match(session.systemPrompt, /\n- get_weather: Look up the demo temperature for Paris or Tokyo\n/);
	});

	await t.test("a call: events, progress and the result the model receives", async () => {
		const seen = {};
		scriptToolCall(faux, "call-tokyo", { city: "Tokyo" }, seen);
		await session.prompt("What is the weather in Tokyo?");

		assert.deepEqual(seen.tools.map((tool) => tool.name), ["get_weather"]);
		assert.equal(seen.tools[0].parameters.properties.city.type, "string");
		const calls = toolEvents(events, "call-tokyo");
		assert.deepEqual(calls.map((e) => e.type), [
			"tool_execution_start",
			"tool_execution_update",
			"tool_execution_end",
		]);
		assert.deepEqual(calls[0].args, { city: "Tokyo" });
		assert.deepEqual(calls[1].partialResult, {
			content: [{ type: "text", text: "Checking Tokyo..." }],
			details: { phase: "lookup", city: "Tokyo", unit: "celsius" },
		});
		assert.equal(calls[2].isError, false);
		assert.deepEqual(calls[2].result.content, [{ type: "text", text: "Tokyo: 24 degrees celsius" }]);
		assert.deepEqual(calls[2].result.details, { phase: "done", city: "Tokyo", unit: "celsius", temperature: 24 });

		assert.equal(seen.toolResult.toolCallId, "call-tokyo");
		assert.equal(seen.toolResult.toolName, "get_weather");
		assert.equal(seen.toolResult.isError, false);
		assert.deepEqual(seen.toolResult.content, [{ type: "text", text: "Tokyo: 24 degrees celsius" }]);
	});

	await t.test("a Rust error is an error result with the tool's text", async () => {
		const seen = {};
		scriptToolCall(faux, "call-oslo", { city: "Oslo" }, seen);
		await session.prompt("And in Oslo?");
		const end = toolEvents(events, "call-oslo").at(-1);
		assert.equal(end.type, "tool_execution_end");
		assert.equal(end.isError, true);
		assert.deepEqual(seen.toolResult.content, [{ type: "text", text: "Unsupported city: Oslo" }]);
		assert.equal(seen.toolResult.isError, true);
	});

	await t.test("Pi's abort cancels the Rust call; the server keeps serving", async () => {
		faux.setResponses([
			fauxAssistantMessage(fauxToolCall("get_weather", { city: "Tokyo" }, { id: "call-cancel" }), {
				stopReason: "toolUse",
			}),
			// Only if Pi asks the model again after the abort.
			() => fauxAssistantMessage("stopped"),
		]);
		let abortedAt;
		let endedAt;
		const unsubscribe = session.subscribe((event) => {
			if (event.type === "tool_execution_update" && event.toolCallId === "call-cancel" && !abortedAt) {
				abortedAt = Date.now();
				void session.abort();
			}
			if (event.type === "tool_execution_end" && event.toolCallId === "call-cancel") endedAt = Date.now();
		});
		await session.prompt("Tokyo again, please");
		unsubscribe();
		assert.ok(abortedAt, "the call reported progress, then was aborted");
		assert.ok(endedAt - abortedAt < LOOKUP_DELAY_MS, `the call ended ${endedAt - abortedAt} ms after the abort`);

		const end = toolEvents(events, "call-cancel").at(-1);
		assert.equal(end.type, "tool_execution_end");
		assert.equal(end.isError, true);
		assert.deepEqual(end.result.content, [{ type: "text", text: "Operation aborted" }]);
		const toolResult = session.messages.findLast((m) => m.role === "toolResult");
		assert.equal(toolResult.toolCallId, "call-cancel");
		assert.equal(toolResult.isError, true);

		// The Rust tool saw the cancellation: its signal aborted the lookup early.
		const deadline = Date.now() + LOOKUP_DELAY_MS;
		let line;
		while (!line && Date.now() < deadline) {
			const text = existsSync(log) ? readFileSync(log, "utf8") : "";
			line = text.split("\n").find((l) => / get_weather mcp-\d+ aborted after \d+ ms$/.test(l));
			if (!line) await new Promise((r) => setTimeout(r, 20));
		}
		assert.ok(line, `no abort in the server log:\n${existsSync(log) ? readFileSync(log, "utf8") : ""}`);
		const elapsed = Number(line.match(/after (\d+) ms$/)[1]);
		assert.ok(elapsed < LOOKUP_DELAY_MS, `the Rust call ran ${elapsed} ms of a ${LOOKUP_DELAY_MS} ms lookup`);

		const seen = {};
		scriptToolCall(faux, "call-paris", { city: "Paris", unit: "fahrenheit" }, seen);
		await session.prompt("Then Paris, in fahrenheit?");
		assert.deepEqual(seen.toolResult.content, [{ type: "text", text: "Paris: 64 degrees fahrenheit" }]);
		assert.equal(seen.toolResult.isError, false);
	});
});
