/**
 * `npm run audit:verify -- <export.csv> [<checkpoint.json>] [--partial] [--key-fingerprint <hex>]`:
 * verifies an audit CSV export offline. Prints the result as JSON; exits 0 when the trail is intact,
 * 1 when it is not, 2 when the arguments or files are unusable.
 */
import { createReadStream, readFileSync } from 'node:fs';
import { signedCheckpointSchema } from '@bioprocess/shared/audit-verification';
import { verifyExport } from './verify-export.ts';

const USAGE = 'usage: npm run audit:verify -- <export.csv> [<checkpoint.json>] [--partial] [--key-fingerprint <hex>]';

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
const files: string[] = [];
let partial = false;
let expectedKeyFingerprint: string | undefined;
for (let index = 0; index < args.length; index += 1) {
  const arg = args[index]!;
  if (arg === '--partial') partial = true;
  else if (arg === '--key-fingerprint') expectedKeyFingerprint = args[++index] ?? fail('--key-fingerprint needs a value');
  else if (arg.startsWith('--')) fail(`unknown option ${arg}`);
  else files.push(arg);
}
if (files.length < 1 || files.length > 2) fail('give the export file and, optionally, a checkpoint file');

let checkpoint = null;
if (files[1]) {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(files[1], 'utf8'));
  } catch (error) {
    fail(`cannot read the checkpoint ${files[1]}: ${(error as Error).message}`);
  }
  const parsed = signedCheckpointSchema.safeParse(raw);
  if (!parsed.success) fail(`${files[1]} is not an audit checkpoint: ${parsed.error.issues[0]?.path.join('.')} ${parsed.error.issues[0]?.message}`);
  checkpoint = parsed.data;
}

const started = process.hrtime.bigint();
try {
  const result = await verifyExport(createReadStream(files[0]!), checkpoint, { partial, expectedKeyFingerprint });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  process.stdout.write(`${JSON.stringify({ ...result, seconds: Number(seconds.toFixed(2)) }, null, 2)}\n`);
  process.stderr.write(result.valid ? `audit trail intact: ${result.entries} entries verified\n` : `audit trail NOT intact: ${result.problem}\n`);
  process.exit(result.valid ? 0 : 1);
} catch (error) {
  fail(`cannot verify ${files[0]}: ${(error as Error).message}`);
}
