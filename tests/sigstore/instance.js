// A Sigstore instance made offline, for the provenance tests (tests/it/provenance.rs), and the
// second oracle they compare every verdict with.
//
//   node instance.js make PLAN.json OUTDIR
//     PLAN: {"bundles": [{"name", "artifact": FILE, "san", "claims": {OID suffix: value},
//             "at": ISO time (the certificate's issuance; default now), "logged_at": ISO time
//             (the log's integrated time; default "at"), "tlog": bool (default true),
//             "tsa": bool, "tamper": "signature" | "log-body" | "digest"}]}
//     Writes OUTDIR/trusted_root.json (one CA, CT log, transparency log and timestamp authority,
//     whose keys are made here and never leave OUTDIR) and OUTDIR/NAME.sigstore.json for each
//     bundle: a v0.3 bundle whose certificate (with the Fulcio CI claims given, and an SCT from
//     the CT log) signs the artifact's bytes, logged with an inclusion proof, a signed
//     checkpoint and a signed entry timestamp, and an RFC 3161 timestamp when asked.
//   node instance.js verify TRUSTED_ROOT BUNDLE ARTIFACT
//     @sigstore/verify's offline verdict: {"ok": bool, "why", "san", "issuer"} on stdout.
//
// The building blocks are @sigstore/mock's (the sigstore-js project's own test services):
// initializeCA, initializeCTLog, initializeTLog, initializeTSA.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const {
  initializeCA,
  initializeCTLog,
  initializeTLog,
  initializeTSA,
} = require('@sigstore/mock');

const FULCIO_ARC = '1.3.6.1.4.1.57264.1.';
const LONG_AGO = '2020-01-01T00:00:00Z';

const b64 = (buf) => Buffer.from(buf).toString('base64');
const der = (view) => Buffer.from(view.buffer, view.byteOffset, view.byteLength);
const keyPair = () => crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const spki = (key) => key.export({ format: 'der', type: 'spki' });

