/**
 * CPU time of DynamoDB Local (the java child of this process), read from /proc, so a phase can
 * report how much of the database's CPU each operation cost. Linux only; elsewhere undefined.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second used by /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

function statOf(pid: string): { ppid: number; comm: string; cpuTicks: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm is in parentheses and may contain spaces: split after the last ')'.
    const close = text.lastIndexOf(')');
    const comm = text.slice(text.indexOf('(') + 1, close);
    const fields = text.slice(close + 2).split(' ');
    // fields[0] is state (field 3); ppid is field 4, utime 14, stime 15.
    return { ppid: Number(fields[1]), comm, cpuTicks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/** Pids of this process's java children (DynamoDB Local). */
export function javaChildren(): string[] {
  try {
    return readdirSync('/proc').filter((p) => {
      if (!/^\d+$/.test(p)) return false;
      const s = statOf(p);
      return s !== undefined && s.ppid === process.pid && s.comm === 'java';
    });
  } catch {
    return [];
  }
}

/** Total CPU ms used so far by the given pids; undefined when /proc cannot be read. */
export function cpuMsOf(pids: readonly string[]): number | undefined {
  if (pids.length === 0) return undefined;
  let ticks = 0;
  for (const pid of pids) {
    const s = statOf(pid);
    if (!s) return undefined;
    ticks += s.cpuTicks;
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}
