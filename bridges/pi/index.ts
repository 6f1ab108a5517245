// pi-tool-mcp bridge: a Pi extension that serves Rust tool packs to Pi.
//
// When a Pi session starts, the bridge starts every configured tool-pack binary (an MCP
// server built with pi-tool-mcp, such as `weather-mcp`), lists its tools over MCP and
// registers each one with `pi.registerTool`: name, label, description, the plain JSON
// Schema of its parameters, prompt snippet and guidelines. Pi's abort signal reaches the
// Rust tool as an MCP cancellation, and the tool's progress updates reach Pi's
// `onUpdate`. When the session shuts down, the servers are stopped.
//
// Configuration (first found wins), a JSON file `{"servers": [ServerConfig, ...]}`:
//   1. the file named by $PI_TOOL_MCP_CONFIG;
//   2. `.pi/pi-tool-mcp.json` in the project, only when Pi trusts the project;
//   3. `pi-tool-mcp.json` in Pi's agent directory (~/.pi/agent by default).
// Relative `cwd` and `stderrFile` paths are resolved against the file's directory.
// See README.md for installation.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { getAgentDir } from "@earendil-works/pi-coding-agent";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { type ServerConfig, ToolPackServer } from "./src/bridge.ts";

export type { ServerConfig } from "./src/bridge.ts";
export { ToolPackServer } from "./src/bridge.ts";

/** The configuration file's shape. */
export interface BridgeConfig {
	servers: ServerConfig[];
}

/** Where the configuration comes from, in order. */
export function configCandidates(ctx: Pick<ExtensionContext, "cwd" | "isProjectTrusted">): string[] {
	const candidates: string[] = [];
	if (process.env.PI_TOOL_MCP_CONFIG) candidates.push(resolve(process.env.PI_TOOL_MCP_CONFIG));
	// A project's config starts programs: read it only when the user trusts the project.
	if (ctx.isProjectTrusted()) candidates.push(join(ctx.cwd, ".pi", "pi-tool-mcp.json"));
	candidates.push(join(getAgentDir(), "pi-tool-mcp.json"));
	return candidates;
}

/** Reads and checks a configuration file; paths in it become absolute. */
export function readConfig(path: string): BridgeConfig {
	const parsed = JSON.parse(readFileSync(path, "utf8")) as Partial<BridgeConfig>;
	if (!parsed || !Array.isArray(parsed.servers)) {
		throw new Error(`${path}: expected {"servers": [{"command": ..., "args": [...]}, ...]}`);
	}
	const base = dirname(path);
	return {
		servers: parsed.servers.map((server, index) => {
			if (!server || typeof server.command !== "string") {
				throw new Error(`${path}: servers[${index}] needs a "command" string`);
			}
			return {
				...server,
				cwd: server.cwd === undefined ? base : resolve(base, server.cwd),
				stderrFile: server.stderrFile === undefined ? undefined : resolve(base, server.stderrFile),
			};
		}),
	};
}

/**
 * The bridge as an extension factory, for the given servers (or a function that finds
 * them once the session has a context). The default export finds them in the
 * configuration files.
 */
export function toolPackBridge(servers: ServerConfig[] | ((ctx: ExtensionContext) => ServerConfig[])) {
	return (pi: ExtensionAPI) => {
		let running: ToolPackServer[] = [];

		// Programs start with the session, not in the factory: Pi may load extensions in
		// invocations that never start a session.
		pi.on("session_start", async (_event, ctx) => {
			const configs = typeof servers === "function" ? servers(ctx) : servers;
			const failures: string[] = [];
			for (const config of configs) {
				try {
					const server = await ToolPackServer.start(config);
					running.push(server);
					await server.registerTools(pi as unknown as Parameters<ToolPackServer["registerTools"]>[0]);
				} catch (error) {
					failures.push(error instanceof Error ? error.message : String(error));
				}
			}
			if (failures.length > 0) {
				const message = `pi-tool-mcp bridge: ${failures.join("\n")}`;
				if (ctx.hasUI) ctx.ui.notify(message, "error");
				throw new Error(message);
			}
		});

		pi.on("session_shutdown", async () => {
			const stopping = running;
			running = [];
			await Promise.all(stopping.map((server) => server.close()));
		});
	};
}

/** The extension Pi loads: servers from the first configuration file found. */
export default toolPackBridge((ctx) => {
	const path = configCandidates(ctx).find((candidate) => existsSync(candidate));
	return path ? readConfig(path).servers : [];
});
