/**
 * The wire profile: what the interface leaves "not shown" about authentication, as settings
 * (contract section 7: the choices of sections 1 to 4 are the default of a configuration, not
 * constants). The signing inputs (fields and order with a separator, or a template), the
 * timestamp unit, the signature encoding, the nonce format, the header names, the WebSocket
 * auth frame's field names and signing input, and the scope names.
 *
 * `DEFAULT_WIRE_PROFILE` is the contract's SVC1 byte for byte. The client signs with a profile
 * and the emulator verifies with one, so both sides can be run on a profile that is not the
 * default. A profile is checked strictly: `parseWireProfile` refuses an unknown key or a bad
 * value with every problem and its path (`WIRE_PROFILE_INVALID`, `details.issues`).
 */
import { z } from 'zod';
import { PaperbotError } from '../core/errors.ts';
import { isValidScope, SIGNATURE_VERSION, WEBSOCKET_SIGNATURE_PREFIX } from './canonical.ts';

/** The protocol's four scopes, by which the profile names the venue's own. */
export const PROTOCOL_SCOPES = [
  'account:read',
  'orders:read',
  'fills:read',
  'orders:write',
] as const;
export type ProtocolScope = (typeof PROTOCOL_SCOPES)[number];

/** Fields a request signing input can hold. */
export const REQUEST_INPUT_FIELDS = [
  'version',
  'method',
  'target',
  'path',
  'query',
  'key_id',
  'timestamp',
  'nonce',
  'body_sha256',
] as const;
export type RequestInputField = (typeof REQUEST_INPUT_FIELDS)[number];

/** Fields a WebSocket auth signing input can hold. */
export const WEBSOCKET_INPUT_FIELDS = [
  'prefix',
  'version',
  'challenge',
  'key_id',
  'timestamp',
  'nonce',
  'scopes',
  'last_sequence',
] as const;
export type WebSocketInputField = (typeof WEBSOCKET_INPUT_FIELDS)[number];

/** Without these a signature would not bind the request (or the connection) it was made for. */
const REQUIRED_REQUEST_FIELDS: readonly RequestInputField[] = ['method', 'timestamp', 'nonce'];
const REQUIRED_WEBSOCKET_FIELDS: readonly WebSocketInputField[] = [
  'challenge',
  'timestamp',
  'nonce',
];

export const TIMESTAMP_UNITS = ['ms', 's', 'rfc3339'] as const;
export type TimestampUnit = (typeof TIMESTAMP_UNITS)[number];

export const SIGNATURE_ENCODINGS = ['base64', 'base64url', 'hex'] as const;
export type SignatureEncoding = (typeof SIGNATURE_ENCODINGS)[number];

export const NONCE_FORMATS = ['base64url', 'alphanumeric', 'hex', 'uuid'] as const;
export type NonceFormat = (typeof NONCE_FORMATS)[number];

/** One piece of a signing input: a field's value or literal text. */
export type InputPart<Field extends string> =
  | { readonly kind: 'field'; readonly field: Field }
  | { readonly kind: 'text'; readonly text: string };

export interface WireProfile {
  /** The value of the version header, and of the `version` input field. */
  readonly signatureVersion: string;
  readonly timestamp: TimestampUnit;
  readonly signatureEncoding: SignatureEncoding;
  readonly nonce: { readonly format: NonceFormat; readonly length: number };
  /** The request signing input, as parts joined in order. */
  readonly requestInput: readonly InputPart<RequestInputField>[];
  readonly headers: {
    readonly apiKey: string;
    readonly timestamp: string;
    readonly nonce: string;
    readonly signature: string;
    /** null: no version header is sent or expected. */
    readonly signatureVersion: string | null;
  };
  readonly webSocketAuth: {
    /** The `prefix` input field. */
    readonly prefix: string;
    /** Wire names of the auth frame's fields (`op` and `request_id` are the protocol's). */
    readonly fields: {
      readonly keyId: string;
      readonly timestamp: string;
      readonly nonce: string;
      readonly scopes: string;
      readonly lastSequence: string;
      readonly signature: string;
    };
    readonly input: readonly InputPart<WebSocketInputField>[];
    /** Joins the scopes in the `scopes` input field. */
    readonly scopeSeparator: string;
  };
  /** The venue's name of each protocol scope. */
  readonly scopes: Readonly<Record<ProtocolScope, string>>;
  /** True for the contract's SVC1 exactly: the signing code takes its fast path. */
  readonly isDefault: boolean;
}

// ------------------------------------------------------------------------------ the schema

// The default's settings as JSON, to tell a profile that is the default in all but name; set when
// the default itself is made (the first profile this module resolves).
let defaultSettings: string | null = null;

