/** Waits until `check()` holds, reading it every 50 ms; throws after `ms`, naming `what`. */
export async function until(check: () => boolean, what = 'a condition', ms = 60_000): Promise<void> {
  const ends = Date.now() + ms;
  while (!check()) {
    if (Date.now() > ends) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
