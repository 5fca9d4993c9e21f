// The timeline sink that exports pods' steps as OpenTelemetry traces over OTLP/HTTP (--otlp-endpoint).
// The official SDK does the buffering, batching, retries and the OTLP encoding; kite only plans the
// spans (spans.ts) and hands each to a tracer whose ids it dictates: the SDK makes ids itself, so
// the id generator answers with the planned ids for the one span being started. Spans are queued
// and sent by the SDK's batch processor, off the pods' write path; a full queue drops spans rather
// than slowing the API server.
import { ROOT_CONTEXT, TraceFlags, trace, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type IdGenerator, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { PodTimeline, TimelineStep } from '../../../api/timeline/types.js';
import type { Service } from '../../../util/lifecycle.js';
import type { Logger } from '../../../util/log.js';
import type { TimelineSink } from '../sink.js';
import { planSpans, type PlannedSpan, type SpanService } from './spans.js';

export interface OtlpTimelineSinkOptions {
  /** The OTLP/HTTP traces endpoint (http or https), e.g. http://127.0.0.1:4318/v1/traces. */
  endpoint: string;
  logger: Logger;
}

/**
 * How long one export may take, its retries included (the SDK's defaults are 10 and 30 s): the
 * server's stop waits for the last export, also when the collector is down.
 */
const exportTimeoutMs = 5_000;

/**
 * Spans waiting for export (the SDK's default is 2,048): a burst of pods (the scheduling benchmark
 * starts thousands) fills that in a second; past this many, spans are dropped.
 */
const maxQueuedSpans = 20_000;

/** Span ids exported lately, so a step sent twice (a retried batch) is not exported twice. */
const rememberedSpans = 100_000;

/** The OTLP endpoint flag's check: an http(s) URL; the error is one line for the command line. */
export function otlpEndpoint(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`--otlp-endpoint must be an http or https URL, got "${text}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--otlp-endpoint must be an http or https URL, got "${text}"`);
  return url.href;
}

/**
 * Tells the log when exports start failing and when they work again: the SDK reports failures only
 * to its own diagnostics logger, which nothing reads.
 */
class LoggedExporter implements SpanExporter {
  private failing = false;
  constructor(
    private readonly inner: SpanExporter,
    private readonly logger: Logger,
  ) {}

  export(spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]): void {
    this.inner.export(spans, (result) => {
      // A failed export carries its error; a successful one none.
      if (result.error && !this.failing) this.logger.warn({ err: result.error }, 'exporting pod timeline spans over OTLP failed; this batch is lost, later ones are still sent');
      else if (!result.error && this.failing) this.logger.info('exporting pod timeline spans over OTLP works again');
      this.failing = result.error !== undefined;
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** Answers the SDK's id requests with the ids planned for the span being started. */
class PlannedIds implements IdGenerator {
  traceId = '';
  spanId = '';
  generateTraceId(): string {
    return this.traceId;
  }
  generateSpanId(): string {
    return this.spanId;
  }
}

export class OtlpTimelineSink implements TimelineSink, Service {
  readonly name = 'otlp-timeline-exporter';
  private readonly processor: BatchSpanProcessor;
  private readonly ids = new PlannedIds();
  /** One tracer per service (component): the SDK keeps the resource per provider. */
  private readonly tracers = new Map<string, Tracer>();
  private readonly exported = new Set<string>();

  constructor(private readonly opts: OtlpTimelineSinkOptions) {
    const exporter = new LoggedExporter(new OTLPTraceExporter({ url: otlpEndpoint(opts.endpoint), timeoutMillis: exportTimeoutMs }), opts.logger);
    this.processor = new BatchSpanProcessor(exporter, { exportTimeoutMillis: exportTimeoutMs, maxQueueSize: maxQueuedSpans });
  }

  async start(): Promise<void> {}

  stepsRecorded(timeline: PodTimeline, added: readonly TimelineStep[]): void {
    try {
      for (const span of planSpans(timeline, added)) {
        if (this.exported.has(span.spanId)) continue;
        this.remember(span.spanId);
        this.export(span);
      }
    } catch (err) {
      this.opts.logger.warn({ err, pod: timeline.pod.uid }, 'pod timeline not exported over OTLP');
    }
  }

  /** Sends what is queued now; a failed export was logged already (LoggedExporter). */
  async flush(): Promise<void> {
    await this.processor.forceFlush().catch(() => {});
  }

  /** Sends what is queued, within the export timeout; a collector that is down does not fail the server's stop. */
  async stop(): Promise<void> {
    await this.processor.shutdown().catch(() => {});
  }

  private remember(spanId: string): void {
    this.exported.add(spanId);
    if (this.exported.size > rememberedSpans) this.exported.delete(this.exported.values().next().value!);
  }

  private export(planned: PlannedSpan): void {
    this.ids.traceId = planned.traceId;
    this.ids.spanId = planned.spanId;
    const parent = planned.parentSpanId === undefined
      ? ROOT_CONTEXT
      : trace.setSpanContext(ROOT_CONTEXT, { traceId: planned.traceId, spanId: planned.parentSpanId, traceFlags: TraceFlags.SAMPLED, isRemote: false });
    const span = this.tracer(planned.service).startSpan(planned.name, { startTime: planned.start, attributes: planned.attributes, links: planned.links }, parent);
    if (planned.status) span.setStatus(planned.status);
    span.end(planned.end);
  }

  private tracer(service: SpanService): Tracer {
    const key = JSON.stringify(service);
    let tracer = this.tracers.get(key);
    if (!tracer) {
      const provider = new BasicTracerProvider({ resource: defaultResource().merge(resourceFromAttributes({ ...service })), idGenerator: this.ids, spanProcessors: [this.processor] });
      tracer = provider.getTracer('kite-pod-timeline');
      this.tracers.set(key, tracer);
    }
    return tracer;
  }
}