const HeaderName = z
  .string()
  .regex(
    /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,64}$/,
    'must be an HTTP header name (a token of 1 to 64 characters)',
  );
const FrameFieldName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/, 'must be 1 to 64 letters, digits, "_", "-" or "."');
const Separator = z.string().min(1, 'must not be empty').max(8, 'must be at most 8 characters');
const ScopeName = z
  .string()
  .regex(/^[\x21-\x2b\x2d-\x7e]{1,64}$/, 'must be 1 to 64 visible ASCII characters other than ","');
const VisibleText = z
  .string()
  .regex(/^[\x21-\x7e]{1,64}$/, 'must be 1 to 64 visible ASCII characters');

/**
 * A signing input: `fields` joined by `separator`, or a `template`. Checked on its own, so its
 * problems are reported together with those of every other part of the profile.
 */
function inputSchema<const Fields extends readonly [string, ...string[]]>(
  known: Fields,
  defaults: readonly Fields[number][],
  required: readonly Fields[number][],
) {
  return z
    .strictObject({
      fields: z
        .array(z.enum(known, { error: `must be one of: ${known.join(', ')}` }))
        .min(1, 'list at least one field')
        .max(16, 'list at most 16 fields')
        .optional(),
      separator: Separator.optional(),
      template: z
        .string()
        .min(1, 'must not be empty')
        .max(1024, 'must be at most 1024 characters')
        .optional(),
    })
    .superRefine((input, context) => {
      if (input.template !== undefined) {
        if (input.fields !== undefined || input.separator !== undefined) {
          context.addIssue({
            code: 'custom',
            path: ['template'],
            message: 'set either template, or fields and separator, not both',
          });
          return;
        }
        const parsed = parseTemplate(input.template, known);
        if (typeof parsed === 'string') {
          context.addIssue({ code: 'custom', path: ['template'], message: parsed });
          return;
        }
        const present = new Set(
          parsed.flatMap((part) => (part.kind === 'field' ? [part.field] : [])),
        );
        const missing = required.filter((field) => !present.has(field));
        if (missing.length > 0) {
          context.addIssue({
            code: 'custom',
            path: ['template'],
            message: `must hold {${missing.join('}, {')}} so the signature binds them`,
          });
        }
        return;
      }
      const fields = input.fields ?? defaults;
      const missing = required.filter((field) => !fields.includes(field));
      if (missing.length > 0) {
        context.addIssue({
          code: 'custom',
          path: ['fields'],
          message: `must list ${missing.join(', ')} so the signature binds them`,
        });
      }
    })
    .transform((input): ParsedInput =>
      input.template !== undefined
        ? { template: input.template }
        : { fields: input.fields ?? [...defaults], separator: input.separator ?? '\n' },
    );
}

type ParsedInput = { fields: readonly string[]; separator: string } | { template: string };

const RequestInput = inputSchema(
  REQUEST_INPUT_FIELDS,
  ['version', 'method', 'target', 'key_id', 'timestamp', 'nonce', 'body_sha256'],
  REQUIRED_REQUEST_FIELDS,
);
const WebSocketInput = inputSchema(
  WEBSOCKET_INPUT_FIELDS,
  ['prefix', 'challenge', 'key_id', 'timestamp', 'nonce', 'scopes', 'last_sequence'],
  REQUIRED_WEBSOCKET_FIELDS,
);

