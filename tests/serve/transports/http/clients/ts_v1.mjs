// The TypeScript SDK v1 (@modelcontextprotocol/sdk) client over Streamable HTTP, against
// `promptops serve --http`: list (every page), get, complete, an unknown prompt, and with
// --wait-change a list_changed on the session's GET stream; DELETE at the end.
// usage: NODE_PATH=<deps>/node_modules node ts_v1.mjs URL [--wait-change] [--token T]
import { createRequire } from 'node:module';
import path from 'node:path';
import { exercise } from './exercise.mjs';
const require = createRequire(path.join(process.env.NODE_PATH, 'noop.js'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { PromptListChangedNotificationSchema } = require('@modelcontextprotocol/sdk/types.js');

const args = process.argv.slice(2);
const url = args[0];
const wait = args.includes('--wait-change');
const ti = args.indexOf('--token');
const token = ti > 0 ? args[ti + 1] : undefined;
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : undefined,
});
const client = new Client({ name: 'ts-v1-check', version: '0.0.1' });
let changed;
const gotChange = new Promise((resolve) => { changed = resolve; });
client.setNotificationHandler(PromptListChangedNotificationSchema, () => changed());
await client.connect(transport);
console.log('protocol', transport.protocolVersion, 'session', transport.sessionId);
await exercise(client);
if (wait) {
  console.log('ready');
  await Promise.race([gotChange, new Promise((_, no) => setTimeout(() => no(new Error('no list_changed in 15 s')), 15000).unref())]);
  console.log('list_changed');
}
await transport.terminateSession();
console.log('deleted');
await client.close();
