'use strict';
// taxel-server child processes for the Node tests (TAXEL_SERVER_BINARY) on 127.0.0.1:0.
const { spawn } = require('node:child_process');

const SERVER = process.env.TAXEL_SERVER_BINARY;

/**
 * Starts taxel-server on 127.0.0.1:0 and resolves to {proc, port, log()} once its
 * `event=server_started ... port=NNNN` line is on stderr.
 */
function startServer(extraArgs = []) {
  return new Promise((resolve, reject) => {
    const proc = spawn(SERVER, ['--address=127.0.0.1:0', '--metrics_address=', '--threads=2', ...extraArgs],
      { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`server did not start:\n${log}`)); }, 15000);
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (chunk) => {
      log += chunk;
      const m = /event=server_started .*? port=(\d+)[^\n]*\n/.exec(log);  // a whole line
      if (m && timer) {
        clearTimeout(timer);
        resolve({ proc, port: Number(m[1]), log: () => log });
      }
    });
    proc.on('error', (e) => { clearTimeout(timer); reject(e); });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}):\n${log}`)); });
  });
}

/** SIGTERM, then resolves to the exit code (or signal). */
function stopServer(server) {
  return new Promise((resolve) => {
    const { exitCode, signalCode } = server.proc;
    if (exitCode !== null || signalCode !== null) return resolve(exitCode ?? signalCode);
    server.proc.removeAllListeners('exit');
    server.proc.on('exit', (code, signal) => resolve(code ?? signal));
    server.proc.kill('SIGTERM');
  });
}

module.exports = { SERVER, startServer, stopServer };
