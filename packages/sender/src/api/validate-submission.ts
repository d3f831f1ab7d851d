import type { LosslessJsonValue } from '@jobhook/core';
import { stringifyJson } from '@jobhook/core/json';
import type { SimulatePlan } from '../jobs/job-record.js';
import { badRequest } from './api-error.js';
import { describeJson, isJsonObject, type LosslessObject } from './json-values.js';

/** A feature, subfeature or provider name: lower-case letters, digits, `_`, `.`, `-`, starting with a letter or digit. */
export const MODEL_SEGMENT = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
/** A provider model (optional 4th segment of `model`): also upper case, `:`, `@`, `+`. */
export const PROVIDER_MODEL = /^[A-Za-z0-9][A-Za-z0-9_.:@+-]{0,127}$/;
/** Longest `webhook_receiver` URL. */
export const MAX_RECEIVER_URL_LENGTH = 2048;
/** Longest `input.simulate.delay_ms`: 10 minutes. */
export const MAX_SIMULATE_DELAY_MS = 600_000;

/** A checked `POST /v3/universal-ai/async` body, members that carry client data as exact JSON text. */
export interface Submission {
  feature: string;
  subfeature: string;
  provider: string;
  model: string | null;
  inputJson: string;
  /** Checked for shape here; the SSRF check (DNS) is the route's. */
  webhookReceiver: string | null;
  userParametersJson: string | null;
  showOriginalResponse: boolean;
  simulate: SimulatePlan;
}

/** Parts of a `<feature>/<subfeature>/<provider>[/<provider model>]` model string. */
export function parseJobModel(model: unknown): Pick<Submission, 'feature' | 'subfeature' | 'provider' | 'model'> {
  const shape = 'must have the shape <feature>/<subfeature>/<provider> (optionally /<provider model>), segments of a-z 0-9 _ . -';
  if (typeof model !== 'string') throw badRequest(`model is required: a string that ${shape}; got ${describeJson(model)}`);
  const parts = model.split('/');
  if (parts.length < 3 || parts.length > 4) throw badRequest(`model ${shape}; got ${JSON.stringify(model.slice(0, 300))}`);
  const [feature, subfeature, provider, providerModel] = parts as [string, string, string, string | undefined];
  for (const [name, part] of [
    ['feature', feature],
    ['subfeature', subfeature],
    ['provider', provider],
  ] as const) {
    if (!MODEL_SEGMENT.test(part)) {
      throw badRequest(
        `model: the ${name} segment must be 1-64 characters of a-z 0-9 _ . - starting with a letter or digit; got ${JSON.stringify(part.slice(0, 100))}`,
      );
    }
  }
  if (providerModel !== undefined && !PROVIDER_MODEL.test(providerModel)) {
    throw badRequest(
      `model: the provider model segment must be 1-128 characters of A-Z a-z 0-9 _ . : @ + -; got ${JSON.stringify(providerModel.slice(0, 150))}`,
    );
  }
  return { feature, subfeature, provider, model: providerModel ?? null };
}

function parseSimulate(value: LosslessJsonValue | undefined): SimulatePlan {
  if (value === undefined || value === null) return {};
  if (!isJsonObject(value)) throw badRequest(`input.simulate must be an object, got ${describeJson(value)}`);
  const plan: SimulatePlan = {};
  for (const field of Object.keys(value)) {
    if (!['outcome', 'delay_ms', 'output', 'error_code'].includes(field)) {
      throw badRequest(`input.simulate.${field} is not a known member (outcome, delay_ms, output, error_code)`);
    }
  }
  const { outcome, delay_ms: delayMs, output, error_code: errorCode } = value;
  if (outcome !== undefined) {
    if (outcome !== 'success' && outcome !== 'fail')
      throw badRequest(`input.simulate.outcome must be "success" or "fail", got ${describeJson(outcome)}`);
    plan.outcome = outcome;
  }
  if (delayMs !== undefined) {
    if (typeof delayMs !== 'number' || !Number.isSafeInteger(delayMs) || delayMs < 0 || delayMs > MAX_SIMULATE_DELAY_MS) {
      throw badRequest(`input.simulate.delay_ms must be an integer from 0 to ${MAX_SIMULATE_DELAY_MS}, got ${describeJson(delayMs)}`);
    }
    plan.delayMs = delayMs;
  }
  if (output !== undefined) {
    if (!isJsonObject(output)) throw badRequest(`input.simulate.output must be an object, got ${describeJson(output)}`);
    if (plan.outcome === 'fail') throw badRequest('input.simulate.output goes with outcome "success" only');
    plan.outputJson = stringifyJson(output);
  }
  if (errorCode !== undefined) {
    if (typeof errorCode !== 'string' || errorCode.length === 0 || errorCode.length > 100) {
      throw badRequest(`input.simulate.error_code must be a string of 1 to 100 characters, got ${describeJson(errorCode)}`);
    }
    if (plan.outcome !== 'fail') throw badRequest('input.simulate.error_code goes with outcome "fail" only');
    plan.errorCode = errorCode;
  }
  return plan;
}

function parseInput(input: LosslessJsonValue | undefined): { inputJson: string; simulate: SimulatePlan } {
  if (input === undefined) throw badRequest('input is required: an object');
  if (!isJsonObject(input)) throw badRequest(`input must be an object, got ${describeJson(input)}`);
  const { file, language } = input;
  if (file !== undefined && (typeof file !== 'string' || file.length === 0 || file.length > 2048)) {
    throw badRequest(`input.file must be a string of 1 to 2048 characters (a file UUID or a URL), got ${describeJson(file)}`);
  }
  if (language !== undefined && (typeof language !== 'string' || language.length === 0 || language.length > 64)) {
    throw badRequest(`input.language must be a string of 1 to 64 characters, got ${describeJson(language)}`);
  }
  return { inputJson: stringifyJson(input), simulate: parseSimulate(input.simulate) };
}

/**
 * Checks a submission body (spec §4.2) and names the first field at fault in a 400. Decisions where
 * the spec is silent: `input.file` optional (a string when given); top-level fields the spec does
 * not list are accepted and ignored; `null` for an optional field means "not given".
 *
 * @throws ApiError 400
 */
export function validateSubmission(body: LosslessObject): Submission {
  const model = parseJobModel(body.model);
  const { inputJson, simulate } = parseInput(body.input);

  const receiver = body.webhook_receiver ?? null;
  if (receiver !== null) {
    if (typeof receiver !== 'string' || receiver.length === 0 || receiver.length > MAX_RECEIVER_URL_LENGTH) {
      throw badRequest(
        `webhook_receiver must be a URL string of at most ${MAX_RECEIVER_URL_LENGTH} characters, got ${describeJson(receiver)}`,
      );
    }
  }
  const params = body.user_webhook_parameters ?? null;
  if (params !== null && !isJsonObject(params)) {
    throw badRequest(`user_webhook_parameters must be an object, got ${describeJson(params)}`);
  }
  const show = body.show_original_response ?? null;
  if (show !== null && typeof show !== 'boolean') {
    throw badRequest(`show_original_response must be a boolean, got ${describeJson(show)}`);
  }
  return {
    ...model,
    inputJson,
    webhookReceiver: receiver as string | null,
    userParametersJson: params === null ? null : stringifyJson(params),
    showOriginalResponse: show === true,
    simulate,
  };
}
