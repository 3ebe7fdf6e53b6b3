// The webhook address guard (issue 12): which addresses a webhook may never reach, and the URL forms refused.
import { describe, expect, it } from 'vitest';
import { addressProblem, checkWebhookHost, parseWebhookUrl, WebhookUrlError } from '../../src/modules/webhooks/address-guard.ts';
import { sign } from '../../src/modules/webhooks/delivery.ts';
import { Webhook as Verifier } from 'standardwebhooks';

describe('addressProblem', () => {
  it('refuses loopback, private, link-local, metadata, unique-local, unspecified, multicast and mapped forms of them', () => {
    for (const address of [
      '127.0.0.1', '127.255.0.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.0.1', '100.64.1.1', '169.254.169.254', '0.0.0.0',
      '224.0.0.1', '255.255.255.255', '::1', '::', 'fd00:ec2::254', 'fc12::1', 'fe80::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1',
      '::ffff:a9fe:a9fe', '64:ff9b::10.0.0.1',
    ]) expect(addressProblem(address), address).toBeDefined();
  });

  it('lets public addresses through', () => {
    for (const address of ['203.0.113.10', '8.8.8.8', '172.32.0.1', '192.169.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8']) expect(addressProblem(address), address).toBeUndefined();
  });
});

describe('webhook URLs', () => {
  it('must be absolute http(s) without credentials', () => {
    for (const url of ['ftp://example.com/', 'javascript:alert(1)', '/relative', 'https://a:b@example.com/', 'https://user@example.com/']) {
      expect(() => parseWebhookUrl(url), url).toThrow(WebhookUrlError);
    }
    expect(parseWebhookUrl('https://hooks.example.com/x?y=1').toString()).toBe('https://hooks.example.com/x?y=1');
  });

  it('refuses a name that resolves to loopback, unless private addresses are allowed', async () => {
    await expect(checkWebhookHost(new URL('http://localhost:9/'), false)).rejects.toThrow(/resolves to .*loopback/);
    await expect(checkWebhookHost(new URL('http://[::1]/'), false)).rejects.toThrow(WebhookUrlError);
    await expect(checkWebhookHost(new URL('http://localhost:9/'), true)).resolves.toBeUndefined();
  });
});

describe('sign', () => {
  it('writes the Standard Webhooks signature the reference library verifies', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const timestamp = Math.floor(Date.now() / 1000);
    const body = '{"type":"note.created"}';
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': sign(secret, 'msg_1', timestamp, body) };
    expect(new Verifier(secret).verify(body, headers)).toEqual({ type: 'note.created' });
  });
});