export const WireProfileSchema = z
  .strictObject({
    signature_version: VisibleText.default(SIGNATURE_VERSION),
    timestamp: z
      .enum(TIMESTAMP_UNITS, { error: `must be one of: ${TIMESTAMP_UNITS.join(', ')}` })
      .default('ms'),
    signature_encoding: z
      .enum(SIGNATURE_ENCODINGS, { error: `must be one of: ${SIGNATURE_ENCODINGS.join(', ')}` })
      .default('base64'),
    nonce: z
      .strictObject({
        format: z
          .enum(NONCE_FORMATS, { error: `must be one of: ${NONCE_FORMATS.join(', ')}` })
          .default('base64url'),
        /** Ignored for `uuid` (always 36). */
        length: z.int().min(16).max(64).default(32),
      })
      .prefault({}),
    request_input: RequestInput.prefault({}),
    headers: z
      .strictObject({
        api_key: HeaderName.default('SVC-API-KEY'),
        timestamp: HeaderName.default('SVC-TIMESTAMP'),
        nonce: HeaderName.default('SVC-NONCE'),
        signature: HeaderName.default('SVC-SIGNATURE'),
        signature_version: HeaderName.nullable().default('SVC-SIGNATURE-VERSION'),
      })
      .superRefine((headers, context) => {
        checkDistinct(
          Object.entries(headers).flatMap(([key, name]) =>
            name === null ? [] : [[key, name.toLowerCase()] as const],
          ),
          context,
          'header name',
        );
      })
      .prefault({}),
    websocket_auth: z
      .strictObject({
        prefix: VisibleText.default(WEBSOCKET_SIGNATURE_PREFIX),
        fields: z
          .strictObject({
            key_id: FrameFieldName.default('key_id'),
            timestamp: FrameFieldName.default('timestamp'),
            nonce: FrameFieldName.default('nonce'),
            scopes: FrameFieldName.default('scopes'),
            last_sequence: FrameFieldName.default('last_sequence'),
            signature: FrameFieldName.default('signature'),
          })
          .superRefine((fields, context) => {
            checkDistinct(Object.entries(fields), context, 'field name', ['op', 'request_id']);
          })
          .prefault({}),
        input: WebSocketInput.prefault({}),
        scope_separator: Separator.default(','),
      })
      .prefault({}),
    scopes: z
      .strictObject({
        'account:read': ScopeName.default('account:read'),
        'orders:read': ScopeName.default('orders:read'),
        'fills:read': ScopeName.default('fills:read'),
        'orders:write': ScopeName.default('orders:write'),
      })
      .superRefine((scopes, context) => {
        checkDistinct(Object.entries(scopes), context, 'scope name');
      })
      .prefault({}),
  })
  .superRefine((profile, context) => {
    // Across sections: a scope name must survive being joined for the WebSocket signing input.
    const separator = profile.websocket_auth.scope_separator;
    for (const [key, name] of Object.entries(profile.scopes)) {
      if (name.includes(separator) || !isValidScope(name)) {
        context.addIssue({
          code: 'custom',
          path: ['scopes', key],
          message: `must not contain "," or the scope separator (${JSON.stringify(separator)})`,
        });
      }
    }
  });
export type WireProfileInput = z.input<typeof WireProfileSchema>;
type ParsedProfile = z.output<typeof WireProfileSchema>;

function checkDistinct(
  entries: readonly (readonly [string, string])[],
  context: z.core.$RefinementCtx<unknown>,
  what: string,
  reserved: readonly string[] = [],
): void {
  const seen = new Map<string, string>();
  for (const [key, name] of entries) {
    if (reserved.includes(name)) {
      context.addIssue({
        code: 'custom',
        path: [key],
        message: `"${name}" is the protocol's own field of the frame`,
      });
    }
    const earlier = seen.get(name);
    if (earlier !== undefined) {
      context.addIssue({
        code: 'custom',
        path: [key],
        message: `the same ${what} as ${earlier}`,
      });
    }
    seen.set(name, key);
  }
}

/**
 * A template's parts: `{field}` places a field, `{{` and `}}` a literal brace, everything else is
 * literal text (`\n` in YAML double quotes is a line feed). A problem is returned as a sentence.
 */
export function parseTemplate<Field extends string>(
  template: string,
  known: readonly Field[],
): InputPart<Field>[] | string {
  const parts: InputPart<Field>[] = [];
  let text = '';
  for (let index = 0; index < template.length; index++) {
    const character = template[index] as string;
    const next = template[index + 1];
    if ((character === '{' && next === '{') || (character === '}' && next === '}')) {
      text += character;
      index += 1;
      continue;
    }
    if (character === '}') return `has a "}" without its "{" at character ${index + 1}`;
    if (character !== '{') {
      text += character;
      continue;
    }
    const end = template.indexOf('}', index);
    if (end < 0) return `has a "{" without its "}" at character ${index + 1}`;
    const name = template.slice(index + 1, end);
    if (!(known as readonly string[]).includes(name)) {
      return `names an unknown field {${name}}; the fields are: ${known.join(', ')}`;
    }
    if (text !== '') parts.push({ kind: 'text', text });
    text = '';
    parts.push({ kind: 'field', field: name as Field });
    index = end;
  }
  if (text !== '') parts.push({ kind: 'text', text });
  return parts;
}

function partsOf<Field extends string>(
  input: ParsedInput,
  known: readonly Field[],
): InputPart<Field>[] {
  if ('template' in input) {
    const parsed = parseTemplate(input.template, known);
    // Checked by the schema's refinement already.
    if (typeof parsed === 'string') throw new Error(parsed);
    return parsed;
  }
  const parts: InputPart<Field>[] = [];
  input.fields.forEach((field, index) => {
    if (index > 0) parts.push({ kind: 'text', text: input.separator });
    parts.push({ kind: 'field', field: field as Field });
  });
  return parts;
}

