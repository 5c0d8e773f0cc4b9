/**
 * Validation of a webhook's clientConfig, shared by admission webhook
 * configurations and CRD conversion webhooks (apiserver
 * pkg/util/webhook/validation.go: ValidateWebhookURL, ValidateWebhookService,
 * ValidateCABundle), with upstream's messages.
 */
import { X509Certificate } from 'node:crypto';
import { type FieldError, GoLiteral, invalid, isDNS1123Subdomain, isValidPortNum, required } from '../../../api/validation.js';
import { parseGoUrl } from './go-url.js';

const form = '; desired format: https://host[/path]';

/** ValidateWebhookURL (forceHttps: only https). */
export function validateWebhookURL(path: string, url: string, forceHttps: boolean): FieldError[] {
  const errs: FieldError[] = [];
  let u;
  try {
    u = parseGoUrl(url);
  } catch (err) {
    return [required(path, `url must be a valid URL: ${(err as Error).message}${form}`)];
  }
  if (forceHttps && u.scheme !== 'https') errs.push(invalid(path, u.scheme, `'https' is the only allowed URL scheme${form}`));
  if (!u.host) errs.push(invalid(path, u.host, `host must be provided${form}`));
  if (u.user !== undefined) errs.push(invalid(path, u.user, 'user information is not permitted in the URL'));
  if (u.fragment) errs.push(invalid(path, u.fragment, 'fragments are not permitted in the URL'));
  if (u.rawQuery) errs.push(invalid(path, u.rawQuery, 'query parameters are not permitted in the URL'));
  return errs;
}

/** ValidateWebhookService (port: the defaulted port, 443 when unset). */
export function validateWebhookService(path: string, namespace: string | undefined, name: string | undefined, urlPath: string | undefined, port: number | undefined): FieldError[] {
  const errs: FieldError[] = [];
  if (!name) errs.push(required(`${path}.name`, 'service name is required'));
  if (!namespace) errs.push(required(`${path}.namespace`, 'service namespace is required'));
  const p = port ?? 443;
  const portErrs = isValidPortNum(p);
  if (portErrs.length) errs.push(invalid(`${path}.port`, p, `port is not valid: ${portErrs.join(', ')}`));
  if (urlPath === undefined || urlPath === null || urlPath === '/' || urlPath === '') return errs;
  if (urlPath === '//') {
    errs.push(invalid(`${path}.path`, urlPath, 'segment[0] may not be empty'));
    return errs;
  }
  if (!urlPath.startsWith('/')) errs.push(invalid(`${path}.path`, urlPath, "must start with a '/'"));
  let check = urlPath.slice(1);
  if (check.endsWith('/')) check = check.slice(0, -1);
  check.split('/').forEach((step, i) => {
    if (step.length === 0) {
      errs.push(invalid(`${path}.path`, urlPath, `segment[${i}] may not be empty`));
      return;
    }
    for (const f of isDNS1123Subdomain(step)) errs.push(invalid(`${path}.path`, urlPath, `segment[${i}]: ${f}`));
  });
  return errs;
}

/** The PEM certificates of a caBundle (base64 in JSON), or an error text as client-go's cert.ParseCertsPEM words it. */
export function parseCABundle(caBundle: string): { pems: string[] } | { error: string } {
  let text: string;
  try {
    text = Buffer.from(caBundle, 'base64').toString('latin1');
  } catch {
    return { error: 'data does not contain any valid RSA or ECDSA certificates' };
  }
  const pems = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  for (const pem of pems) {
    try {
      new X509Certificate(pem);
    } catch (err) {
      return { error: `x509: malformed certificate: ${(err as Error).message}` };
    }
  }
  if (pems.length === 0) return { error: 'data does not contain any valid RSA or ECDSA certificates' };
  return { pems };
}

/** ValidateCABundle. */
export function validateCABundle(path: string, caBundle: string): FieldError[] {
  const r = parseCABundle(caBundle);
  if ('pems' in r) return [];
  const bytes = Buffer.from(caBundle, 'base64');
  const shown = `[]byte{${[...bytes.subarray(0, 64)].map((b) => `0x${b.toString(16)}`).join(', ')}${bytes.length > 64 ? ', ...' : ''}}`;
  return [invalid(path, new GoLiteral(shown), r.error)];
}
