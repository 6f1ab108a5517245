// One MCP server (a Rust tool-pack binary) inside a Pi session: start it, list its
// tools, register each with `pi.registerTool`, run calls, stop it.
//
// The call path keeps Pi's contract: Pi validates the model's arguments against the
// listed JSON Schema and calls `execute(toolCallId, params, signal, onUpdate)`; the
// bridge sends `tools/call` with a progress token and Pi's abort signal, so every
// `notifications/progress` becomes an `onUpdate` and an abort becomes a
// `notifications/cancelled` for exactly that request. An `isError` result is thrown as
// an Error with the result's text, which is how a Pi tool reports failure.
import { appendFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { errorText, type ListedTool, type McpContent, piResult, piToolFields, piUpdate } from "./convert.ts";

/** How to start one tool-pack server. */
export interface ServerConfig {
	/** The executable, for example `cargo` or `/path/to/weather-mcp`. */
	command: string;
	/** Its arguments, for example `["run", "-q", "--release", "--bin", "weather-mcp"]`. */
	args?: string[];
	/** Its working directory. */
	cwd?: string;
	/** Extra environment variables (the rest of Pi's environment is passed on). */
	env?: Record<string, string>;
	/** Put before every tool name, to keep two servers' names apart. */
	prefix?: string;
	/** Append the server's standard error to this file (it is discarded otherwise). */
	stderrFile?: string;
	/** Longest a call may run, in ms (default: no limit, as for Pi's own tools). */
	callTimeoutMs?: number;
}

/** The parts of Pi's ExtensionAPI the bridge uses. */
export interface PiRegistrar {
	registerTool(tool: Record<string, unknown>): void;
}

/** Pi's `onUpdate`. */
type OnUpdate = ((update: unknown) => void) | undefined;

// setTimeout's ceiling (about 24.8 days): "no limit" for the SDK's request timer.
const NO_LIMIT_MS = 2_147_483_647;

/** Pi's text for a cancelled call. */
export const ABORTED_MESSAGE = "Operation aborted";

/** A running server and the tools it registered. */
export class ToolPackServer {
	readonly client: Client;
	readonly toolNames: string[] = [];
	private readonly transport: StdioClientTransport;
	private readonly recentStderr: string[] = [];

	private constructor(
		private readonly config: ServerConfig,
		transport: StdioClientTransport,
		client: Client,
	) {
		this.transport = transport;
		this.client = client;
	}

	/** Starts the server and completes the MCP handshake. */
	static async start(config: ServerConfig): Promise<ToolPackServer> {
		const transport = new StdioClientTransport({
			command: config.command,
			args: config.args ?? [],
			cwd: config.cwd,
			env: { ...(process.env as Record<string, string>), ...(config.env ?? {}) },
			stderr: "pipe",
		});
		const client = new Client({ name: "pi-tool-mcp-bridge", version: "0.1.0" });
		const server = new ToolPackServer(config, transport, client);
		transport.stderr?.on("data", (chunk: Buffer) => server.onStderr(chunk.toString()));
		try {
			await client.connect(transport);
		} catch (error) {
			await server.close();
			throw new Error(`${server.describe()} did not start: ${String(error)}${server.stderrTail()}`);
		}
		return server;
	}

	/** Lists the server's tools and registers each with Pi. */
	async registerTools(pi: PiRegistrar): Promise<void> {
		const tools: ListedTool[] = [];
		let cursor: string | undefined;
		do {
			const page = await this.client.listTools(cursor ? { cursor } : undefined);
			tools.push(...(page.tools as ListedTool[]));
			cursor = page.nextCursor;
		} while (cursor);
		for (const tool of tools) {
			const fields = piToolFields(tool, this.config.prefix);
			pi.registerTool({
				...fields,
				execute: (_toolCallId: string, params: unknown, signal: AbortSignal | undefined, onUpdate: OnUpdate) =>
					this.call(tool.name, params, signal, onUpdate),
			});
			this.toolNames.push(fields.name);
		}
	}

	/** One `tools/call`, with progress and cancellation wired to Pi's callbacks. */
	async call(name: string, params: unknown, signal: AbortSignal | undefined, onUpdate: OnUpdate) {
		if (signal?.aborted) throw new Error(ABORTED_MESSAGE);
		let result;
		try {
			result = await this.client.callTool(
				{ name, arguments: (params ?? {}) as Record<string, unknown> },
				undefined,
				{
					signal,
					// Asking for progress is what puts a progress token on the request.
					onprogress: (progress) => onUpdate?.(piUpdate(progress)),
					timeout: this.config.callTimeoutMs ?? NO_LIMIT_MS,
					resetTimeoutOnProgress: this.config.callTimeoutMs === undefined,
				},
			);
		} catch (error) {
			// The SDK has already sent `notifications/cancelled` for this request.
			if (signal?.aborted) throw new Error(ABORTED_MESSAGE);
			throw new Error(`${this.describe()}: ${error instanceof Error ? error.message : String(error)}${this.stderrTail()}`);
		}
		const content = result.content as McpContent[] | undefined;
		if (result.isError) throw new Error(errorText({ content }));
		return piResult({ content, structuredContent: result.structuredContent, _meta: result._meta });
	}

	/** Stops the server (closes its stdin, then signals it if it lingers). */
	async close(): Promise<void> {
		await this.client.close().catch(() => undefined);
		await this.transport.close().catch(() => undefined);
	}

	private describe(): string {
		return `MCP server \`${[this.config.command, ...(this.config.args ?? [])].join(" ")}\``;
	}

	private onStderr(text: string): void {
		if (this.config.stderrFile) {
			try {
				appendFileSync(this.config.stderrFile, text);
			} catch {
				// A log file that cannot be written must not break the tools.
			}
		}
		this.recentStderr.push(...text.split("\n").filter((line) => line.length > 0));
		this.recentStderr.splice(0, Math.max(0, this.recentStderr.length - 20));
	}

	private stderrTail(): string {
		return this.recentStderr.length ? `\n--- server stderr (last lines)\n${this.recentStderr.join("\n")}` : "";
	}
}
