// NetworkPolicy validation as upstream's pkg/apis/networking/validation (ValidateNetworkPolicy,
// ValidateNetworkPolicyUpdate) with StrictIPCIDRValidation off, as in 1.33 by default.
import { forbidden, invalid, notSupported, Path, rawValue, required, type FieldError } from '../field.js';
import { arr, isObj, str, validateLabelSelector, validateObjectMeta, validateObjectMetaUpdate, type Obj } from './meta.js';
import { parsePrefixSloppy, prefixContains } from '../netip.js';
import { invalidEach, nameIsDNSSubdomain, portNameErrors, portNumErrors } from './names.js';

const specPath = Path.root('spec');
const protocols = ['TCP', 'UDP', 'SCTP'];
const policyTypes = ['Ingress', 'Egress'];
const cidrMsg = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

/** ValidateNetworkPolicyPort. */
function validatePort(port: unknown, p: Path): FieldError[] {
  const np = isObj(port) ? port : {};
  const errs: FieldError[] = [];
  if (np.protocol != null && !protocols.includes(np.protocol)) errs.push(notSupported(p.child('protocol'), np.protocol, protocols));
  const endPort = np.endPort;
  if (typeof np.port === 'number') {
    errs.push(...invalidEach(p.child('port'), np.port, portNumErrors(np.port)));
    if (endPort != null) {
      if (endPort < np.port) errs.push(invalid(p.child('endPort'), endPort, 'must be greater than or equal to `port`'));
      errs.push(...invalidEach(p.child('endPort'), endPort, portNumErrors(endPort)));
    }
  } else if (typeof np.port === 'string') {
    if (endPort != null) errs.push(invalid(p.child('endPort'), endPort, 'may not be specified when `port` is non-numeric'));
    errs.push(...invalidEach(p.child('port'), np.port, portNameErrors(np.port)));
  } else if (endPort != null) {
    errs.push(invalid(p.child('endPort'), endPort, 'may not be specified when `port` is not specified'));
  }
  return errs;
}

/** ValidateIPBlock; CIDRs the stored object already had are accepted as they are. */
function validateIPBlock(block: Obj, p: Path, existingCIDRs: ReadonlySet<string>): FieldError[] {
  const cidr = str(block.cidr);
  if (cidr === '') return [required(p.child('cidr'), '')];
  const errs: FieldError[] = [];
  const outer = parsePrefixSloppy(cidr);
  if (!outer) {
    if (!existingCIDRs.has(cidr)) errs.push(invalid(p.child('cidr'), cidr, cidrMsg));
    return errs;
  }
  arr(block.except).forEach((except, i) => {
    const ep = p.child('except').index(i);
    const text = str(except);
    const inner = parsePrefixSloppy(text);
    if (!inner) {
      if (!existingCIDRs.has(text)) errs.push(invalid(ep, text, cidrMsg));
      return;
    }
    if (!prefixContains(outer, inner.addr) || outer.bits >= inner.bits) errs.push(invalid(ep, text, 'must be a strict subset of `cidr`'));
  });
  return errs;
}

/** ValidateNetworkPolicyPeer: one of the selectors (or both), or an ipBlock alone. */
function validatePeer(peer: unknown, p: Path, existingCIDRs: ReadonlySet<string>): FieldError[] {
  const np = isObj(peer) ? peer : {};
  const errs: FieldError[] = [];
  let peers = 0;
  if (isObj(np.podSelector)) {
    peers++;
    errs.push(...validateLabelSelector(np.podSelector, p.child('podSelector')));
  }
  if (isObj(np.namespaceSelector)) {
    peers++;
    errs.push(...validateLabelSelector(np.namespaceSelector, p.child('namespaceSelector')));
  }
  if (isObj(np.ipBlock)) {
    peers++;
    errs.push(...validateIPBlock(np.ipBlock, p.child('ipBlock'), existingCIDRs));
  }
  if (peers === 0) errs.push(required(p, 'must specify a peer'));
  else if (peers > 1 && isObj(np.ipBlock)) errs.push(forbidden(p, 'may not specify both ipBlock and another peer'));
  return errs;
}

/** ValidateNetworkPolicySpec. */
function validateSpec(spec: unknown, existingCIDRs: ReadonlySet<string>): FieldError[] {
  const s = isObj(spec) ? spec : {};
  const errs = validateLabelSelector(s.podSelector, specPath.child('podSelector'));
  const rules = (key: 'ingress' | 'egress', peersKey: 'from' | 'to') =>
    arr(s[key]).forEach((rule, i) => {
      const rp = specPath.child(key).index(i);
      arr(rule?.ports).forEach((port, j) => errs.push(...validatePort(port, rp.child('ports').index(j))));
      arr(rule?.[peersKey]).forEach((peer, j) => errs.push(...validatePeer(peer, rp.child(peersKey).index(j), existingCIDRs)));
    });
  rules('ingress', 'from');
  rules('egress', 'to');
  const types = arr(s.policyTypes);
  if (types.length > policyTypes.length) {
    // Go prints the bad value, a *[]networking.PolicyType, with %#v.
    const shown = `[]networking.PolicyType{${types.map((t) => JSON.stringify(str(t))).join(', ')}}`;
    errs.push(invalid(specPath.child('policyTypes'), rawValue(shown), 'may not specify more than two policyTypes'));
    return errs;
  }
  types.forEach((t, i) => {
    if (!policyTypes.includes(t)) errs.push(notSupported(specPath.child('policyTypes').index(i), t, policyTypes));
  });
  return errs;
}

export const validateNetworkPolicy = (np: Obj): FieldError[] => [...validateObjectMeta(np.metadata, true, nameIsDNSSubdomain), ...validateSpec(np.spec, new Set())];

/** Every CIDR of the stored policy's ipBlocks, which an update may keep even when invalid today. */
function ipBlockCIDRs(np: Obj): Set<string> {
  const out = new Set<string>();
  const collect = (rules: unknown, key: string) => {
    for (const rule of arr(rules)) {
      for (const peer of arr(rule?.[key])) {
        if (!isObj(peer?.ipBlock)) continue;
        out.add(str(peer.ipBlock.cidr));
        for (const e of arr(peer.ipBlock.except)) out.add(str(e));
      }
    }
  };
  collect(np.spec?.ingress, 'from');
  collect(np.spec?.egress, 'to');
  return out;
}

/**
 * ValidateNetworkPolicyUpdate: metadata rules, then the spec's with the stored policy's CIDRs
 * accepted as they are (1.33's legacy-CIDR rule; running the create rules too would undo it).
 */
export function validateNetworkPolicyUpdate(np: Obj, old: Obj): FieldError[] {
  return [...validateObjectMetaUpdate(np.metadata, old.metadata), ...validateSpec(np.spec, ipBlockCIDRs(old))];
}
