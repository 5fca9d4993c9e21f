// The CSR approver, as upstream's sarapprove: kubelet client certificates are approved for a node
// joining with a bootstrap token (nodeclient) or renewing its own (selfnodeclient). Upstream asks a
// SubjectAccessReview on certificatesigningrequests/{nodeclient,selfnodeclient}; until kite serves that review
// the rule those reviews grant under kubeadm's bindings is applied directly: system:bootstrappers may
// ask for nodeclient, a node (system:nodes, username = the CN) for selfnodeclient.
//
// Kubelet serving certificates are approved too when a node asks for one for itself with only DNS
// names and IP addresses. Upstream leaves these to an external approver, because the API server
// cannot check that the node really owns the names and addresses it lists (a node could ask for
// another's IP). kite approves them so `kite agent` serves logs and exec with a certificate the API
// server trusts; the risk is bounded by the same rule: the name must be the node's own identity.
import { CSR_APPROVED, CSR_DENIED, KUBE_APISERVER_CLIENT_KUBELET_SIGNER, KUBELET_SERVING_SIGNER, NODES_GROUP, hasCondition, parseCertificateRequest, requestPem } from '../../../api/certificates.js';
import type { CertificateSigningRequest, CertificateSigningRequestCondition } from '../../../api/types.js';
import { BOOTSTRAPPERS_GROUP } from '../../../apiserver/authn/bootstraptoken.js';
import type { Client } from '../../../client/client.js';
import type { SharedInformerFactory } from '../../../client/factory.js';
import type { Clock } from '../../../util/clock.js';
import type { Logger } from '../../../util/log.js';
import { rfc3339 } from '../../../api/time.js';
import { CertificateController, csrClient, type CsrClient } from '../controller.js';
import { kubeletClientRequestError, kubeletServingRequestError } from '../kubelet.js';

export const AUTO_APPROVED_REASON = 'AutoApproved';
export const NODE_CLIENT_MESSAGE = 'Auto approving kubelet client certificate after SubjectAccessReview.';
export const SELF_NODE_CLIENT_MESSAGE = 'Auto approving self kubelet client certificate after SubjectAccessReview.';
export const SELF_NODE_SERVING_MESSAGE = 'Auto approving self kubelet serving certificate: the node asked for its own names and addresses.';

/** The Approved condition's message for a request kite approves, undefined when it leaves the request pending. */
export function approvalMessage(csr: CertificateSigningRequest): string | undefined {
  if (hasCondition(csr, CSR_APPROVED) || hasCondition(csr, CSR_DENIED)) return undefined;
  const spec = csr.spec;
  let req;
  try {
    req = parseCertificateRequest(requestPem(csr));
  } catch {
    return undefined;
  }
  const usages = spec.usages ?? [];
  const groups = spec.groups ?? [];
  const self = spec.username === req.commonName && groups.includes(NODES_GROUP);
  if (spec.signerName === KUBE_APISERVER_CLIENT_KUBELET_SIGNER && !kubeletClientRequestError(req, usages)) {
    if (self) return SELF_NODE_CLIENT_MESSAGE;
    if (groups.includes(BOOTSTRAPPERS_GROUP)) return NODE_CLIENT_MESSAGE;
    return undefined;
  }
  if (spec.signerName === KUBELET_SERVING_SIGNER && !kubeletServingRequestError(req, usages) && self) return SELF_NODE_SERVING_MESSAGE;
  return undefined;
}

export interface CsrApproverOptions {
  client: Client;
  informers: SharedInformerFactory;
  clock: Clock;
  logger: Logger;
}

export class CsrApprover {
  private readonly csrs: CsrClient;
  private readonly controller: CertificateController;

  constructor(private readonly opts: CsrApproverOptions) {
    this.csrs = csrClient(opts.client);
    this.controller = new CertificateController({ name: 'csrapproving', informers: opts.informers, clock: opts.clock, logger: opts.logger, handler: (csr) => this.handle(csr) });
  }

  start(): void {
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  async handle(csr: CertificateSigningRequest): Promise<void> {
    const message = approvalMessage(csr);
    if (!message) return;
    const now = rfc3339(this.opts.clock.now());
    const condition: CertificateSigningRequestCondition = { type: CSR_APPROVED, status: 'True', reason: AUTO_APPROVED_REASON, message, lastUpdateTime: now };
    const approved = { ...csr, status: { ...csr.status, conditions: [...(csr.status?.conditions ?? []), condition] } };
    await this.csrs.subresource('PUT', csr.metadata!.name!, 'approval', approved);
    this.opts.logger.info({ csr: csr.metadata!.name, requestor: csr.spec.username }, message);
  }
}
