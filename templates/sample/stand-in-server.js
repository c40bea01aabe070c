#!/usr/bin/env node
// A stand-in MCP server from mcp-deploy's sample deployment: it answers the MCP handshake
// over stdio (initialize, tools/list) with one tool, so a client sees it connect.
const name = require("path").basename(process.argv[1]);
const rl = require("readline").createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
rl.on("line", (line) => {
  let msg;
  try { msg = JSON.parse(line); } catch { return; }
  if (msg.id === undefined) return; // a notification
  const ok = (result) => send({ jsonrpc: "2.0", id: msg.id, result });
  switch (msg.method) {
    case "initialize":
      return ok({ protocolVersion: msg.params?.protocolVersion ?? "2025-06-18",
        capabilities: { tools: {} }, serverInfo: { name: `${name}-sample`, version: "0.0.0" } });
    case "tools/list": {
      // The description may come from the environment (the tool-surface tests change it so),
      // and SAMPLE_LIST_ORDER=reversed lists the same tool with every key in another order.
      const description = process.env.SAMPLE_HELLO_DESCRIPTION || "Says hello.";
      const tool = process.env.SAMPLE_LIST_ORDER === "reversed"
        ? { inputSchema: { properties: {}, type: "object" }, description, name: "hello" }
        : { name: "hello", description, inputSchema: { type: "object", properties: {} } };
      return ok({ tools: [tool] });
    }
    case "ping":
      return ok({});
    default:
      send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "method not found" } });
  }
});
