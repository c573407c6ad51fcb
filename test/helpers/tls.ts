// Certificates for mTLS tests, made with the machine's openssl in a temporary directory:
// a CA, a server certificate for 127.0.0.1/localhost, and client certificates with the
// subject alternative names a test asks for (each signed by the CA, EKU clientAuth).
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';

export interface Pem {
  certFile: string;
  keyFile: string;
  cert: Buffer;
  key: Buffer;
}

export interface TestPki {
  dir: string;
  caFile: string;
  ca: Buffer;
  server: Pem;
  /** A client certificate signed by the CA with these SANs, e.g. ['URI:spiffe://plant/line-9']. */
  client(name: string, sans: string[]): Promise<Pem>;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

async function signed(dir: string, name: string, subject: string, ext: string): Promise<Pem> {
  const keyFile = join(dir, `${name}.key`), csr = join(dir, `${name}.csr`), certFile = join(dir, `${name}.pem`), extFile = join(dir, `${name}.ext`);
  await writeFile(extFile, ext);
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', csr, '-subj', subject], dir);
  openssl(['x509', '-req', '-in', csr, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', certFile, '-days', '2', '-extfile', extFile], dir);
  return { certFile, keyFile, cert: await readFile(certFile), key: await readFile(keyFile) };
}

export async function makeTestPki(t: Test): Promise<TestPki> {
  const dir = await mkdtemp(join(tmpdir(), 'historian-pki-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem',
    '-subj', '/CN=historian test CA', '-days', '2', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  const server = await signed(dir, 'server', '/CN=localhost', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    ca: await readFile(join(dir, 'ca.pem')),
    server,
    client: (name, sans) => signed(dir, name, `/CN=${name}`, `subjectAltName=${sans.join(',')}\nextendedKeyUsage=clientAuth\n`),
  };
}
