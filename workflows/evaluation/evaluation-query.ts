/** The `evaluationReport` query of an evaluation run: its report so far. */
import { defineQuery } from '@temporalio/workflow';
import type { EvaluationReport } from './evaluation-types.js';

export const evaluationReportQuery = defineQuery<EvaluationReport>('evaluationReport');
