// One client of the zoo in Node.js: fetch each URL in turn, read it all.
// usage: node node_client.js http|fetch CAFILE URL...
// http: the http/https module with a keep-alive agent (one connection),
//   destroyed at the end, then one more request on a connection of its own
//   (no agent), waited until closed; after each answer the program reads a
//   local file (its CA file), as real programs do: a file opened on the
//   number of a socket closed behind the layer's back shows up as bytes.
// fetch: the global fetch() (undici), its own pool, keep-alive; the CA file
//   comes from NODE_EXTRA_CA_CERTS (read when node starts).
// Exit status 0 when every URL answered 2xx, 1 otherwise.
'use strict';
const fs = require('fs');
const [mode, cafile, ...urls] = process.argv.slice(2);
const ca = fs.readFileSync(cafile);
const lib = urls[0].startsWith('https:') ? require('https') : require('http');

// get(agent, url): the status, once the body is read (and, without an
// agent, once the connection is closed)
function get(agent, url) {
  return new Promise((resolve, reject) => {
    const req = lib.get(url, { agent, ca }, (res) => {
      res.on('data', () => {});
      res.on('end', () => {
        if (agent) resolve(res.statusCode);
        else req.socket.on('close', () => resolve(res.statusCode));
      });
    });
    req.on('error', reject);
  });
}

async function main() {
  let ok = true;
  if (mode === 'http') {
    const agent = new lib.Agent({ keepAlive: true, maxSockets: 1, ca });
    for (const url of urls) {
      const status = await get(agent, url);
      ok = ok && status >= 200 && status < 300;
      fs.readFileSync(cafile);
    }
    agent.destroy();
    const status = await get(false, urls[0]);
    ok = ok && status >= 200 && status < 300;
    fs.readFileSync(cafile);
  } else {
    for (const url of urls) {
      const res = await fetch(url);
      await res.arrayBuffer();
      ok = ok && res.ok;
    }
  }
  process.exitCode = ok ? 0 : 1;
}
main().catch((e) => { console.error(e); process.exitCode = 2; });