async function make(planFile, outDir) {
  const plan = JSON.parse(fs.readFileSync(planFile, 'utf8'));
  fs.mkdirSync(outDir, { recursive: true });
  const caKeys = keyPair();
  const ctKeys = keyPair();
  const tlogKeys = keyPair();
  const tsaKeys = keyPair();
  const ctLog = await initializeCTLog(ctKeys);
  // The TSA's clock on a whole second: asn1js writes a GeneralizedTime's milliseconds with
  // trailing zeros (".120Z"), which DER forbids and sigstore-rust refuses; a whole second has
  // no fraction at all.
  const wholeSecond = (d) => new Date(Math.floor(d.getTime() / 1000) * 1000);
  let tsa = await initializeTSA(tsaKeys, wholeSecond(new Date()));
  // One CA for every signing time: the same key, one root certificate each, all trusted.
  const roots = [];
  for (const spec of plan.bundles) {
    const at = spec.at ? new Date(spec.at) : new Date();
    const ca = await initializeCA(caKeys, ctLog, at);
    roots.push(der(ca.rootCertificate));
    const loggedAt = spec.logged_at ? new Date(spec.logged_at) : at;
    const tlog = await initializeTLog('https://rekor.mcp-deploy.test', tlogKeys, loggedAt);
    const artifact = fs.readFileSync(spec.artifact);
    const signer = keyPair();
    const extensions = Object.entries(spec.claims || {}).map(([suffix, value]) => ({
      oid: FULCIO_ARC + suffix,
      value,
    }));
    const cert = der(
      await ca.issueCertificate({
        publicKey: spki(signer.publicKey),
        subjectAltName: spec.san,
        extensions,
      })
    );
    let signature = crypto.sign('sha256', artifact, signer.privateKey);
    let digest = crypto.createHash('sha256').update(artifact).digest();
    // PEM: the base64 in lines of 64, no blank line (whatever the certificate's length).
    const certPem =
      '-----BEGIN CERTIFICATE-----\n' + b64(cert).match(/.{1,64}/g).join('\n') + '\n-----END CERTIFICATE-----\n';
    const body = {
      apiVersion: '0.0.1',
      kind: 'hashedrekord',
      spec: {
        data: { hash: { algorithm: 'sha256', value: digest.toString('hex') } },
        signature: { content: b64(signature), publicKey: { content: b64(certPem) } },
      },
    };
    const logged = Object.values(await tlog.log(body))[0];
    const proof = logged.verification.inclusionProof;
    let canonicalizedBody = logged.body;
    if (spec.tamper === 'signature') {
      signature = Buffer.from(signature);
      signature[signature.length - 1] ^= 1;
    }
    if (spec.tamper === 'digest') {
      digest = crypto.createHash('sha256').update('another artifact').digest();
    }
    if (spec.tamper === 'log-body') {
      const other = JSON.parse(Buffer.from(canonicalizedBody, 'base64').toString());
      other.spec.data.hash.value = crypto.createHash('sha256').update('x').digest('hex');
      canonicalizedBody = b64(JSON.stringify(other));
    }
    const material = { certificate: { rawBytes: b64(cert) }, tlogEntries: [] };
    if (spec.tlog !== false) {
      material.tlogEntries.push({
        logIndex: String(logged.logIndex),
        logId: { keyId: b64(Buffer.from(logged.logID, 'hex')) },
        kindVersion: { kind: 'hashedrekord', version: '0.0.1' },
        integratedTime: String(logged.integratedTime),
        inclusionPromise: { signedEntryTimestamp: logged.verification.signedEntryTimestamp },
        inclusionProof: {
          logIndex: String(proof.logIndex),
          rootHash: b64(Buffer.from(proof.rootHash, 'hex')),
          treeSize: String(proof.treeSize),
          hashes: proof.hashes.map((h) => b64(Buffer.from(h, 'hex'))),
          checkpoint: { envelope: proof.checkpoint },
        },
        canonicalizedBody,
      });
    }
    if (spec.tsa) {
      tsa = await initializeTSA(tsaKeys, wholeSecond(loggedAt));
      const signed = await tsa.timestamp({
        artifactHash: crypto.createHash('sha256').update(signature).digest(),
        hashAlgorithmOID: '2.16.840.1.101.3.4.2.1',
        nonce: crypto.randomInt(2 ** 31),
        policyOID: '1.2.3.4',
        certReq: true,
      });
      material.timestampVerificationData = { rfc3161Timestamps: [{ signedTimestamp: b64(der(signed)) }] };
    }
    const bundle = {
      mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
      verificationMaterial: material,
      messageSignature: {
        messageDigest: { algorithm: 'SHA2_256', digest: b64(digest) },
        signature: b64(signature),
      },
    };
    fs.writeFileSync(path.join(outDir, `${spec.name}.sigstore.json`), JSON.stringify(bundle));
  }
  const key = (k) => ({
    rawBytes: b64(spki(k.publicKey)),
    keyDetails: 'PKIX_ECDSA_P256_SHA_256',
    validFor: { start: LONG_AGO },
  });
  const trustedRoot = {
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    tlogs: [
      {
        baseUrl: 'https://rekor.mcp-deploy.test',
        hashAlgorithm: 'SHA2_256',
        publicKey: key(tlogKeys),
        logId: { keyId: b64(crypto.createHash('sha256').update(spki(tlogKeys.publicKey)).digest()) },
      },
    ],
    certificateAuthorities: roots.map((root) => ({
      subject: { organization: 'sigstore.mock', commonName: 'sigstore' },
      uri: 'https://fulcio.mcp-deploy.test',
      certChain: { certificates: [{ rawBytes: b64(root) }] },
      validFor: { start: LONG_AGO },
    })),
    ctlogs: [
      {
        baseUrl: 'https://ctfe.mcp-deploy.test',
        hashAlgorithm: 'SHA2_256',
        publicKey: key(ctKeys),
        logId: { keyId: b64(der(ctLog.logID)) },
      },
    ],
    timestampAuthorities: [
      {
        subject: { organization: 'sigstore.mock', commonName: 'sigstore-tsa' },
        uri: 'https://tsa.mcp-deploy.test',
        certChain: {
          certificates: [{ rawBytes: b64(der(tsa.intCertificate)) }, { rawBytes: b64(der(tsa.rootCertificate)) }],
        },
        validFor: { start: LONG_AGO },
      },
    ],
  };
  fs.writeFileSync(path.join(outDir, 'trusted_root.json'), JSON.stringify(trustedRoot, null, 2));
}

function verify(rootFile, bundleFile, artifactFile) {
  const { Verifier, toSignedEntity, toTrustMaterial } = require('@sigstore/verify');
  const { bundleFromJSON } = require('@sigstore/bundle');
  const { TrustedRoot } = require('@sigstore/protobuf-specs');
  const out = { ok: false };
  try {
    const root = TrustedRoot.fromJSON(JSON.parse(fs.readFileSync(rootFile, 'utf8')));
    const verifier = new Verifier(toTrustMaterial(root), { tlogThreshold: 1, ctlogThreshold: 1 });
    const bundle = bundleFromJSON(JSON.parse(fs.readFileSync(bundleFile, 'utf8')));
    const signer = verifier.verify(toSignedEntity(bundle, fs.readFileSync(artifactFile)));
    out.ok = true;
    out.san = signer.identity && signer.identity.subjectAlternativeName;
    out.issuer = signer.identity && signer.identity.extensions && signer.identity.extensions.issuer;
  } catch (e) {
    out.why = String(e && e.message ? e.message : e);
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

const [command, ...args] = process.argv.slice(2);
if (command === 'make') {
  make(args[0], args[1]).catch((e) => {
    process.stderr.write(`instance.js: ${e.stack || e}\n`);
    process.exit(2);
  });
} else if (command === 'verify') {
  verify(args[0], args[1], args[2]);
} else {
  process.stderr.write('usage: node instance.js make PLAN.json OUTDIR | verify ROOT BUNDLE ARTIFACT\n');
  process.exit(2);
}
