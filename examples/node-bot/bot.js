// A skatbus player in Node.js: JSON over NATS, nothing else.
//
//   node bot.js --player ann --nats nats://127.0.0.1:4222
//   node bot.js --player ann --nats tls://skat.example.org:4222 --creds ann.nk --tls-ca ca.pem
//
// It listens on skat.view.<player>.* for Updates, answers every prompt (your_turn) with a legal
// command on skat.cmd.<player>.<table>, and says hello on skat.hello.<player> whenever it
// (re)connects, with {"format": "json"}: its updates come as JSON from then on, and the views
// service sends it again the prompts it missed. See README.md.

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import {
  connect, Events, ErrorCode, JSONCodec, nkeyAuthenticator, credsAuthenticator, usernamePasswordAuthenticator,
} from "nats";
import { choose } from "./strategy.js";

const USAGE = `usage: node bot.js --player ID [--nats URL[,URL...]] [--creds FILE] [--tls-ca FILE] [--timeout MS] [--verbose]

  --player ID    the player id the table was opened with (1-64 of A-Z a-z 0-9 _ -)
  --nats URL     NATS server(s), comma-separated; tls://HOST:PORT requires TLS
                 (default: $SKAT_NATS_URL or nats://127.0.0.1:4222)
  --creds FILE   your key: the NKey seed file skat auth wrote (<player>.nk), a .creds file,
                 or JSON {"user": ..., "password": ...} (default: $SKAT_NATS_CREDS)
  --tls-ca FILE  the CA certificate the server's must chain to; requires TLS (default: $SKAT_NATS_CA)
  --timeout MS   time-out of one command request (default 5000)
  --verbose      log every update and command, not just the important lines`;

const RETRY_CODES = new Set(["busy", "unavailable"]);
const MAX_ATTEMPTS = 50;
const TOKEN = /^[A-Za-z0-9_-]{1,64}$/;
const OPEN_BRACE = 0x7b; // a JSON message starts with "{"; msgpack does not

const jc = JSONCodec();
const HELLO = jc.encode({ format: "json" }); // our updates as JSON: the one encoding this bot reads

function parse(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      player: { type: "string" },
      nats: { type: "string", default: process.env.SKAT_NATS_URL || "nats://127.0.0.1:4222" },
      creds: { type: "string", default: process.env.SKAT_NATS_CREDS || "" },
      "tls-ca": { type: "string", default: process.env.SKAT_NATS_CA || "" },
      timeout: { type: "string", default: "5000" },
      verbose: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (!values.player || !TOKEN.test(values.player)) {
    console.error(`${values.player ? `bad player id ${JSON.stringify(values.player)}` : "--player is required"}\n\n${USAGE}`);
    process.exit(2);
  }
  const timeout = Number(values.timeout);
  if (!Number.isFinite(timeout) || timeout <= 0) {
    console.error(`--timeout must be a number of milliseconds > 0\n\n${USAGE}`);
    process.exit(2);
  }
  let connection;
  try {
    connection = connectionOptions(values.nats, values.creds, values["tls-ca"]);
  } catch (err) {
    console.error(`bot.js: ${err.message}`); // one line, no stack: a mistake in the input
    process.exit(2);
  }
  return { player: values.player, connection, timeout, verbose: values.verbose };
}

/**
 * The client options for a server list (comma-separated URLs), a credentials file and a CA file.
 * tls:// or a CA file means TLS is required (the client refuses a server that does not offer it).
 * A user and password in a URL (nats://user:pw@host:port) still work, but they are visible to
 * every local user in `ps`: use a credentials file.
 */
function connectionOptions(urls, credsFile, caFile) {
  const servers = [];
  let wantTLS = Boolean(caFile);
  const opts = {};
  for (const url of urls.split(",").map((s) => s.trim()).filter(Boolean)) {
    let u;
    try {
      u = new URL(url.includes("://") ? url : `nats://${url}`);
    } catch {
      throw new Error("--nats: not a server URL (want nats://HOST:PORT or tls://HOST:PORT)");
    }
    if (u.protocol !== "nats:" && u.protocol !== "tls:") throw new Error(`--nats: unknown scheme ${u.protocol}`);
    if (u.protocol === "tls:") wantTLS = true;
    servers.push(u.port ? u.host : `${u.host}:4222`); // host:port: the scheme is ours to act on
    if (u.username) {
      opts.user = decodeURIComponent(u.username);
      opts.pass = decodeURIComponent(u.password);
    }
  }
  if (servers.length === 0) throw new Error("--nats: no server given");
  opts.servers = servers;
  if (wantTLS) opts.tls = caFile ? { caFile: readable(caFile, "--tls-ca") } : {};
  if (credsFile) opts.authenticator = authenticator(credsFile);
  return opts;
}

