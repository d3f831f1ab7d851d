/**
 * What a simulated job costs, by feature, as the decimal string the service reports in `cost`.
 * Charged at submission; features not listed cost {@link DEFAULT_JOB_PRICE}.
 */
export const JOB_PRICES: Readonly<Record<string, string>> = Object.freeze({
  ocr: '0.03',
  audio: '0.05',
  image: '0.02',
  text: '0.01',
  translation: '0.01',
  video: '0.10',
});

/** Price of a job whose feature is not in {@link JOB_PRICES}. */
export const DEFAULT_JOB_PRICE = '0.01';

/** Price of one `POST /v3/llm/chat/completions`. */
export const CHAT_PRICE = '0.002';

/** The price of a job of `feature`. */
export function jobPrice(feature: string): string {
  return Object.hasOwn(JOB_PRICES, feature) ? (JOB_PRICES[feature] as string) : DEFAULT_JOB_PRICE;
}
