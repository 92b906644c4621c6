#!/usr/bin/env node
// Interop checker for samsa: kafkajs (pinned in package.json).
//
// Usage: node check.js BOOTSTRAP PREFIX COUNT
//        node check.js --sasl-ssl ...   (the sasl_ssl step, see sasl_ssl.js)
//
// Same contract as interop/python/check.py: the runner has created
// PREFIX-<codec>, PREFIX-idem and PREFIX-txn with 3 partitions; this script produces,
// consumes in a group with commits, checks every record (key, value,
// headers, timestamp, offset), runs the admin calls and the transactions
// scenario (transactions() below), then prints
// "VERSION ..." and "RESULT <feature> PASS|FAIL|LIMIT <detail>" lines.
//
// Record i: key "key-<i>" when i is even, null when odd; value
// "value-<i>-" padded with 'a'+(i+j)%26 to 100 bytes; headers seq=<i>,
// client=kafkajs, pad="x"*(i%3); timestamp 1700000000000+i. kafkajs
// reports one base offset per partition and request, so the checker
// sends record i to partition i%3 explicitly and derives each record's
// offset from the base offset and its place in the request.
'use strict';

const { Kafka, CompressionTypes, CompressionCodecs, ConfigResourceTypes, logLevel } = require('kafkajs');
const SnappyCodec = require('kafkajs-snappy');

CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec;

const TS0 = 1700000000000;
const PARTITIONS = 3;
const TIMEOUT_MS = 90000;
const SEND_BATCH = 500;
const CODECS = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
};
// kafkajs ships gzip only; lz4 and zstd need plug-ins with native builds
// (kafkajs-lz4, @kafkajs/zstd). That holds against Apache Kafka too.
const PLUGIN_ONLY = new Set(['lz4', 'zstd']);

const keyOf = (i) => (i % 2 === 0 ? Buffer.from(`key-${i}`) : null);
function valueOf(i) {
  const prefix = Buffer.from(`value-${i}-`);
  const v = Buffer.alloc(Math.max(100, prefix.length));
  prefix.copy(v);
  for (let j = prefix.length; j < v.length; j++) v[j] = 97 + ((i + j) % 26);
  return v;
}
const headersOf = (i) => ({ seq: Buffer.from(String(i)), client: Buffer.from('kafkajs'), pad: Buffer.from('x'.repeat(i % 3)) });

function result(feature, status, detail) {
  const d = String(detail || '').replace(/\s+/g, ' ').slice(0, 600);
  process.stdout.write(`RESULT ${feature} ${status} ${d}\n`);
}
const errText = (e) => (e && (e.stack || e.message)) ? `${e.name}: ${e.message}` : String(e);

async function produce(kafka, topic, count, compression, idempotent, placed) {
  const producer = kafka.producer(idempotent ? { idempotent: true, maxInFlightRequests: 1 } : {});
  await producer.connect();
  const where = new Map();
  try {
    for (let start = 0; start < count; start += SEND_BATCH) {
      const end = Math.min(count, start + SEND_BATCH);
      const messages = [];
      const perPartition = new Map();
      for (let i = start; i < end; i++) {
        const p = i % PARTITIONS;
        messages.push({ partition: p, key: keyOf(i), value: valueOf(i), headers: headersOf(i), timestamp: String(TS0 + i) });
        if (!perPartition.has(p)) perPartition.set(p, []);
        perPartition.get(p).push(i);
      }
      const meta = await producer.send({ topic, acks: -1, compression, messages });
      for (const m of meta) {
        const base = Number(m.baseOffset);
        (perPartition.get(m.partition) || []).forEach((i, k) => where.set(i, [m.partition, base + k]));
      }
    }
    placed.set(topic, where);
  } finally {
    await producer.disconnect();
  }
}

