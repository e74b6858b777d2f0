import crypto from 'node:crypto'

/** Encrypts secrets at rest with AES-256-GCM under the master key; the format is `v1.<base64url(iv|tag|ciphertext)>`. */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the master key must be 32 bytes')
  }

  seal(plain: string): string {
    const iv = crypto.randomBytes(12)
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv)
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`
  }

  open(sealed: string): string {
    if (!sealed.startsWith('v1.')) throw new Error('unknown sealed-secret format')
    const raw = Buffer.from(sealed.slice(3), 'base64url')
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12))
    decipher.setAuthTag(raw.subarray(12, 28))
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')
  }
}
