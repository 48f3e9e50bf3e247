/** The names of `P`'s methods that return a promise: what a wrapper of the port forwards. */
export type AsyncMethodOf<P> = {
  [K in keyof P]-?: P[K] extends (...args: never[]) => Promise<unknown> ? K : never;
}[keyof P];

/**
 * Every method name of port `P`, checked at compile time: a list missing one, or naming a property
 * that is not an async method of `P`, does not type-check. Declare a port's list once, next to the
 * port (`lambdas/ports.ts`), and have every wrapper forward through it (`forwardPort`), so that a
 * method added to the port is one edit.
 * @returns the names, as given
 */
export function portMethods<P>() {
  return <const N extends readonly AsyncMethodOf<P>[]>(
    ...names: [Exclude<AsyncMethodOf<P>, N[number]>] extends [never]
      ? N
      : [`missing: ${Extract<Exclude<AsyncMethodOf<P>, N[number]>, string>}`]
  ): N => names as N;
}

/** The arguments of `P`'s method `K` (a union of tuples for a union of names). */
export type ArgsOf<P, K extends keyof P> = K extends unknown
  ? Parameters<Extract<P[K], (...args: never[]) => unknown>>
  : never;

/**
 * Runs a forwarded call: `call()` is the target's method with the caller's arguments; a wrapper may
 * act before it (check a permission, fetch files) and after it (release them). Generic in what
 * `call` resolves to, so it can only pass that on.
 */
export type AroundCall<P, K extends AsyncMethodOf<P>> = <T>(
  method: K,
  args: ArgsOf<P, K>,
  call: () => Promise<T>,
) => Promise<T>;

/**
 * A wrapper of port `P` that forwards each of `methods` to the target `target()` resolves to (built
 * lazily, shared, or the same each call), through `around` when given.
 * @param methods the port's method names (`portMethods`)
 * @param target the wrapped implementation, asked at each call (so it may be built at the first)
 * @param around runs each call (`AroundCall`); the call itself when absent
 * @returns an object with exactly those methods, each returning the target's promise
 * @throws nothing itself: a call rejects with what `target`, `around` or the method rejects with
 */
export function forwardPort<P, K extends AsyncMethodOf<P>>(
  methods: readonly K[],
  target: () => P | Promise<P>,
  around?: AroundCall<P, K>,
): Pick<P, K> {
  const wrapper = Object.create(null) as Record<K, unknown>;
  for (const method of methods) {
    const call = async (args: unknown[]) => {
      const port = await target();
      return (port[method] as (...a: unknown[]) => Promise<unknown>).apply(port, args);
    };
    wrapper[method] = around
      ? // async: what `around` throws before its call rejects, as the port's promise would.
        async (...args: unknown[]) => around(method, args as ArgsOf<P, K>, () => call(args))
      : (...args: unknown[]) => call(args);
  }
  return wrapper as unknown as Pick<P, K>;
}

/**
 * A port implementation built at its first call and kept (a failed build is tried again at the next call).
 * @param methods the port's method names (`portMethods`)
 * @param build makes the implementation: the place to `import()` what only it needs
 */
export function lazyPort<P, K extends AsyncMethodOf<P>>(methods: readonly K[], build: () => Promise<P>): Pick<P, K> {
  let built: Promise<P> | undefined;
  const get = () => {
    built ??= build();
    built.catch(() => (built = undefined));
    return built;
  };
  return forwardPort(methods, get);
}
