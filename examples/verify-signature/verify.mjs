#!/usr/bin/env node
// Verifies one webhook delivery (Node 20, no dependencies).
//
//   WEBHOOK_SECRET=<secret>[,<previous secret>] node verify.mjs "<x-svc-signature>" ["<x-svc-timestamp>"] < body
//
// The body on stdin must be the raw bytes as received. Exit status 0: genuine and fresh; 1: rejected.
import { createHmac, timingSafeEqual } from 'node:crypto';

const TOLERANCE_MS = 5 * 60 * 1000;

function reject(reason) {
  process.stderr.write(`rejected: ${reason}\n`);
  process.exit(1);
}

const secrets = (process.env.WEBHOOK_SECRET ?? '').split(',').filter(Boolean);
const [signatureHeader, timestampHeader] = process.argv.slice(2);
if (secrets.length === 0) reject('WEBHOOK_SECRET is not set');
if (!signatureHeader) reject('usage: verify.mjs "<x-svc-signature>" ["<x-svc-timestamp>"] < body');

// x-svc-signature: t=<milliseconds>,v1=<hex>[,v1=<hex>] (one v1 per live secret while a secret is rotated).
let t;
const given = [];
for (const part of signatureHeader.split(',')) {
  const at = part.indexOf('=');
  const [key, value] = [part.slice(0, at).trim(), part.slice(at + 1).trim()];
  if (key === 't') t = value;
  if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) given.push(Buffer.from(value, 'hex'));
}
if (!t || !/^\d+$/.test(t)) reject('no t= timestamp in the signature header');
if (given.length === 0) reject('no v1= signature in the signature header');
if (timestampHeader !== undefined && timestampHeader !== t) reject('x-svc-timestamp differs from t');
if (Math.abs(Date.now() - Number(t)) > TOLERANCE_MS) reject('timestamp is more than 5 minutes from now');

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const body = Buffer.concat(chunks);

// HMAC-SHA256 over "<t>.<raw body>", keyed with the secret's text as given (not hex-decoded).
const genuine = secrets.some((secret) => {
  const expected = createHmac('sha256', secret).update(`${t}.`).update(body).digest();
  return given.some((signature) => timingSafeEqual(signature, expected));
});
if (!genuine) reject('no v1 signature matches');
process.stdout.write('ok\n');
