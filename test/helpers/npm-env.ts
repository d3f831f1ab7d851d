/**
 * The environment for an `npm` a test runs: the caller's, without the `npm_*` variables a parent
 * `npm test` passes down: its command-line config would become the child npm's (`npm test -w
 * packages/core` hands down `npm_config_workspace`, and the child's install then looks for that
 * workspace). The registry, cache and user config stay; the child reads the rest of npm's config
 * files itself.
 */
export function npmEnv(): NodeJS.ProcessEnv {
  const keep = new Set(['npm_config_registry', 'npm_config_cache', 'npm_config_userconfig']);
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) || keep.has(key.toLowerCase())));
}
