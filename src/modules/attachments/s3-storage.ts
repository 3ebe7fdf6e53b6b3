// Attachment bytes in an S3-compatible object store (AWS S3, MinIO, Garage, Ceph, s3rver...), one object per
// checksum under `S3_PREFIX`. An object store writes an object whole or not at all, so a crash never leaves half an
// object; an upload is received into a local temporary file first (its checksum names the object), then sent with
// its exact length in one PutObject (single PutObject goes up to 5 GiB; LIMIT_ATTACHMENT_BYTES stops at 1 GiB).
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import type { StorageConfig } from '../../config.ts';
import { requireChecksum, type ByteRange, type Storage } from './storage.contract.ts';

type S3Config = Extract<StorageConfig, { kind: 's3' }>;

// The SDK is loaded on the first use of S3 storage, not with this module: it holds ~6 MB of the heap, which a server
// storing attachments on its own disk (the default) would carry for nothing.
type Sdk = typeof import('@aws-sdk/client-s3');
let loading: Promise<Sdk> | undefined;
const sdk = (): Promise<Sdk> => (loading ??= import('@aws-sdk/client-s3'));

export class S3Storage implements Storage {
  readonly tempDir: string;
  private readonly config: S3Config;
  private readonly bucket: string;
  private readonly prefix: string;
  private clientMade: Promise<S3Client> | undefined;

  constructor(config: S3Config, tempDir: string) {
    this.tempDir = tempDir;
    this.config = config;
    this.bucket = config.bucket;
    this.prefix = config.prefix;
  }

  /** The SDK's client for the configured store, made on first use. */
  client(): Promise<S3Client> {
    return (this.clientMade ??= sdk().then(({ S3Client }) => this.makeClient(S3Client)));
  }

  private makeClient(S3Client: Sdk['S3Client']): S3Client {
    const { config } = this;
    return new S3Client({
      region: config.region,
      forcePathStyle: config.forcePathStyle,
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      ...(config.accessKeyId && config.secretAccessKey
        ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } }
        : {}),
      // checksums only where the API requires them: S3-compatible stores do not all understand the SDK's default
      // trailing CRC32 in aws-chunked bodies (the SHA-256 of the content is its key anyway)
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  keyOf(checksum: string): string {
    return `${this.prefix}${requireChecksum(checksum)}`;
  }

  async has(checksum: string): Promise<boolean> {
    const { HeadObjectCommand, S3ServiceException } = await sdk();
    try {
      await (await this.client()).send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.keyOf(checksum) }));
      return true;
    } catch (error) {
      if (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404) return false;
      throw error;
    }
  }

  async put(checksum: string, tempPath: string, byteSize: number): Promise<void> {
    const { PutObjectCommand } = await sdk();
    await (await this.client()).send(new PutObjectCommand({
      Bucket: this.bucket,
      Key: this.keyOf(checksum),
      Body: createReadStream(tempPath),
      ContentLength: byteSize,
      ContentType: 'application/octet-stream',
    }));
    await rm(tempPath, { force: true });
  }

  async read(checksum: string, range?: ByteRange): Promise<Readable> {
    const { GetObjectCommand } = await sdk();
    const answer = await (await this.client()).send(new GetObjectCommand({
      Bucket: this.bucket,
      Key: this.keyOf(checksum),
      ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
    }));
    const body = answer.Body;
    if (body instanceof Readable) return body;
    if (body && 'transformToWebStream' in body) return Readable.fromWeb(body.transformToWebStream() as never);
    throw new Error('the object store answered without a body');
  }

  async delete(checksum: string): Promise<void> {
    const { DeleteObjectCommand } = await sdk();
    await (await this.client()).send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.keyOf(checksum) }));
  }

  async *list(): AsyncIterable<string> {
    const { ListObjectsV2Command } = await sdk();
    const client = await this.client();
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix, ...(token ? { ContinuationToken: token } : {}) }));
      for (const object of page.Contents ?? []) {
        const name = object.Key?.slice(this.prefix.length) ?? '';
        if (/^[0-9a-f]{64}$/.test(name)) yield name;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }
}