class Verifier {
  constructor(placed, counts) {
    this.placed = placed;
    this.counts = counts;
    this.seen = new Map([...counts.keys()].map((t) => [t, new Set()]));
    this.errors = [];
  }
  done() { return [...this.counts].every(([t, n]) => this.seen.get(t).size >= n); }
  error(feature, msg) { if (this.errors.length < 20) this.errors.push([feature, msg]); }
  check(topic, partition, m) {
    const offset = Number(m.offset);
    const at = `${topic}[${partition}]@${offset}`;
    const h = m.headers || {};
    if (!h.seq) { this.error('headers', `${at}: no seq header in ${JSON.stringify(Object.keys(h))}`); return; }
    const i = Number(h.seq.toString());
    if (!this.counts.has(topic) || !(i >= 0 && i < this.counts.get(topic))) { this.error('consume', `${at}: unexpected seq ${i}`); return; }
    const seen = this.seen.get(topic);
    if (seen.has(i)) { this.error('consume', `${at}: record ${i} delivered twice`); return; }
    seen.add(i);
    const wantH = headersOf(i);
    const gotKeys = Object.keys(h);
    const hdrOK = gotKeys.length === 3 && gotKeys.every((k) => wantH[k] && Buffer.compare(Buffer.from(h[k]), wantH[k]) === 0);
    if (!hdrOK) this.error('headers', `${at}: record ${i} headers ${JSON.stringify(Object.fromEntries(gotKeys.map((k) => [k, String(h[k])])))}`);
    const wantKey = keyOf(i);
    if ((wantKey === null) !== (m.key === null) || (wantKey && Buffer.compare(m.key, wantKey) !== 0)) this.error('consume', `${at}: record ${i} key ${m.key}`);
    if (!m.value || Buffer.compare(m.value, valueOf(i)) !== 0) this.error('consume', `${at}: record ${i} wrong value`);
    if (Number(m.timestamp) !== TS0 + i) this.error('consume', `${at}: record ${i} timestamp ${m.timestamp}, want ${TS0 + i}`);
    const want = (this.placed.get(topic) || new Map()).get(i);
    if (want && (want[0] !== partition || want[1] !== offset)) this.error('consume', `${at}: record ${i} was acked at partition ${want[0]} offset ${want[1]}`);
  }
}

async function consume(kafka, group, v) {
  const consumer = kafka.consumer({ groupId: group });
  let assigned = false;
  let commitErr = null;
  consumer.on(consumer.events.GROUP_JOIN, () => { assigned = true; });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [...v.counts.keys()], fromBeginning: true });
    let finish;
    const finished = new Promise((resolve) => { finish = resolve; });
    const timer = setTimeout(() => finish('timeout'), TIMEOUT_MS);
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
        for (const m of batch.messages) {
          v.check(batch.topic, batch.partition, m);
          resolveOffset(m.offset);
        }
        if (batch.messages.length) {
          const next = String(Number(batch.messages[batch.messages.length - 1].offset) + 1);
          try {
            await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: next }]);
          } catch (e) {
            commitErr = commitErr || errText(e);
          }
        }
        await heartbeat();
        if (v.done()) finish('done');
      },
    });
    await finished;
    clearTimeout(timer);
  } finally {
    await consumer.disconnect();
  }
  // The group's committed offsets must equal the partitions' ends.
  const admin = kafka.admin();
  await admin.connect();
  try {
    const bad = [];
    for (const topic of v.counts.keys()) {
      const ends = await admin.fetchTopicOffsets(topic);
      const [committed] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
      for (const e of ends) {
        const c = committed.partitions.find((p) => p.partition === e.partition);
        if (!c || c.offset !== e.high) bad.push(`${topic}[${e.partition}] committed ${c && c.offset} end ${e.high}`);
      }
    }
    if (!commitErr && bad.length) commitErr = bad.slice(0, 5).join('; ');
  } finally {
    await admin.disconnect();
  }
  return { assigned, commitErr };
}

