// mcp_client.mjs - the official MCP TypeScript SDK's Client, with its stdio
// transport spawning `ssh ... -s mcp`, drives one agentgate session through
// what an agent does: initialize, list the tools, run, a refusal, state
// carried between calls, a timeout, a cancellation, explain.  It decides
// nothing: it prints one JSON object of what it saw, which mcp.sh checks.
//
//   node mcp_client.mjs SDK_DIR FIFO DIR SSH-ARGV...
// FIFO: the cancellation step's command waits on it; the step cancels once
// the server's first progress notification for that call has arrived.
// DIR: a directory the profile lets commands write, for the file tools.
import { createRequire } from "node:module";
import path from "node:path";

const [sdkDir, fifo, dir, ...sshArgv] = process.argv.slice(2);
const require = createRequire(path.join(sdkDir, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const seen = {};
const transport = new StdioClientTransport({
  command: sshArgv[0],
  args: sshArgv.slice(1),
  stderr: "pipe",
});
const client = new Client({ name: "agentgate-test", version: "1.0.0" });

async function run(command, extra = {}, opts = {}) {
  const r = await client.callTool({ name: "run", arguments: { command, ...extra } },
    undefined, opts);
  return { isError: !!r.isError, s: r.structuredContent, text: r.content?.[0]?.text };
}

try {
  await client.connect(transport);
  seen.server = client.getServerVersion();
  seen.capabilities = client.getServerCapabilities();
  const tools = await client.listTools();
  seen.tools = tools.tools.map((t) => t.name).sort();
  seen.toolsHaveSchemas = tools.tools.every((t) => t.inputSchema && t.outputSchema);

  seen.allowed = await run("echo hello-mcp; echo to-stderr >&2");
  seen.refused = await run("rm -rf /tmp/nothing-here");
  // refused for its last part: nothing of the line ran, and it says so
  seen.refused_part = await run("echo ran > /tmp/mcp-part && rm -rf /tmp/nothing-here");
  seen.after_part = await run("test -e /tmp/mcp-part; echo \"rc=$?\"");
  seen.cd = await run("cd /tmp && export AGT_MCP=kept");
  seen.after_cd = await run("pwd; echo \"$AGT_MCP\"");
  seen.exit_code = await run("false");
  seen.timeout = await run("sleep 300", { timeout_s: 1 });

  // cancellation: the command blocks on the fifo; the first progress
  // notification shows it runs; then the client aborts the request
  const ac = new AbortController();
  let progress = 0;
  const pending = run(`echo waiting; cat ${fifo}; sleep 3132`, {}, {
    signal: ac.signal,
    onprogress: () => { if (progress++ === 0) ac.abort("the test cancels"); },
    resetTimeoutOnProgress: true,
  });
  try {
    await pending;
    seen.cancel = { rejected: false };
  } catch (e) {
    seen.cancel = { rejected: true, progress, error: String(e?.message ?? e) };
  }
  // the session lives on, in the same directory
  seen.after_cancel = await run("echo still-here; pwd");
  const ex = await client.callTool({ name: "explain", arguments: { command: "ls | rm x" } });
  seen.explain = { isError: !!ex.isError, s: ex.structuredContent };
  try {
    await client.callTool({ name: "no-such-tool", arguments: {} });
    seen.unknown_tool = "answered";
  } catch (e) {
    seen.unknown_tool = String(e?.code ?? e);
  }
  // file tools: inside and outside what the profile lets commands touch
  const tool = async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    return { isError: !!r.isError, s: r.structuredContent };
  };
  const text = "first line\nsecond, ünïcödé\n";
  seen.write = await tool("write_file", { path: `${dir}/it's here.txt`, content: text });
  seen.read = await tool("read_file", { path: `${dir}/it's here.txt` });
  seen.readBack = seen.read.s?.content === text;
  seen.list = await tool("list_dir", { path: dir });
  seen.writeOutside = await tool("write_file", { path: "/var/tmp/agentgate-mcp-outside",
    content: "x" });
  seen.writeProtected = await tool("write_file", { path: "~/.bashrc", content: "touch /tmp/pwned\n" });
  seen.readMissing = await tool("read_file", { path: `${dir}/no-such-file` });
  seen.ping = await client.ping();
} catch (e) {
  seen.failure = String(e?.stack ?? e);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(seen) + "\n");
