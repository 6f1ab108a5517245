// The weather-mcp server, driven by the official MCP TypeScript SDK client.
//
// Run by `cargo test` (examples/weather-mcp/tests/mcp_client.rs), which builds the
// server, installs this folder's packages and passes the server's path in
// WEATHER_MCP_BIN. By hand, in examples/weather-mcp/:
//   WEATHER_MCP_BIN=../../target/debug/weather-mcp node --test tests/client/weather.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawn } from "node:child_process";

const bin = process.env.WEATHER_MCP_BIN;
if (!bin) throw new Error("WEATHER_MCP_BIN must name the weather-mcp binary");

const DESCRIPTION =
  "Return the demo temperature for Paris or Tokyo. Use only for a weather or temperature question about one of those cities.";

/** Collects a stream's lines into `lines`. */
function collectLines(stream, lines) {
  let buffered = "";
  stream.on("data", (chunk) => {
    buffered += chunk.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop();
    lines.push(...parts);
  });
}

/**
 * Starts a server and connects a client over `transport` ("stdio" or "http");
 * `stderrLines` collects the server's log.
 */
async function connect(transport, env = {}) {
  const stderrLines = [];
  const client = new Client({ name: "pi-tool-mcp-test", version: "0.0.0" });
  if (transport === "stdio") {
    const stdio = new StdioClientTransport({
      command: bin,
      args: [],
      env: { ...process.env, ...env },
      stderr: "pipe",
    });
    collectLines(stdio.stderr, stderrLines);
    await client.connect(stdio);
    return { client, stderrLines, close: () => client.close() };
  }
  const child = spawn(bin, ["--http", "127.0.0.1:0"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  collectLines(child.stderr, stderrLines);
  const line = await waitFor(
    () => stderrLines.find((l) => l.includes("serving MCP over streamable HTTP at ")),
    10000,
    "the server's address",
  );
  const url = new URL(line.split(" at ").pop());
  await client.connect(new StreamableHTTPClientTransport(url));
  return {
    client,
    stderrLines,
    close: async () => {
      await client.close();
      child.kill();
    },
  };
}

async function waitFor(predicate, ms, what) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = predicate();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

for (const transport of ["stdio", "http"]) {
  test(`${transport}: tools/list, calls, progress, bad arguments`, async (t) => {
    const { client, stderrLines, close } = await connect(transport);
    t.after(close);

    await t.test("lists get_weather as in Pi's custom-tool page", async () => {
      const { tools } = await client.listTools();
      assert.equal(tools.length, 1);
      const [tool] = tools;
      assert.equal(tool.name, "get_weather");
      assert.equal(tool.title, "Get weather");
      assert.equal(tool.description, DESCRIPTION);
      assert.equal(tool.inputSchema.type, "object");
      assert.deepEqual(Object.keys(tool.inputSchema.properties), ["city", "unit"]);
      assert.deepEqual(tool.inputSchema.required, ["city"]);
      assert.equal(tool._meta["pi-tool/promptSnippet"], "Look up the demo temperature for Paris or Tokyo");
      assert.equal(tool._meta["pi-tool/executionMode"], "parallel");
    });

    await t.test("calls get_weather for Tokyo", async () => {
      const result = await client.callTool({ name: "get_weather", arguments: { city: "Tokyo" } });
      assert.deepEqual(result.content, [{ type: "text", text: "Tokyo: 24 degrees celsius" }]);
      assert.equal(result.isError, false);
      assert.deepEqual(result._meta["pi-tool/details"], {
        phase: "done",
        city: "Tokyo",
        unit: "celsius",
        temperature: 24,
      });
    });

    await t.test("converts to fahrenheit", async () => {
      const result = await client.callTool({
        name: "get_weather",
        arguments: { city: "Paris", unit: "fahrenheit" },
      });
      assert.deepEqual(result.content, [{ type: "text", text: "Paris: 64 degrees fahrenheit" }]);
    });

    await t.test("sends progress when the request has a progress token", async () => {
      const progress = [];
      const result = await client.callTool(
        { name: "get_weather", arguments: { city: "Tokyo" } },
        undefined,
        { onprogress: (p) => progress.push(p) },
      );
      assert.equal(result.content[0].text, "Tokyo: 24 degrees celsius");
      assert.equal(progress.length, 1, JSON.stringify(progress));
      assert.equal(progress[0].progress, 1);
      assert.equal(progress[0].message, "Checking Tokyo...");
      assert.deepEqual(progress[0]._meta["pi-tool/partialResult"], {
        content: [{ type: "text", text: "Checking Tokyo..." }],
        details: { phase: "lookup", city: "Tokyo", unit: "celsius" },
      });
    });

    await t.test("bad arguments are an error result the model can read", async () => {
      // Cases Pi rejects too (a number for `city` is not one: Pi coerces it to a string).
      for (const args of [{}, { city: "Tokyo", extra: true }, { city: "Tokyo", unit: "kelvin" }]) {
        const result = await client.callTool({ name: "get_weather", arguments: args });
        assert.equal(result.isError, true, JSON.stringify(args));
        assert.equal(result.content.length, 1);
        const text = result.content[0].text;
        assert.match(text, /^Validation failed for tool "get_weather":\n/, text);
        assert.match(text, /\n\nReceived arguments:\n/, text);
      }
    });

    await t.test("a business-rule failure is an error result", async () => {
      const result = await client.callTool({ name: "get_weather", arguments: { city: "Oslo" } });
      assert.equal(result.isError, true);
      assert.deepEqual(result.content, [{ type: "text", text: "Unsupported city: Oslo" }]);
    });

    await t.test("an unknown tool is a -32602 protocol error with Pi's text", async () => {
      await assert.rejects(client.callTool({ name: "get_forecast", arguments: {} }), (error) => {
        assert.equal(error.code, -32602);
        assert.match(error.message, /Tool get_forecast not found/);
        return true;
      });
    });

    await t.test("the server logs every finished call to stderr, not stdout", async () => {
      await waitFor(() => stderrLines.some((l) => / succeeded after \d+ ms$/.test(l)), 2000, "a log line");
      assert.ok(stderrLines.every((l) => l.startsWith("weather-mcp: ")), stderrLines.join("\n"));
    });
  });

  test(`${transport}: notifications/cancelled aborts the call; the server stays healthy`, async (t) => {
    // A long lookup, so that the cancellation certainly lands mid-lookup.
    const delayMs = 1500;
    const { client, stderrLines, close } = await connect(transport, {
      WEATHER_MCP_LOOKUP_DELAY_MS: String(delayMs),
    });
    t.after(close);

    const controller = new AbortController();
    let cancelledAt;
    const call = client.callTool(
      { name: "get_weather", arguments: { city: "Tokyo" } },
      undefined,
      {
        signal: controller.signal,
        onprogress: (p) => {
          // The tool is now inside its lookup delay: cancel it there.
          assert.equal(p.message, "Checking Tokyo...");
          cancelledAt = Date.now();
          controller.abort("the user pressed Escape");
        },
      },
    );
    await assert.rejects(call, (error) => String(error).includes("the user pressed Escape"));
    assert.ok(cancelledAt, "the call was cancelled after its progress update");

    // The protocol sends no response for a cancelled request; the server's log shows the
    // tool saw its abort signal and stopped long before its lookup would have ended.
    const line = await waitFor(
      () => stderrLines.find((l) => /get_weather mcp-\d+ aborted after \d+ ms$/.test(l)),
      delayMs,
      "the aborted call's log line",
    );
    const elapsed = Number(line.match(/after (\d+) ms$/)[1]);
    assert.ok(elapsed < delayMs, `aborted after ${elapsed} ms, the lookup takes ${delayMs} ms`);
    assert.ok(Date.now() - cancelledAt < delayMs, "the abort was seen before the lookup would have ended");

    // The same server answers the next call.
    const result = await client.callTool({ name: "get_weather", arguments: { city: "Paris" } });
    assert.deepEqual(result.content, [{ type: "text", text: "Paris: 18 degrees celsius" }]);
    assert.equal(result.isError, false);
  });
}
