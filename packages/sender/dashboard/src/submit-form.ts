import { byId } from './dom.js';

/**
 * The submission the test-job form describes: a job of the chosen model whose `input.simulate`
 * (outcome, delay, error code) steers the simulated provider, sent to the receiver given.
 */
export function readSubmission(form: HTMLFormElement): Record<string, unknown> {
  const data = new FormData(form);
  const text = (name: string): string => String(data.get(name) ?? '').trim();
  const simulate: Record<string, unknown> = { outcome: text('outcome') || 'success' };
  const delay = text('delay_ms');
  if (delay !== '') simulate['delay_ms'] = Number(delay);
  if (simulate['outcome'] === 'fail' && text('error_code') !== '') simulate['error_code'] = text('error_code');
  const submission: Record<string, unknown> = {
    model: text('model') || 'audio/speech_to_text_async/openai',
    input: { file: 'https://example.test/dashboard.wav', simulate },
  };
  if (text('webhook_receiver') !== '') submission['webhook_receiver'] = text('webhook_receiver');
  return submission;
}

/**
 * Shows the error-code field only for a failing outcome, and starts the receiver field with
 * `receiver` (the sender's `dashboardReceiver`, from `<body data-receiver>`) when given.
 */
export function wireSubmitForm(receiver: string | undefined): void {
  const field = byId<HTMLFormElement>('submit-form').elements.namedItem('webhook_receiver');
  if (receiver !== undefined && field instanceof HTMLInputElement && field.value === '') field.value = receiver;
  const outcome = byId<HTMLSelectElement>('outcome');
  const errorCode = byId<HTMLElement>('error-code-field');
  const sync = (): void => {
    errorCode.hidden = outcome.value !== 'fail';
  };
  outcome.addEventListener('change', sync);
  sync();
}
