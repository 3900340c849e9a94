/**
 * Per-app state: registries, caches and counters a module keeps for one app. A module
 * declares a key once (module-level, immutable) and reads its value through `deps.scope`;
 * the value is made on first use. Tests build several apps in one process, and each app has
 * its own scope, so nothing one app registers or caches reaches another.
 */
export class ScopeKey<T> {
  constructor(
    readonly name: string,
    readonly create: () => T,
  ) {}
}

export class AppScope {
  private readonly values = new Map<ScopeKey<unknown>, unknown>();

  get<T>(key: ScopeKey<T>): T {
    if (!this.values.has(key)) this.values.set(key, key.create());
    return this.values.get(key) as T;
  }
}
