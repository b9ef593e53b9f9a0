/**
 * fsync of files and folders: what the api answers as stored (a spooled upload or bulk post, a
 * finished export file) must survive a crash of the machine, not only of the process. A new file's
 * folder is synced too, so its entry is on disk as well.
 */
import { open } from 'node:fs/promises';

/** Flushes each path (a file or a folder) to the disk, in order. */
export async function syncToDisk(...paths: string[]): Promise<void> {
  for (const target of paths) {
    const handle = await open(target, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}
