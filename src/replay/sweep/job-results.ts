/**
 * The end of many BullMQ jobs, awaited with one listener per event for all of them. BullMQ's
 * `job.waitUntilFinished` adds a `closing` listener to the queue per job, so a sweep of more
 * than ten cells printed `MaxListenersExceededWarning`; here the waiters sit in a map keyed by
 * job id, and each job's state is read once after its waiter is in place (a job that finished
 * before, or in an earlier sweep, is not waited for in vain).
 */
import { Job, type Queue, type QueueEvents } from 'bullmq';
import { systemClock } from '../../core/clock.ts';

interface Waiter {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
}

export class JobResults {
  private readonly waiters = new Map<string, Waiter>();
  private readonly onCompleted = (args: { jobId: string; returnvalue: unknown }) => {
    this.settle(args.jobId, (waiter) => waiter.resolve(args.returnvalue));
  };
  private readonly onFailed = (args: { jobId: string; failedReason: string }) => {
    this.settle(args.jobId, (waiter) => waiter.reject(new Error(args.failedReason)));
  };

  constructor(
    private readonly queue: Queue,
    private readonly events: QueueEvents,
  ) {
    events.on('completed', this.onCompleted);
    events.on('failed', this.onFailed);
  }

  /** The job's return value, or its failure; rejects after `timeoutMs` without an end. */
  async wait(jobId: string, name: string, timeoutMs: number): Promise<unknown> {
    const result = new Promise<unknown>((resolve, reject) => {
      const timer = systemClock.setTimeout(() => {
        this.settle(jobId, (waiter) =>
          waiter.reject(
            new Error(`job ${name} (id=${jobId}) did not finish within ${timeoutMs} ms`),
          ),
        );
      }, timeoutMs);
      this.waiters.set(jobId, {
        resolve: (value) => {
          systemClock.clearTimeout(timer);
          resolve(value);
        },
        reject: (error) => {
          systemClock.clearTimeout(timer);
          reject(error);
        },
      });
    });
    await this.events.waitUntilReady();
    // The state first, then the job: a job read first could finish before its state is read,
    // and its return value would then be the null it had while it ran.
    const state = await this.queue.getJobState(jobId);
    const job =
      state === 'completed' || state === 'failed' ? await Job.fromId(this.queue, jobId) : undefined;
    if (state === 'completed') {
      this.settle(jobId, (waiter) => waiter.resolve(job?.returnvalue));
    } else if (state === 'failed') {
      this.settle(jobId, (waiter) => waiter.reject(new Error(job?.failedReason ?? 'failed')));
    }
    return result;
  }

  /** Stops listening; jobs still waited for fail. */
  close(): void {
    this.events.off('completed', this.onCompleted);
    this.events.off('failed', this.onFailed);
    for (const jobId of [...this.waiters.keys()]) {
      this.settle(jobId, (waiter) => waiter.reject(new Error('the sweep was closed')));
    }
  }

  private settle(jobId: string, end: (waiter: Waiter) => void): void {
    const waiter = this.waiters.get(jobId);
    if (waiter === undefined) return;
    this.waiters.delete(jobId);
    end(waiter);
  }
}
