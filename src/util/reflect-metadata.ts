// The few Reflect metadata calls tsyringe (a dependency of @peculiar/x509) makes, so the library loads
// without a polyfill package. Import this module before '@peculiar/x509': ES modules evaluate in order.
type Metadata = Map<unknown, unknown>;
const store = new WeakMap<object, Metadata>();

function own(target: object): Metadata | undefined {
  return store.get(target);
}

const reflect = Reflect as unknown as Record<string, unknown>;
if (typeof reflect.getMetadata !== 'function') {
  reflect.defineMetadata = (key: unknown, value: unknown, target: object) => {
    let m = own(target);
    if (!m) store.set(target, (m = new Map()));
    m.set(key, value);
  };
  reflect.getOwnMetadata = (key: unknown, target: object) => own(target)?.get(key);
  reflect.getMetadata = (key: unknown, target: object) => {
    for (let t: object | null = target; t; t = Object.getPrototypeOf(t) as object | null) {
      const m = own(t);
      if (m?.has(key)) return m.get(key);
    }
    return undefined;
  };
}