// untilVisible fetches the metadata of, and lists, a topic just created
// until both show it, for up to 15 s, and returns null, or what the last
// try saw: in a cluster the brokers other than the one that took
// CreateTopics learn of the topic from the controller a little later, so
// a read may reach one that has not, and an application waits as this
// does. describeConfigs is left out: a broker that knows the topic must
// answer it.
async function untilVisible(admin, topic) {
  const deadline = Date.now() + 15000;
  for (;;) {
    let why;
    try {
      const md = await admin.fetchTopicMetadata({ topics: [topic] });
      const n = md.topics[0].partitions.length;
      if (n !== 2) why = `fetchTopicMetadata: ${n} partitions, want 2`;
      else if (!(await admin.listTopics()).includes(topic)) why = `listTopics misses ${topic}`;
      else return null;
    } catch (e) {
      if (e.type !== 'UNKNOWN_TOPIC_OR_PARTITION') throw e;
      why = `fetchTopicMetadata: ${errText(e)}`;
    }
    if (Date.now() > deadline) return why;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function adminCheck(kafka, topic) {
  const admin = kafka.admin();
  let step = 'connect';
  try {
    await admin.connect();
    step = 'createTopics';
    await admin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 1 }], waitForLeaders: true });
    step = 'fetchTopicMetadata';
    const why = await untilVisible(admin, topic);
    if (why) return why;
    step = 'describeConfigs';
    const cfg = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }], includeSynonyms: false });
    const names = cfg.resources[0].configEntries.map((e) => e.configName);
    if (!names.includes('retention.ms')) return `describeConfigs: no retention.ms in ${names.slice(0, 10)}`;
    step = 'deleteTopics';
    await admin.deleteTopics({ topics: [topic] });
    return null;
  } catch (e) {
    return `${step}: ${errText(e)}`;
  } finally {
    await admin.disconnect();
  }
}

async function main() {
  if (process.argv[2] === '--sasl-ssl') {
    await require('./sasl_ssl').run(process.argv.slice(3), result);
    return;
  }
  const [bootstrap, prefix, countText] = process.argv.slice(2);
  if (!bootstrap || !prefix || !countText) {
    process.stderr.write('usage: node check.js BOOTSTRAP PREFIX COUNT\n');
    process.exit(2);
  }
  const count = Number(countText);
  process.stdout.write(`VERSION kafkajs ${require('kafkajs/package.json').version}\n`);
  const kafka = new Kafka({ clientId: 'samsa-interop', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 5 } });

  const placed = new Map();
  const counts = new Map();
  const produceErr = new Map();
  for (const [codec, ct] of Object.entries(CODECS)) {
    const topic = `${prefix}-${codec}`;
    const began = Date.now();
    try {
      await produce(kafka, topic, count, ct, false, placed);
      counts.set(topic, count);
      process.stdout.write(`# produced ${count} to ${topic} in ${(Date.now() - began) / 1000}s\n`);
    } catch (e) {
      produceErr.set(codec, errText(e));
    }
  }
  const idemTopic = `${prefix}-idem`;
  const idemCount = Math.max(Math.floor(count / 10), 1);
  try {
    await produce(kafka, idemTopic, idemCount, CompressionTypes.None, true, placed);
    counts.set(idemTopic, idemCount);
  } catch (e) {
    produceErr.set('idem', errText(e));
  }

  const v = new Verifier(placed, counts);
  let assigned = false;
  let commitErr = null;
  let consumeErr = null;
  const began = Date.now();
  if (counts.size) {
    try {
      ({ assigned, commitErr } = await consume(kafka, `${prefix}-group`, v));
    } catch (e) {
      consumeErr = errText(e);
    }
  }
  process.stdout.write(`# consumed in ${(Date.now() - began) / 1000}s\n`);

  const consumeErrs = v.errors.filter(([f]) => f === 'consume').map(([, m]) => m);
  if (consumeErr) consumeErrs.unshift(consumeErr);
  const missing = [...counts].filter(([t, n]) => v.seen.get(t).size < n).map(([t, n]) => `${t}: ${n - v.seen.get(t).size}`);
  if (missing.length) consumeErrs.push(`missing records: ${missing.join(', ')}`);
  const topicOK = (t) => counts.has(t) && v.seen.get(t).size === counts.get(t) && !v.errors.some(([, m]) => m.startsWith(`${t}[`));

  if (produceErr.has('none')) result('produce', 'FAIL', produceErr.get('none'));
  else result('produce', 'PASS', `${count} records per codec, keyed and unkeyed`);
  if (!counts.size) result('consume', 'FAIL', 'nothing was produced');
  else if (consumeErrs.length) result('consume', 'FAIL', consumeErrs.slice(0, 3).join('; '));
  else result('consume', 'PASS', 'key, value, headers, timestamp, offset of every record');
  result('group', assigned ? 'PASS' : 'FAIL', assigned ? '' : consumeErr || 'never joined the group');
  if (commitErr) result('commit', 'FAIL', commitErr);
  else if (counts.size && !consumeErr) result('commit', 'PASS', "committed offsets equal the partitions' ends");
  else result('commit', 'FAIL', 'not reached');
  const hdr = v.errors.filter(([f]) => f === 'headers').map(([, m]) => m);
  result('headers', hdr.length || !counts.size ? 'FAIL' : 'PASS', hdr.slice(0, 2).join('; '));
  for (const codec of Object.keys(CODECS)) {
    const topic = `${prefix}-${codec}`;
    if (produceErr.has(codec)) {
      if (PLUGIN_ONLY.has(codec)) result(`codec:${codec}`, 'LIMIT', `kafkajs has no built-in ${codec} codec (needs a native plug-in; same against Apache Kafka): ${produceErr.get(codec)}`);
      else result(`codec:${codec}`, 'FAIL', `produce: ${produceErr.get(codec)}`);
    } else if (!topicOK(topic)) {
      const errs = v.errors.filter(([, m]) => m.startsWith(`${topic}[`)).map(([, m]) => m);
      result(`codec:${codec}`, 'FAIL', errs.slice(0, 2).join('; ') || 'records missing');
    } else {
      result(`codec:${codec}`, 'PASS', '');
    }
  }
  if (produceErr.has('idem')) result('idempotence', 'FAIL', produceErr.get('idem'));
  else if (!topicOK(idemTopic)) result('idempotence', 'FAIL', 'records missing or wrong');
  else result('idempotence', 'PASS', `${idemCount} records`);
  const err = await adminCheck(kafka, `${prefix}-admin`);
  result('admin', err ? 'FAIL' : 'PASS', err || 'create, describe, list, describe configs, delete');
  const k = Math.max(Math.floor(count / 10), 1);
  let terr;
  try {
    terr = await transactions(kafka, `${prefix}-txn`, k);
  } catch (e) {
    terr = errText(e);
  }
  result('transactions', terr ? 'FAIL' : 'PASS', terr || `commit, abort, commit of ${k} records each; read_committed read the committed ones`);
}

