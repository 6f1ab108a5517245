"""The peer: the official Python SDK's MCP server (`MCPServer` on uvicorn) with the same
`get_weather` as `weather-mcp` (Paris 18, Tokyo 24, a progress update first)."""

import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context

CELSIUS = {"Paris": 18, "Tokyo": 24}

server = MCPServer("weather-peer")


@server.tool()
async def get_weather(city: str, ctx: Context, unit: str | None = None) -> str:
    """Get the current weather for a city."""
    city = city.strip()
    if city not in CELSIUS:
        raise ValueError(f"Unsupported city: {city}")
    await ctx.report_progress(0, message=f"Checking {city}...")
    celsius = CELSIUS[city]
    if unit == "fahrenheit":
        return f"{city}: {round(celsius * 9 / 5 + 32)} degrees fahrenheit"
    return f"{city}: {celsius} degrees celsius"


if __name__ == "__main__":
    server.settings.log_level = "WARNING"
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
