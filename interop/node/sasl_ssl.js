// The interop matrix's sasl_ssl step for kafkajs:
//
//   node check.js --sasl-ssl ADDR TOPIC COUNT CA_PEM MECHANISM USER PASSWORD
//
// Over the SASL_SSL listener at ADDR (TLS trusting CA_PEM, then SCRAM as
// USER), produce COUNT records "sasl-<i>" to TOPIC and consume them back
// in the group TOPIC-g (kafkajs commits as it goes). Prints one
// "RESULT sasl_ssl ..." line.
'use strict';

const fs = require('fs');
const { Kafka, logLevel } = require('kafkajs');

async function roundTrip(addr, topic, n, ca, mechanism, username, password) {
  const kafka = new Kafka({
    clientId: 'samsa-interop-sasl', brokers: [addr], logLevel: logLevel.NOTHING, retry: { retries: 3 },
    ssl: { ca: [fs.readFileSync(ca, 'utf8')] },
    // kafkajs names the mechanisms scram-sha-256 and scram-sha-512.
    sasl: { mechanism: mechanism.toLowerCase(), username, password },
  });
  const producer = kafka.producer();
  await producer.connect();
  try {
    const messages = [];
    for (let i = 0; i < n; i++) messages.push({ value: `sasl-${i}` });
    await producer.send({ topic, acks: -1, messages });
  } finally {
    await producer.disconnect();
  }
  const consumer = kafka.consumer({ groupId: `${topic}-g` });
  const got = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    let resolve;
    const all = new Promise((r) => { resolve = r; });
    await consumer.run({
      eachMessage: async ({ message }) => {
        got.push(message.value.toString());
        if (got.length >= n) resolve();
      },
    });
    let timer;
    const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`read ${got.length} of ${n} in 60 s`)), 60000); });
    try {
      await Promise.race([all, timeout]);
    } finally {
      clearTimeout(timer);
    }
  } finally {
    await consumer.disconnect(); // commits what eachMessage resolved
  }
  return got;
}

async function run(args, result) {
  const [addr, topic, countText, ca, mechanism, username, password] = args;
  const n = Number(countText);
  let got;
  try {
    got = await roundTrip(addr, topic, n, ca, mechanism, username, password);
  } catch (e) {
    result('sasl_ssl', 'FAIL', String(e && e.stack ? e.message : e));
    return;
  }
  const want = [];
  for (let i = 0; i < n; i++) want.push(`sasl-${i}`);
  got.sort();
  want.sort();
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    result('sasl_ssl', 'FAIL', `read ${got.length} records, want the ${n} sent`);
    return;
  }
  result('sasl_ssl', 'PASS', `${mechanism} over TLS trusting the run's CA, ${n} records produced and consumed in a group (committed)`);
}

module.exports = { run };