function profileOf(parsed: ParsedProfile): WireProfile {
  const profile: Omit<WireProfile, 'isDefault'> = {
    signatureVersion: parsed.signature_version,
    timestamp: parsed.timestamp,
    signatureEncoding: parsed.signature_encoding,
    nonce: { format: parsed.nonce.format, length: parsed.nonce.length },
    requestInput: partsOf(parsed.request_input, REQUEST_INPUT_FIELDS),
    headers: {
      apiKey: parsed.headers.api_key,
      timestamp: parsed.headers.timestamp,
      nonce: parsed.headers.nonce,
      signature: parsed.headers.signature,
      signatureVersion: parsed.headers.signature_version,
    },
    webSocketAuth: {
      prefix: parsed.websocket_auth.prefix,
      fields: {
        keyId: parsed.websocket_auth.fields.key_id,
        timestamp: parsed.websocket_auth.fields.timestamp,
        nonce: parsed.websocket_auth.fields.nonce,
        scopes: parsed.websocket_auth.fields.scopes,
        lastSequence: parsed.websocket_auth.fields.last_sequence,
        signature: parsed.websocket_auth.fields.signature,
      },
      input: partsOf(parsed.websocket_auth.input, WEBSOCKET_INPUT_FIELDS),
      scopeSeparator: parsed.websocket_auth.scope_separator,
    },
    scopes: { ...parsed.scopes },
  };
  return deepFreeze({ ...profile, isDefault: sameAsDefault(profile) });
}

/** One problem of a profile: where (`headers.api_key`) and what. */
export interface WireProfileIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/**
 * Checks a profile (the `venue.wire` section, or a profile file's content) and resolves its
 * defaults. Throws `WIRE_PROFILE_INVALID` with every problem and its path in
 * `details.issues`; `source` names where the profile came from in the message.
 */
export function parseWireProfile(input: unknown, source = 'wire profile'): WireProfile {
  const parsed = WireProfileSchema.safeParse(input ?? {});
  if (!parsed.success) {
    const issues: WireProfileIssue[] = parsed.error.issues.map((issue) => ({
      path: issue.path,
      message: issue.message,
    }));
    throw new PaperbotError(
      'WIRE_PROFILE_INVALID',
      `invalid ${source}: ${issues
        .map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`)
        .join('; ')}`,
      { details: { issues } },
    );
  }
  return profileOf(parsed.data);
}

/** The contract's SVC1, byte for byte. */
export const DEFAULT_WIRE_PROFILE: WireProfile = profileOf(WireProfileSchema.parse({}));

function sameAsDefault(profile: Omit<WireProfile, 'isDefault'>): boolean {
  const settings = JSON.stringify(profile);
  defaultSettings ??= settings;
  return settings === defaultSettings;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** The protocol scope a venue scope name stands for, or null when the profile does not name it. */
export function protocolScopeOf(profile: WireProfile, venueScope: string): ProtocolScope | null {
  for (const scope of PROTOCOL_SCOPES) if (profile.scopes[scope] === venueScope) return scope;
  return null;
}

/**
 * The settings to check when a venue refuses a signature: each, with its value in this profile.
 * Shown by the client's INVALID_SIGNATURE error and by `paperbot doctor`; holds no secret.
 */
export function wireSettingsToCheck(profile: WireProfile): string[] {
  return [
    `venue.wire.request_input (${describeParts(profile.requestInput)})`,
    `venue.wire.timestamp (${profile.timestamp})`,
    `venue.wire.signature_encoding (${profile.signatureEncoding})`,
    `venue.wire.nonce (${profile.nonce.format}${profile.nonce.format === 'uuid' ? '' : `, ${profile.nonce.length}`})`,
    `venue.wire.headers (${[
      profile.headers.apiKey,
      profile.headers.timestamp,
      profile.headers.nonce,
      profile.headers.signature,
      profile.headers.signatureVersion ?? '(no version header)',
    ].join(', ')})`,
    `venue.wire.signature_version (${profile.signatureVersion})`,
  ];
}

/** Parts as a template (`{version}\n{method}...`), with line feeds and tabs written as escapes. */
export function describeParts(parts: readonly InputPart<string>[]): string {
  return parts
    .map((part) =>
      part.kind === 'field'
        ? `{${part.field}}`
        : part.text
            .replace(/\\/g, '\\\\')
            .replace(/\n/g, '\\n')
            .replace(/\t/g, '\\t')
            .replace(/\r/g, '\\r'),
    )
    .join('');
}