// The transactions scenario (e2e/interop/transactions.go): on
// PREFIX-txn, transactionalId PREFIX-txn-id, three transactions of k
// records (records 0..3k-1), the middle one aborted after its sends were
// acknowledged; then a read_committed consumer (kafkajs has no assign: a
// group of its own, from the beginning) must read exactly records [0,k)
// and [2k,3k). Returns null or what went wrong.
async function transactions(kafka, topic, k) {
  const producer = kafka.producer({ transactionalId: `${topic}-id`, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    for (let t = 0; t < 3; t++) {
      const tx = await producer.transaction();
      const messages = [];
      for (let i = t * k; i < (t + 1) * k; i++) {
        messages.push({ key: keyOf(i), value: valueOf(i), headers: headersOf(i), timestamp: String(TS0 + i) });
      }
      for (let b = 0; b < messages.length; b += SEND_BATCH) {
        await tx.send({ topic, messages: messages.slice(b, b + SEND_BATCH) });
      }
      if (t === 1) await tx.abort();
      else await tx.commit();
    }
  } finally {
    await producer.disconnect();
  }
  const want = new Map();
  for (let i = 0; i < 3 * k; i++) want.set(valueOf(i).toString('latin1'), i);
  const seen = new Set();
  const errs = [];
  const consumer = kafka.consumer({ groupId: `${topic}-reader`, readUncommitted: false });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    let finish;
    const finished = new Promise((resolve) => { finish = resolve; });
    const timer = setTimeout(() => finish('timeout'), 60000);
    let quiet = null;
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        const i = want.get(message.value ? message.value.toString('latin1') : '');
        if (i === undefined) errs.push(`a record not sent at ${partition}/${message.offset}`);
        else if (Math.floor(i / k) === 1) errs.push(`record ${i} of the aborted transaction`);
        else if (seen.has(i)) errs.push(`record ${i} twice`);
        else seen.add(i);
        if (seen.size >= 2 * k) {
          // Two seconds more, so extra records show.
          clearTimeout(quiet);
          quiet = setTimeout(() => finish('done'), 2000);
        }
      },
    });
    await finished;
    clearTimeout(timer);
    clearTimeout(quiet);
  } finally {
    await consumer.disconnect();
  }
  if (seen.size !== 2 * k) errs.push(`${seen.size} of the ${2 * k} committed records read`);
  return errs.length ? `read_committed: ${errs.slice(0, 3).join('; ')}` : null;
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write(`checker crashed: ${errText(e)}\n`);
  process.exit(1);
});
