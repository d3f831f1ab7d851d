import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { CHAT_PRICE } from '../accounts/pricing.js';
import { ApiError, badRequest } from './api-error.js';
import { callerOf, requireKey, type ApiContext } from './api-context.js';
import { jsonObjectBody } from './http-setup.js';
import { describeJson, isJsonObject } from './json-values.js';

/** `<provider>/<model_name>`: a provider as in job models, then a model name without whitespace (it may hold `/`). */
export const CHAT_MODEL = /^[a-z0-9][a-z0-9_.-]{0,63}\/[^\s/][^\s]{0,199}$/;
/** Most messages accepted in one request. */
export const MAX_CHAT_MESSAGES = 1000;

interface ChatMessage {
  role: string;
  content: string;
}

function validateChat(body: Record<string, unknown>): { model: string; messages: ChatMessage[] } {
  const { model, messages } = body;
  if (typeof model !== 'string' || !CHAT_MODEL.test(model)) {
    throw badRequest(
      `model must be a string of the shape <provider>/<model_name>, got ${typeof model === 'string' ? JSON.stringify(model.slice(0, 200)) : describeJson(model)}`,
    );
  }
  if (!Array.isArray(messages) || messages.length === 0 || messages.length > MAX_CHAT_MESSAGES) {
    throw badRequest(
      `messages must be an array of 1 to ${MAX_CHAT_MESSAGES} objects {role, content}, got ${Array.isArray(messages) ? `${messages.length} items` : describeJson(messages)}`,
    );
  }
  const checked = messages.map((message: unknown, i) => {
    if (!isJsonObject(message)) throw badRequest(`messages[${i}] must be an object {role, content}, got ${describeJson(message)}`);
    const { role, content } = message;
    if (typeof role !== 'string' || role.length === 0)
      throw badRequest(`messages[${i}].role must be a non-empty string, got ${describeJson(role)}`);
    if (typeof content !== 'string') throw badRequest(`messages[${i}].content must be a string, got ${describeJson(content)}`);
    return { role, content };
  });
  return { model, messages: checked };
}

const tokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

/**
 * `POST /v3/llm/chat/completions` (spec §4.4): a deterministic simulated completion in the OpenAI
 * shape. The reply is derived from a SHA-256 of the model and the messages, so the same request
 * always gets the same content; token counts are characters / 4. Charged {@link CHAT_PRICE}.
 */
export function registerChatRoutes(app: FastifyInstance, context: ApiContext): void {
  const onRequest = requireKey(context, { kind: 'inference' });
  app.post('/v3/llm/chat/completions', { onRequest }, async (request) => {
    const { model, messages } = validateChat(jsonObjectBody(request));
    const charge = await context.accounts.charge(callerOf(request), CHAT_PRICE);
    if (!charge.ok) throw new ApiError(402, charge.detail);
    const digest = createHash('sha256').update(model).update('\n').update(JSON.stringify(messages)).digest('hex');
    const last = messages[messages.length - 1] as ChatMessage;
    const quoted = last.content.length > 80 ? `${last.content.slice(0, 80)}…` : last.content;
    const content = `Simulated reply ${digest.slice(0, 8)} from ${model} to: ${JSON.stringify(quoted)}`;
    const promptTokens = messages.reduce((sum, m) => sum + 4 + tokens(m.content), 0);
    const completionTokens = tokens(content);
    return {
      id: `chatcmpl-${digest.slice(0, 24)}`,
      object: 'chat.completion',
      created: Math.floor(context.now().getTime() / 1000),
      model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    };
  });
}
