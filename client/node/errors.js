// Errors of the Node client: a failed call as a TaxelError (code, name, the server's message and the
// google.rpc.BadRequest field violations from the status details). Re-exported by taxel.js.
'use strict';

const grpc = require('@grpc/grpc-js');
const protobuf = require('protobufjs');

/** google.rpc.Status and google.rpc.BadRequest (the fields Taxel uses), for decoding status details. */
const RPC_ROOT = protobuf.Root.fromJSON({
  nested: {
    google: {
      nested: {
        protobuf: { nested: { Any: { fields: { type_url: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } } } } },
        rpc: {
          nested: {
            Status: {
              fields: {
                code: { type: 'int32', id: 1 },
                message: { type: 'string', id: 2 },
                details: { rule: 'repeated', type: 'google.protobuf.Any', id: 3 },
              },
            },
            BadRequest: {
              fields: { field_violations: { rule: 'repeated', type: 'FieldViolation', id: 1 } },
              nested: {
                FieldViolation: {
                  fields: { field: { type: 'string', id: 1 }, description: { type: 'string', id: 2 } },
                },
              },
            },
          },
        },
      },
    },
  },
});
const RpcStatus = RPC_ROOT.lookupType('google.rpc.Status');
const RpcBadRequest = RPC_ROOT.lookupType('google.rpc.BadRequest');
const BAD_REQUEST_URL = 'type.googleapis.com/google.rpc.BadRequest';

/** gRPC status code number -> name ("INVALID_ARGUMENT"). */
const STATUS_NAMES = Object.freeze(
  Object.fromEntries(Object.entries(grpc.status).filter(([, v]) => typeof v === 'number').map(([k, v]) => [v, k])));

/**
 * Decodes the `grpc-status-details-bin` trailer (a google.rpc.Status).
 * @param {Buffer} bytes
 * @returns {{code: number, message: string, fieldViolations: {field: string, description: string}[],
 *   details: {typeUrl: string, value: Buffer}[]}}
 */
function decodeStatusDetails(bytes) {
  const status = RpcStatus.decode(bytes);
  const fieldViolations = [];
  const details = [];
  for (const any of status.details) {
    details.push({ typeUrl: any.type_url, value: Buffer.from(any.value) });
    if (any.type_url === BAD_REQUEST_URL) {
      for (const v of RpcBadRequest.decode(any.value).field_violations) {
        fieldViolations.push({ field: v.field, description: v.description });
      }
    }
  }
  return { code: status.code, message: status.message, fieldViolations, details };
}

/**
 * A failed call. `code` is the gRPC status code number (compare with `grpc.status.*`), `codeName`
 * its name, `details` the server's message (which names the field: "poses: expected shape ...").
 * `fieldViolations` comes from the google.rpc.BadRequest in the status details (INVALID_ARGUMENT,
 * OUT_OF_RANGE); empty otherwise.
 */
class TaxelError extends Error {
  /**
   * @param {number} code
   * @param {string} details
   * @param {{field: string, description: string}[]} [fieldViolations]
   * @param {grpc.Metadata} [metadata] the call's trailers
   */
  constructor(code, details, fieldViolations = [], metadata = undefined) {
    const codeName = STATUS_NAMES[code] || `CODE_${code}`;
    super(`${codeName}: ${details}`);
    this.name = 'TaxelError';
    this.code = code;
    this.codeName = codeName;
    this.details = details;
    this.fieldViolations = fieldViolations;
    this.metadata = metadata;
  }
}

/** A grpc-js ServiceError (or any error) as a TaxelError. */
function toTaxelError(err) {
  if (err instanceof TaxelError) return err;
  if (err == null || typeof err.code !== 'number') return err;
  let fieldViolations = [];
  const raw = err.metadata && err.metadata.get('grpc-status-details-bin');
  if (raw && raw.length > 0) {
    try {
      fieldViolations = decodeStatusDetails(raw[0]).fieldViolations;
    } catch (_) {
      // Malformed details: keep the code and message.
    }
  }
  let message = err.details ?? err.message;
  // The transport's refusal of a message over a size limit names no flag: say which ones set it.
  if (err.code === grpc.status.RESOURCE_EXHAUSTED && /message larger than max/.test(message)) {
    message += "; the limits are the server's --max_message_bytes and the client's grpc.max_*_message_length "
      + '(steps and reads are split by envs on their own; a mesh must fit in one message)';
  }
  const e = new TaxelError(err.code, message, fieldViolations, err.metadata);
  e.cause = err;
  return e;
}

module.exports = { TaxelError, toTaxelError, decodeStatusDetails, STATUS_NAMES };
