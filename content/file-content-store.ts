/**
 * A content store in a local folder: `<root>/<first two hex digits>/<key>`. The default for
 * `npm start` and tests (`.turnpike/content`), and fine for one machine or a shared volume.
 * Writes go to a temporary file first and are renamed into place, so a reader never sees half
 * an object and a crash mid-write leaves only a temporary file (the sweep removes stale ones).
 * The errors of reads and writes name the key and the file system's code, not the folder: they
 * reach workflow histories and callers, and the server's file layout is not theirs to know.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { isContentKey, type ContentStore, type StoredObject } from './content-store.js';

const TEMPORARY_SUFFIX = '.partial';

/** A file-system error of `key`, without the path Node's message names; other errors as they are. */
function withoutPath(error: unknown, doing: string, key: string): unknown {
  const { code, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  if (typeof code !== 'string') return error;
  return Object.assign(new Error(`The file content store could not ${doing} sha256:${key}: ${code}${syscall ? ` (${syscall})` : ''}`), { code });
}

export class FileContentStore implements ContentStore {
  readonly description: string;
  readonly kind = 'file';

  constructor(readonly root: string) {
    this.root = path.resolve(root);
    this.description = `file:${this.root}`;
  }

  private pathOf(key: string): string {
    if (!isContentKey(key)) throw new Error(`Not a content key: ${JSON.stringify(key)}`);
    return path.join(this.root, key.slice(0, 2), key);
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const target = this.pathOf(key);
    await this.write(target, bytes).catch((error: unknown) => {
      throw withoutPath(error, 'store', key);
    });
  }

  private async write(target: string, bytes: Uint8Array): Promise<void> {
    const now = new Date();
    try {
      await utimes(target, now, now);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    await mkdir(path.dirname(target), { recursive: true });
    const temporary = `${target}.${randomUUID()}${TEMPORARY_SUFFIX}`;
    const file = await open(temporary, 'w');
    try {
      await file.writeFile(bytes);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, target);
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      return await readFile(this.pathOf(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw withoutPath(error, 'read', key);
    }
  }

  async *list(): AsyncIterable<StoredObject> {
    let folders: string[];
    try {
      folders = await readdir(this.root);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const folder of folders.sort()) {
      const names = await readdir(path.join(this.root, folder)).catch(() => [] as string[]);
      for (const name of names.sort()) {
        if (!isContentKey(name)) continue;
        const info = await stat(path.join(this.root, folder, name)).catch(() => undefined);
        if (info?.isFile()) yield { key: name, bytes: info.size, storedAt: info.mtime };
      }
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true }).catch((error: unknown) => {
      throw withoutPath(error, 'delete', key);
    });
  }

  /** Removes `*.partial` files last written before `olderThan`: writes a crash cut short. */
  async removeStalePartials(olderThan: Date): Promise<number> {
    const folders = await readdir(this.root).catch(() => [] as string[]);
    let removed = 0;
    for (const folder of folders) {
      const names = await readdir(path.join(this.root, folder)).catch(() => [] as string[]);
      for (const name of names.filter((each) => each.endsWith(TEMPORARY_SUFFIX))) {
        const file = path.join(this.root, folder, name);
        const info = await stat(file).catch(() => undefined);
        if (!info?.isFile() || info.mtime >= olderThan) continue;
        await rm(file, { force: true });
        removed += 1;
      }
    }
    return removed;
  }
}
