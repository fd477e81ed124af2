/** One line of the report: a figure for every system, and the target it is held to if any. */
export interface ReportRow {
  figure: string;
  turnpike: string;
  floor: string;
  ratio: string;
  /**
   * The `@temporalio/ai-sdk` comparison, where measured: turnpike with its openai provider and
   * ai-sdk, both against the fake OpenAI server, and turnpike / ai-sdk.
   */
  aiSdk?: { turnpike: string; aiSdk: string; ratio: string };
  target: string;
  /** `null`: no target for this figure, or it was not measured at the size the target names. */
  met: boolean | null;
  note?: string;
}