function readable(file, flag) {
  try {
    readFileSync(file);
  } catch (err) {
    throw new Error(`cannot read ${flag} ${file}: ${err.code ?? err.message}`);
  }
  return file;
}

/** The authenticator for a credentials file: NKey seed, .creds (JWT + seed), or JSON user/password. */
function authenticator(file) {
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new Error(`cannot read --creds ${file}: ${err.code ?? err.message}`);
  }
  if (text.includes("BEGIN NATS USER JWT")) return credsAuthenticator(new TextEncoder().encode(text));
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    let doc;
    try {
      doc = JSON.parse(trimmed);
    } catch {
      throw new Error(`--creds ${file}: not valid JSON`);
    }
    return usernamePasswordAuthenticator(doc.user, doc.password);
  }
  if (!/^SU[A-Z2-7]+$/.test(trimmed)) throw new Error(`--creds ${file}: not an NKey user seed (SU...)`);
  // Read again at every (re)connect: a replaced key file takes effect without a restart.
  return nkeyAuthenticator(() => new TextEncoder().encode(readFileSync(file, "utf8").trim()));
}

/** One JSON object per line on stdout: {"t": ISO time, "level", "event", ...fields}. */
function makeLogger(player, verbose) {
  const write = (level, event, fields) =>
    console.log(JSON.stringify({ t: new Date().toISOString(), level, player, event, ...fields }));
  return {
    debug: (event, fields = {}) => verbose && write("debug", event, fields),
    info: (event, fields = {}) => write("info", event, fields),
    warn: (event, fields = {}) => write("warn", event, fields),
    error: (event, fields = {}) => write("error", event, fields),
  };
}

/** JSON, or null when the message is not JSON (a msgpack update or reply). */
function decodeJSON(data) {
  if (data.length === 0 || data[0] !== OPEN_BRACE) return null;
  return jc.decode(data);
}

class Bot {
  constructor(nc, player, { timeout, log }) {
    this.nc = nc;
    this.player = player;
    this.timeout = timeout;
    this.log = log;
    this.done = new Map(); // table -> index of the last prompt answered (or given up on for good)
    this.latest = new Map(); // table -> highest index of any update seen
    this.inflight = new Map(); // "table:index" -> promise of its answer
    this.warnedMsgpack = new Set();
    this.stopping = false;
    this.stats = { prompts: 0, accepted: 0, rejected: 0 };
  }

  start() {
    this.sub = this.nc.subscribe(`skat.view.${this.player}.*`, {
      callback: (err, msg) => {
        if (err) this.log.warn("subscription_error", { error: String(err) });
        else this.onUpdate(msg);
      },
    });
  }

  /** Ask the views service to send our pending prompts again (after a connect or reconnect). */
  async hello(reason) {
    for (let attempt = 1; attempt <= 10 && !this.stopping && !this.nc.isClosed(); attempt++) {
      try {
        const msg = await this.nc.request(`skat.hello.${this.player}`, HELLO, { timeout: 2000 });
        this.log.info("hello", { reason, reply: decodeJSON(msg.data) });
        return;
      } catch (err) {
        // No responder: the views service is not up (it re-sends every prompt when it starts).
        this.log.debug("hello_retry", { reason, attempt, error: err.code ?? String(err) });
        await sleep(500);
      }
    }
    this.log.warn("hello_unanswered", { reason });
  }

  onUpdate(msg) {
    let update;
    try {
      update = decodeJSON(msg.data);
    } catch (err) {
      this.log.warn("update_unreadable", { subject: msg.subject, error: String(err) });
      return;
    }
    if (update === null) {
      const table = msg.subject.split(".")[3];
      if (!this.warnedMsgpack.has(table)) {
        this.warnedMsgpack.add(table);
        this.log.error("update_not_json", {
          table,
          hint: `open the table with formats {"${this.player}": "json"} for this bot to play it`,
        });
      }
      return;
    }
    const view = update.view;
    const table = view.table;
    const index = update.index ?? 0;
    if (index > (this.latest.get(table) ?? -1)) this.latest.set(table, index);
    this.log.debug("update", { table, index, phase: view.phase, your_turn: !!update.your_turn });
    if (view.phase === "closed") this.log.info("table_closed", { table, totals: view.totals });
    if (!update.your_turn || this.stopping) return;
    const key = `${table}:${index}`;
    if ((this.done.get(table) ?? -1) >= index || this.inflight.has(key)) return; // a repeat
    this.stats.prompts++;
    const task = this.act(update).finally(() => this.inflight.delete(key));
    this.inflight.set(key, task);
  }

