// placeholder: implemented by the store work (see idempotency-store.ts for the contract)
export {};
