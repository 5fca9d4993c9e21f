// Encryption at rest, as upstream's storage/value: a transformer turns an object's serialized JSON
// into what is stored and back. Each provider marks what it writes with its prefix
// `k8s:enc:<provider>:v1:<keyname>:`, so a read finds the key that wrote the value; the first
// provider writes, every listed one reads (key rotation). The sealed bytes are upstream's (aescbc: IV
// then PKCS#7-padded ciphertext; aesgcm: nonce, ciphertext, tag, with the storage key as additional
// data; secretbox: nonce then the box), raw after the prefix as upstream writes them, so one etcd
// serves kube-apiserver and kite alike (the Store's string carries them one char per byte:
// store.ts's valueToBytes). Values kite wrote before that hold the bytes in base64: they still read, as stale.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import nacl from 'tweetnacl';
import { encryptedValueMarker as encryptedMarker } from '../store.js';

export interface Transformer {
  /** The stored form of plain (the object's JSON) under key. */
  toStorage(plain: string, key: string): string;
  /**
   * The plain JSON of a stored value; stale when a provider other than the writing one read it (the
   * value is rewritten by the next update, even an unchanged one). Throws when none can read it.
   */
  fromStorage(stored: string, key: string): { plain: string; stale: boolean };
}

/** One provider with one key: the prefix it writes and how it seals. */
export interface PrefixTransformer {
  readonly prefix: string;
  seal(plain: Buffer, key: string): Buffer;
  open(sealed: Buffer, key: string): Buffer;
}

export const aesKeySizes = [16, 24, 32];

export function aescbc(name: string, secret: Buffer): PrefixTransformer {
  const algorithm = `aes-${secret.length * 8}-cbc`;
  return {
    prefix: `${encryptedMarker}aescbc:v1:${name}:`,
    seal(plain) {
      const iv = randomBytes(16);
      const cipher = createCipheriv(algorithm, secret, iv);
      return Buffer.concat([iv, cipher.update(plain), cipher.final()]);
    },
    open(sealed) {
      if (sealed.length < 32 || sealed.length % 16 !== 0) throw new Error('the stored data is not a multiple of the block size');
      const decipher = createDecipheriv(algorithm, secret, sealed.subarray(0, 16));
      return Buffer.concat([decipher.update(sealed.subarray(16)), decipher.final()]);
    },
  };
}

const gcmNonce = 12;
const gcmTag = 16;

export function aesgcm(name: string, secret: Buffer): PrefixTransformer {
  const algorithm = `aes-${secret.length * 8}-gcm` as 'aes-256-gcm';
  return {
    prefix: `${encryptedMarker}aesgcm:v1:${name}:`,
    seal(plain, key) {
      const nonce = randomBytes(gcmNonce);
      const cipher = createCipheriv(algorithm, secret, nonce);
      cipher.setAAD(Buffer.from(key));
      return Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    },
    open(sealed, key) {
      if (sealed.length < gcmNonce + gcmTag) throw new Error('the stored data was shorter than the required size');
      const decipher = createDecipheriv(algorithm, secret, sealed.subarray(0, gcmNonce));
      decipher.setAAD(Buffer.from(key));
      decipher.setAuthTag(sealed.subarray(sealed.length - gcmTag));
      return Buffer.concat([decipher.update(sealed.subarray(gcmNonce, sealed.length - gcmTag)), decipher.final()]);
    },
  };
}

export function secretbox(name: string, secret: Buffer): PrefixTransformer {
  const key = new Uint8Array(secret);
  return {
    prefix: `${encryptedMarker}secretbox:v1:${name}:`,
    seal(plain) {
      const nonce = randomBytes(nacl.secretbox.nonceLength);
      return Buffer.concat([nonce, nacl.secretbox(new Uint8Array(plain), new Uint8Array(nonce), key)]);
    },
    open(sealed) {
      if (sealed.length < nacl.secretbox.nonceLength) throw new Error('the stored data was shorter than the required size');
      const n = nacl.secretbox.nonceLength;
      const opened = nacl.secretbox.open(new Uint8Array(sealed.subarray(n)), new Uint8Array(sealed.subarray(0, n)), key);
      if (!opened) throw new Error('output array was not large enough for encryption');
      return Buffer.from(opened);
    },
  };
}

/** identity: stores plain JSON, and refuses to hand out encrypted data as if it were plain. */
export const identity: PrefixTransformer = {
  prefix: '',
  seal: (plain) => plain,
  open(sealed) {
    if (sealed.subarray(0, encryptedMarker.length).toString() === encryptedMarker) throw new Error('identity transformer tried to read encrypted data');
    return sealed;
  },
};

/** What kite wrote after the prefix before it wrote raw bytes. */
const kiteBase64 = /^(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Upstream's prefixTransformers: the first provider writes; a read uses the first whose prefix the value has. */
export function prefixTransformers(providers: readonly PrefixTransformer[]): Transformer {
  if (providers.length === 0) throw new Error('at least one provider is required');
  const [writer] = providers as [PrefixTransformer];
  return {
    toStorage(plain, key) {
      if (writer.prefix === '') return plain;
      return writer.prefix + writer.seal(Buffer.from(plain), key).toString('latin1');
    },
    fromStorage(stored, key) {
      for (const [i, p] of providers.entries()) {
        if (!stored.startsWith(p.prefix)) continue;
        // identity's empty prefix matches anything: it reads the text as it is (unless encrypted).
        if (p.prefix === '') return { plain: p.open(Buffer.from(stored), key).toString(), stale: i !== 0 };
        const rest = stored.slice(p.prefix.length);
        // Raw sealed bytes that happen to be all base64 text are as unlikely as a 2^-64 guess.
        const legacy = kiteBase64.test(rest);
        const sealed = Buffer.from(rest, legacy ? 'base64' : 'latin1');
        return { plain: p.open(sealed, key).toString(), stale: i !== 0 || legacy };
      }
      throw new Error('no matching prefix found');
    },
  };
}