  async act(update) {
    const view = update.view;
    const table = view.table;
    const index = update.index ?? 0;
    let action;
    try {
      action = choose(view);
    } catch (err) {
      this.log.error("strategy_failed", { table, index, phase: view.phase, error: String(err) });
      return;
    }
    const command = { ...action, at: index };
    const subject = `skat.cmd.${this.player}.${table}`;
    const deadline = update.deadline ? update.deadline * 1000 : Infinity;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      if (this.stopping || this.nc.isClosed()) return;
      if ((this.latest.get(table) ?? -1) > index) {
        this.log.warn("prompt_superseded", { table, index, command }); // the table moved on without us
        return;
      }
      if (Date.now() > deadline) {
        this.log.warn("deadline_passed", { table, index, command, attempts: attempt - 1 });
        return;
      }
      let reply;
      try {
        const msg = await this.nc.request(subject, jc.encode(command), { timeout: this.timeout });
        reply = decodeJSON(msg.data);
      } catch (err) {
        // No responders (a service restarting) or a time-out: the same command again is safe,
        // "at" makes a duplicate of an accepted one come back as "stale", never as a second move.
        const transient = err.code === ErrorCode.NoResponders || err.code === ErrorCode.Timeout;
        if (!transient) {
          this.log.warn("command_failed", { table, index, command, error: err.code ?? String(err) });
          return;
        }
        this.log.debug("command_retry", { table, index, attempt, error: err.code });
        await sleep(100);
        continue;
      }
      if (reply === null) {
        this.log.error("reply_not_json", { table, index, command });
        return;
      }
      if (reply.ok) {
        this.done.set(table, index);
        this.stats.accepted++;
        this.log.debug("command_accepted", { table, index, command, event_index: reply.index });
        return;
      }
      if (RETRY_CODES.has(reply.code)) {
        this.log.debug("command_retry", { table, index, attempt, code: reply.code });
        await sleep(Math.min(20 * attempt, 500));
        continue;
      }
      this.done.set(table, index);
      this.stats.rejected++;
      this.log.warn("command_rejected", { table, index, command, code: reply.code, reason: reply.reason });
      return;
    }
    this.log.warn("command_gave_up", { table, index, command, attempts: MAX_ATTEMPTS });
  }

  /** Stop taking prompts, let the commands in flight finish (up to `graceMs`), then drain. */
  async stop(graceMs = 3000) {
    this.stopping = true;
    const pending = [...this.inflight.values()];
    if (pending.length) await Promise.race([Promise.allSettled(pending), sleep(graceMs)]);
    if (!this.nc.isClosed()) await this.nc.drain();
  }
}

async function main() {
  const opts = parse(process.argv.slice(2));
  const log = makeLogger(opts.player, opts.verbose);
  let bot = null;
  let signals = 0;
  const onSignal = (sig) => {
    if (++signals > 1 || bot === null) {
      log.info(bot === null ? "stopped_before_connecting" : "forced_exit", { signal: sig });
      process.exit(bot === null ? 0 : 1);
    }
    log.info("stopping", { signal: sig });
    bot.stop().catch((err) => log.error("drain_failed", { error: String(err) }));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  const nc = await connect({
    ...opts.connection,
    // Reply subjects under our own id: a server configured by `skat auth` lets a player
    // subscribe only to _INBOX.<player>.> (and its views), so requests need this prefix.
    inboxPrefix: `_INBOX.${opts.player}`,
    name: `skatbus-node-bot:${opts.player}`,
    waitOnFirstConnect: true, // keep trying if the server is not up yet
    maxReconnectAttempts: -1, // reconnect forever
    reconnectTimeWait: 500,
  });
  log.info("connected", { server: nc.getServer(), tls: Boolean(opts.connection.tls) }); // host:port, never a key
  bot = new Bot(nc, opts.player, { timeout: opts.timeout, log });

  bot.start();
  (async () => {
    for await (const s of nc.status()) {
      if (s.type === Events.Reconnect) {
        log.info("reconnected", { server: s.data });
        bot.hello("reconnect"); // subscriptions are restored by the client before this event
      } else if (s.type === Events.Disconnect) {
        log.warn("disconnected", { server: s.data });
      } else if (s.type === Events.Error) {
        log.warn("server_error", { error: String(s.data) });
      }
    }
  })().catch(() => {});
  await bot.hello("connect");

  const err = await nc.closed();
  log.info("closed", { ...bot.stats, error: err ? String(err) : undefined });
  process.exitCode = err ? 1 : 0;
}

main().catch((err) => {
  // One JSON line, like everything else the bot says: e.g. AUTHORIZATION_VIOLATION for a key the
  // server does not know (the server never learns the seed either way: it checks a signature).
  console.log(JSON.stringify({ t: new Date().toISOString(), level: "error", event: "failed", error: err.code ?? String(err) }));
  process.exit(1);
});
