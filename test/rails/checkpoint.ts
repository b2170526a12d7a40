/** The worker's side of a rail call, in memory: what it saved, and a way to crash right after saving. */
import type { RailCheckpoint, RailState } from '../../functions/rails/rail';

export class MemoryCheckpoint implements RailCheckpoint {
  readonly saves: RailState[] = [];

  constructor(
    public saved: RailState | undefined = undefined,
    private readonly crashAfterSave = false,
  ) {}

  async save(state: RailState): Promise<void> {
    this.saved = state;
    this.saves.push(state);
    // The state is durable; the process dies before the rail takes its next step.
    if (this.crashAfterSave) throw new Error('simulated crash right after the checkpoint was saved');
  }

  /** What SQS redelivery hands the next attempt: whatever the previous one managed to save. */
  redeliver(): MemoryCheckpoint {
    return new MemoryCheckpoint(this.saved);
  }
}
