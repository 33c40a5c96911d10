// Three GETs through one keep-alive agent (one connection), one at a time.
const http = require('http');
const base = process.argv[2];
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const paths = ['/100b', '/50k', '/1m'];
function next(i) {
  if (i === paths.length) { agent.destroy(); return; }
  http.get(base + paths[i], { agent }, (res) => {
    let n = 0;
    res.on('data', (d) => { n += d.length; });
    res.on('end', () => { console.log(paths[i], n); next(i + 1); });
  });
}
next(0);
