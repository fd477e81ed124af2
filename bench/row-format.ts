/** How the report's rows write figures: milliseconds, ratios, percentile pairs, throughput, bytes. */
import type { ThroughputSide } from './scenarios/throughput.js';
import type { Summary } from './stats.js';

export const ms = (value: number) => `${value.toFixed(1)} ms`;
export const x = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}×` : '—');
export const pair = (summary: Summary) => `${ms(summary.median)} / ${ms(summary.p99)}`;
export const ratioPair = (a: number, b: number) => `${x(a)} / ${x(b)}`;
export const judged = (applies: boolean, met: boolean) => (applies ? met : null);
export const tps = (side: ThroughputSide) => `${side.turnsPerSecond.toFixed(1)} turns/s`;
export const bytes = (value: number) => `${value.toFixed(0)} B`;
