// GET pods/{name}/log, as upstream's LogREST + LogLocation: validate the PodLogOptions, pick the
// container, find the pod's node and its kubelet, and stream the kubelet's
// /containerLogs/{namespace}/{pod}/{container} back as text/plain.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { podLogOptionsFromQuery, podLogOptionsToQuery, validatePodLogOptions } from '../../api/validation/podlogoptions.js';
import { badRequest, invalid, serviceUnavailable } from '../../api/errors.js';
import type { ResourceRequest } from '../handlers/context.js';
import { kubeletEndpoint, type KubeletClient } from './client.js';

const podsLog = { group: '', resource: 'pods/log' };

/** Upstream's ValidateContainer: the named container must exist; none named is fine for a one-container pod. */
export function logContainer(pod: Pod, container: string | undefined): string {
  const spec = pod.spec;
  const name = pod.metadata?.name ?? '';
  const names = (list: { name: string }[] | undefined) => (list ?? []).map((c) => c.name);
  if (container) {
    const all = [...names(spec?.containers), ...names(spec?.initContainers), ...names(spec?.ephemeralContainers)];
    if (!all.includes(container)) throw badRequest(`container ${container} is not valid for pod ${name}`);
    return container;
  }
  const containers = names(spec?.containers);
  if (containers.length === 1) return containers[0]!;
  if (containers.length === 0) throw badRequest(`a container name must be specified for pod ${name}`);
  // Go prints a []string as [a b].
  let msg = `a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]`;
  const init = names(spec?.initContainers);
  if (init.length) msg += ` or one of the init containers: [${init.join(' ')}]`;
  const ephemeral = names(spec?.ephemeralContainers);
  if (ephemeral.length) msg += ` or one of the ephemeral containers: [${ephemeral.join(' ')}]`;
  throw badRequest(msg);
}

export async function servePodLog(r: ResourceRequest, kubelet: KubeletClient): Promise<void> {
  const name = r.info.name;
  let opts;
  try {
    opts = podLogOptionsFromQuery(r.url.searchParams);
  } catch (err) {
    throw badRequest((err as Error).message);
  }
  const errs = validatePodLogOptions(opts);
  if (errs.length) throw invalid('PodLogOptions', '', name, errs);
  const pod = await r.registries.read('pods', r.info.namespace, name);
  const container = logContainer(pod, opts.container);
  const nodeName = pod.spec?.nodeName;
  if (!nodeName) {
    // An unscheduled pod has no log yet: upstream answers with an empty body.
    r.res.writeHead(200, { 'Content-Type': 'text/plain' });
    r.res.end();
    return;
  }
  const node = await r.registries.read('nodes', '', nodeName);
  const endpoint = kubeletEndpoint(node);
  if (!endpoint) throw serviceUnavailable(`no kubelet serves node "${nodeName}": the log subresource needs a kite agent on that node`);

  const abort = new AbortController();
  const onClose = () => abort.abort();
  r.res.once('close', onClose);
  try {
    const ns = encodeURIComponent(r.info.namespace);
    const path = `/containerLogs/${ns}/${encodeURIComponent(name)}/${encodeURIComponent(container)}`;
    const upstream = await kubelet.get(endpoint, path, podLogOptionsToQuery(opts), { resource: podsLog, name }, abort.signal);
    r.res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache, private' });
    r.res.flushHeaders();
    for await (const chunk of upstream as AsyncIterable<Buffer>) {
      if (!r.res.write(chunk)) await new Promise<void>((resolve) => {
        r.res.once('drain', resolve);
        r.res.once('close', resolve);
      });
      if (r.res.destroyed) break;
    }
    r.res.end();
  } catch (err) {
    // The client went away: nothing left to answer.
    if (abort.signal.aborted) return;
    throw err;
  } finally {
    r.res.off('close', onClose);
  }
}
