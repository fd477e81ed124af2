/**
 * Amazon's check of a SigV4-signed request, for the fake Bedrock (bedrock.ts): the key must be one
 * the fake knows, the scope its region and service, the date within 15 minutes, and the signature
 * the one AWS computes again from the request as it arrived (with @smithy/signature-v4, the signer
 * the AWS SDKs use). Refusals carry Bedrock's real status, error type and text.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { IncomingHttpHeaders } from 'node:http';

export interface AwsRefusal {
  status: number;
  /** `x-amzn-ErrorType`, as Bedrock names its exceptions. */
  errorType: string;
  message: string;
}

export interface SigV4Check {
  method: string;
  /** The request's path and query as they arrived (still percent-encoded). */
  rawUrl: string;
  headers: IncomingHttpHeaders;
  /** The body's bytes as they arrived. */
  body: string;
}

const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

const MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

/** Refuses a request whose signature AWS would refuse; undefined when it is valid. */
export async function sigV4Refusal(check: SigV4Check, keys: Record<string, string>, region: string, service: string, now = new Date()): Promise<AwsRefusal | undefined> {
  const authorization = single(check.headers.authorization);
  if (!authorization) return { status: 403, errorType: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const parsed = AUTHORIZATION.exec(authorization);
  if (!parsed) return { status: 403, errorType: 'IncompleteSignatureException', message: `Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters. Authorization=${authorization}` };
  const [, accessKeyId, day, scopeRegion, scopeService, signedHeaderList, signature] = parsed;
  const secretAccessKey = Object.hasOwn(keys, accessKeyId) ? keys[accessKeyId] : undefined;
  if (!secretAccessKey) return { status: 403, errorType: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  if (scopeService !== service || scopeRegion !== region) {
    return { status: 403, errorType: 'InvalidSignatureException', message: `Credential should be scoped to correct service: '${service}' and region '${region}'.` };
  }
  const amzDate = single(check.headers['x-amz-date']);
  const signingDate = amzDate ? parseAmzDate(amzDate) : undefined;
  if (!signingDate || amzDate!.slice(0, 8) !== day) return { status: 403, errorType: 'IncompleteSignatureException', message: 'Authorization header requires existence of either a \'X-Amz-Date\' or a \'Date\' header.' };
  if (Math.abs(now.getTime() - signingDate.getTime()) > 15 * 60_000) {
    return { status: 403, errorType: 'InvalidSignatureException', message: `Signature expired: ${amzDate} is now earlier than the allowed window.` };
  }

  const signed = signedHeaderList.split(';');
  const headers: Record<string, string> = {};
  for (const name of signed) {
    const value = single(check.headers[name]);
    if (value === undefined) return { status: 403, errorType: 'InvalidSignatureException', message: MISMATCH };
    headers[name] = value;
  }
  const url = new URL(check.rawUrl, 'http://placeholder');
  const query: Record<string, string[]> = {};
  for (const key of new Set(url.searchParams.keys())) query[key] = url.searchParams.getAll(key);
  const request = new HttpRequest({ method: check.method, protocol: 'https:', hostname: headers.host, path: url.pathname, query, headers, body: check.body });
  const signer = new SignatureV4({ service, region, credentials: { accessKeyId, secretAccessKey }, sha256: Sha256 });
  // Only the headers the client signed are given, so the signer signs exactly those.
  const expected = await signer.sign(request, { signingDate, signableHeaders: new Set(signed) });
  const expectedSignature = /Signature=([0-9a-f]{64})/.exec(expected.headers.authorization ?? '')?.[1];
  const expectedSigned = /SignedHeaders=([^,]+)/.exec(expected.headers.authorization ?? '')?.[1];
  if (expectedSignature !== signature || expectedSigned !== signedHeaderList) return { status: 403, errorType: 'InvalidSignatureException', message: MISMATCH };
  return undefined;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** `20261128T041500Z` → the Date. */
function parseAmzDate(value: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second] = match.map(Number);
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second));
}
